import { describe, expect, it } from 'vitest';
import { SlotRing } from '../../../../src/pipeline/overlap/slot-ring.js';

/** A fence the test completes by hand, standing in for a CUDA event. */
class FakeFence {
  done = false;
  released = 0;
  constructor(readonly name: string) {}
}

function ring(count = 3): { ring: SlotRing<FakeFence>; fence: (name: string) => FakeFence } {
  const r = new SlotRing<FakeFence>(count, { isDone: (f) => f.done, release: (f) => void f.released++ });
  return { ring: r, fence: (name) => new FakeFence(name) };
}

describe('SlotRing (TripleBuffer state machine)', () => {
  it('cycles free -> uploading -> processing -> downloading -> free, one stage per commit', () => {
    const { ring: r, fence } = ring();
    expect(r.states()).toEqual(['free', 'free', 'free']);
    const s = r.takeForUpload();
    expect(s).toBe(0);
    expect(r.state(0)).toBe('uploading');
    expect(r.step(0)).toBe(0);

    // Nothing moves on before its stage is committed.
    expect(r.takeNext('processing')).toBe(-1);
    const up = fence('up');
    r.commit(0, up);
    expect(() => r.commit(0, fence('again'))).toThrow(/already committed/);

    // Without a consumer stream the move waits for the fence to complete.
    expect(r.takeNext('processing')).toBe(-1);
    up.done = true;
    expect(r.takeNext('processing')).toBe(0);
    expect(up.released).toBe(1);
    expect(r.state(0)).toBe('processing');

    const compute = fence('compute');
    r.commit(0, compute);
    const waited: FakeFence[] = [];
    // With a consumer, the move is ordered on the GPU: the consumer waits, the host does not.
    expect(r.takeNext('downloading', (f) => waited.push(f))).toBe(0);
    expect(waited).toEqual([compute]);
    expect(compute.released).toBe(1);

    const down = fence('down');
    r.commit(0, down);
    expect(r.advance()).toBe(0);
    expect(r.state(0)).toBe('downloading');
    down.done = true;
    expect(r.advance()).toBe(1);
    expect(r.state(0)).toBe('free');
    expect(down.released).toBe(1);
  });

  it('hands out at most three slots, in rotation, and a slot returns only once its download completed', () => {
    const { ring: r, fence } = ring();
    expect([r.takeForUpload(), r.takeForUpload(), r.takeForUpload()]).toEqual([0, 1, 2]);
    expect(r.takeForUpload()).toBe(-1);
    const downs: FakeFence[] = [];
    for (let i = 0; i < 3; i++) {
      r.commit(i, fence(`up${i}`));
      expect(r.takeNext('processing', () => undefined)).toBe(i);
      r.commit(i, fence(`c${i}`));
      expect(r.takeNext('downloading', () => undefined)).toBe(i);
      const d = fence(`d${i}`);
      downs.push(d);
      r.commit(i, d);
    }
    expect(r.states()).toEqual(['downloading', 'downloading', 'downloading']);
    // The GPU still reads slot 1: release() refuses, advance() skips it.
    expect(() => r.release(1)).toThrow(/not completed/);
    downs[1]!.done = true;
    r.release(1);
    expect(r.states()).toEqual(['downloading', 'free', 'downloading']);
    expect(r.takeForUpload()).toBe(1);
    expect(r.step(1)).toBe(3);
    expect(r.takeForUpload()).toBe(-1);
  });

  it('moves slots oldest step first: a younger committed slot never overtakes an older uncommitted one', () => {
    const { ring: r, fence } = ring();
    const a = r.takeForUpload();
    const b = r.takeForUpload();
    const fb = fence('b');
    fb.done = true;
    r.commit(b, fb);
    expect(r.takeNext('processing')).toBe(-1);
    const fa = fence('a');
    r.commit(a, fa);
    fa.done = true;
    expect(r.takeNext('processing')).toBe(a);
    expect(r.takeNext('processing')).toBe(b);
  });

  it('refuses moves that skip a stage or commit a free slot', () => {
    const { ring: r, fence } = ring();
    expect(() => r.commit(0, fence('x'))).toThrow(/free/);
    expect(r.takeNext('downloading')).toBe(-1);
    const s = r.takeForUpload();
    r.commit(s, fence('up'));
    expect(r.takeNext('downloading', () => undefined)).toBe(-1);
    expect(() => r.release(s)).toThrow(/only a committed download/);
    expect(() => r.state(7)).toThrow(RangeError);
    expect(() => new SlotRing(0, { isDone: () => true, release: () => undefined })).toThrow(RangeError);
  });

  it('keeps an abandoned slot out of use until its outstanding work completes', () => {
    const { ring: r, fence } = ring(2);
    const s = r.takeForUpload();
    const up = fence('up');
    r.commit(s, up);
    const drain = fence('drain');
    r.abandon(s, [drain]);
    expect(r.state(s)).toBe('free');
    // Slot 1 is idle, so it goes out first; slot 0 waits for both fences.
    expect(r.takeForUpload()).toBe(1);
    expect(r.takeForUpload()).toBe(-1);
    drain.done = true;
    expect(r.takeForUpload()).toBe(-1);
    up.done = true;
    expect(r.takeForUpload()).toBe(s);
    expect(up.released + drain.released).toBe(2);
  });

  it('one slot serializes steps: the next upload waits for the previous download', () => {
    const { ring: r, fence } = ring(1);
    expect(r.takeForUpload()).toBe(0);
    r.commit(0, fence('u'));
    r.takeNext('processing', () => undefined);
    r.commit(0, fence('c'));
    r.takeNext('downloading', () => undefined);
    const d = fence('d');
    r.commit(0, d);
    expect(r.takeForUpload()).toBe(-1);
    d.done = true;
    r.release(0);
    expect(r.takeForUpload()).toBe(0);
  });

  it('hands every fence back on clear()', () => {
    const { ring: r, fence } = ring();
    const s = r.takeForUpload();
    const f = fence('u');
    r.commit(s, f);
    const g = fence('g');
    r.abandon(r.takeForUpload(), [g]);
    r.clear();
    expect(f.released).toBe(1);
    expect(g.released).toBe(1);
    expect(r.states()).toEqual(['free', 'free', 'free']);
  });
});
