import { beforeAll, describe, expect, it } from 'vitest';
import { TripleBuffer } from '../../../src/pipeline/overlap/triple-buffer.js';
import { loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';

describe.skipIf(!gpu.available)(`TripleBuffer on the GPU${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let k!: BasicKernels;
  beforeAll(() => {
    k = loadBasicKernels();
  });

  it('never hands out a slot the GPU still uses, and orders each stage after the previous one', async () => {
    const n = 1 << 16;
    using tb = TripleBuffer.alloc('f32', n, { label: 'tb' });
    using up = new Stream({ label: 'tb upload' });
    using compute = new Stream({ label: 'tb compute' });
    using down = new Stream({ label: 'tb download' });
    expect(tb.states()).toEqual(['free', 'free', 'free']);

    const s0 = tb.uploadSlot()!;
    const s1 = tb.uploadSlot()!;
    const s2 = tb.uploadSlot()!;
    expect([s0.index, s1.index, s2.index]).toEqual([0, 1, 2]);
    expect(tb.uploadSlot()).toBeNull();

    const x = randomF32(n);
    s0.data.host.array.set(x);
    // A long kernel ahead of the upload: every later stage must wait for it on the GPU.
    k.spin_ns({ grid: 1, block: 1, stream: up }, 30_000_000n);
    s0.data.device.write(s0.data.host, { stream: up });
    tb.commit(s0, up);
    expect(tb.processSlot()).toBeNull(); // the upload has not completed: not to the host
    expect(tb.processSlot(compute)).toBe(s0); // to a stream, ordered by the upload's event
    expect(s0.state).toBe('processing');
    // y = 2y in place (saxpy with x = y): wrong if it ran before the upload.
    k.saxpy_f32({ grid: 64, block: 256, stream: compute }, n, 1, s0.data.device, s0.data.device);
    tb.commit(s0, compute);
    expect(tb.downloadSlot(down)).toBe(s0);
    // The slot's host buffer still feeds the queued upload, so it cannot be poisoned here; it holds x, never 2x.
    s0.data.device.read(s0.data.host, { stream: down });
    tb.commit(s0, down);

    // The download is queued behind 30 ms of spinning: the slot stays out of reach.
    expect(tb.advance()).toBe(0);
    expect(tb.states()).toEqual(['downloading', 'uploading', 'uploading']);
    expect(tb.uploadSlot()).toBeNull();
    expect(() => tb.release(s0)).toThrow(/not completed/);
    expect(tb.processSlot(compute)).toBeNull(); // s1 was never committed

    await tb.completion(s0);
    const got = s0.data.host.array;
    for (let i = 0; i < n; i++) {
      if (got[i] !== 2 * x[i]!) throw new Error(`element ${i}: got ${got[i]}, want ${2 * x[i]!}`);
    }
    expect(tb.advance()).toBe(1);
    expect(tb.states()).toEqual(['free', 'uploading', 'uploading']);
    const again = tb.uploadSlot();
    expect(again).toBe(s0);
    expect(again!.step).toBe(3);
  });

  it('keeps an abandoned slot out of use until the streams it touched are idle', async () => {
    using tb = TripleBuffer.alloc('f32', 256, { slots: 1, label: 'tb1' });
    using s = new Stream({ label: 'abandon' });
    const slot = tb.uploadSlot()!;
    k.spin_ns({ grid: 1, block: 1, stream: s }, 20_000_000n);
    slot.data.device.write(slot.data.host, { stream: s });
    tb.abandon(slot, [s]);
    expect(tb.states()).toEqual(['free']);
    expect(tb.uploadSlot()).toBeNull();
    await s.done();
    expect(tb.uploadSlot()).toBe(slot);
  });
});
