import { describe, expect, it } from 'vitest';
import '../../../../src/runtime/index.js'; // the runtime entry point: Device registered, as the engine loads it
import { ComputeGraphs, type CaptureWork, type StreamMarker } from '../../../../src/pipeline/lanes/compute-graphs.js';
import type { Stream } from '../../../../src/runtime/stream.js';

/** A stand-in stream: ComputeGraphs only reads its context's sticky error. */
interface FakeStream {
  context: { stickyError: Error | undefined };
  label: string;
}
function fakeStream(): FakeStream {
  return { context: { stickyError: undefined }, label: 'fake' };
}

/** Records what happened: captures (running the work once, as stream capture does), launches, disposals. */
function harness(options: { failCapture?: (key: string) => boolean; maxGraphs?: number } = {}) {
  const log: string[] = [];
  let current = '';
  const markers: { done: boolean; disposed: boolean }[] = [];
  const capture: CaptureWork = (_stream, enqueue, label) => {
    if (options.failCapture?.(current)) {
      enqueue();
      log.push(`capture failed ${current}`);
      throw new Error('operation not permitted when stream is capturing');
    }
    log.push(`capture ${current}`);
    enqueue();
    const key = current;
    return {
      launch: () => log.push(`launch ${key}`),
      dispose: () => log.push(`dispose ${key} (${label})`),
    };
  };
  const mark = (): StreamMarker => {
    const m = { done: false, disposed: false };
    markers.push(m);
    return {
      get done() {
        return m.done;
      },
      dispose: () => {
        m.disposed = true;
      },
    };
  };
  const stream = fakeStream();
  const graphs = new ComputeGraphs(stream as unknown as Stream, 'lane 0', {
    capture,
    mark,
    maxGraphs: options.maxGraphs,
  });
  const run = (key: string, generation = 1): string => {
    current = key;
    let enqueued = 0;
    const mode = graphs.run(key, generation, () => {
      enqueued++;
      log.push(`enqueue ${key}`);
    });
    return `${mode}/${enqueued}`;
  };
  return { graphs, run, log, markers, stream };
}

describe('ComputeGraphs (a lane captures a job shape the second time and replays it after)', () => {
  it('runs a key as it is first, captures it the second time, replays it from then on', () => {
    const h = harness();
    expect(h.run('a')).toBe('eager/1');
    expect(h.run('a')).toBe('captured/1');
    expect(h.run('a')).toBe('replayed/0');
    expect(h.run('a')).toBe('replayed/0');
    expect(h.log).toEqual(['enqueue a', 'capture a', 'enqueue a', 'launch a', 'launch a', 'launch a']);
    expect(h.graphs.counts).toEqual({ eager: 1, captured: 1, replayed: 2 });
    expect(h.graphs.size).toBe(1);
  });

  it('keeps keys apart: another shape is run as it is until it repeats', () => {
    const h = harness();
    h.run('a');
    h.run('a');
    expect(h.run('b')).toBe('eager/1');
    expect(h.run('a')).toBe('replayed/0');
    expect(h.run('b')).toBe('captured/1');
    expect(h.graphs.size).toBe(2);
  });

  it('retires every graph when the generation changes, and destroys them once the stream has passed them', () => {
    const h = harness();
    h.run('a');
    h.run('a');
    expect(h.run('a', 2)).toBe('eager/1');
    expect(h.graphs.size).toBe(0);
    expect(h.markers).toHaveLength(1);
    expect(h.log.filter((l) => l.startsWith('dispose'))).toEqual([]);
    // Not yet passed: kept.
    h.run('a', 2);
    expect(h.log.filter((l) => l.startsWith('dispose'))).toEqual([]);
    h.markers[0]!.done = true;
    expect(h.run('a', 2)).toBe('replayed/0');
    expect(h.log.filter((l) => l.startsWith('dispose'))).toEqual(['dispose a (lane 0 compute graph 0)']);
    expect(h.markers[0]!.disposed).toBe(true);
  });

  it('runs the work as it is when a capture fails, and never tries that key again', () => {
    const h = harness({ failCapture: (k) => k === 'bad' });
    expect(h.run('bad')).toBe('eager/1');
    // The failed capture's enqueue ran under capture (nothing reached the GPU), so it runs again.
    expect(h.run('bad')).toBe('eager/2');
    expect(h.run('bad')).toBe('eager/1');
    expect(h.log.filter((l) => l.startsWith('capture'))).toEqual(['capture failed bad']);
  });

  it('rethrows a capture failure when the context is lost', () => {
    const h = harness({ failCapture: () => true });
    h.run('a');
    h.stream.context.stickyError = new Error('context lost');
    expect(() => h.run('a')).toThrow(/operation not permitted/);
  });

  it('holds at most maxGraphs; further keys run as they are', () => {
    const h = harness({ maxGraphs: 2 });
    for (const k of ['a', 'a', 'b', 'b', 'c', 'c', 'c']) h.run(k);
    expect(h.graphs.size).toBe(2);
    expect(h.run('c')).toBe('eager/1');
    expect(h.run('a')).toBe('replayed/0');
  });

  it('dispose() destroys kept and retired graphs and the markers', () => {
    const h = harness();
    h.run('a');
    h.run('a');
    h.run('b', 2);
    h.run('b', 2);
    h.graphs.dispose();
    expect(h.log.filter((l) => l.startsWith('dispose')).sort()).toEqual([
      'dispose a (lane 0 compute graph 0)',
      'dispose b (lane 0 compute graph 0)',
    ]);
    expect(h.markers.every((m) => m.disposed)).toBe(true);
  });
});
