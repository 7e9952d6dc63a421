/**
 * The lane primitive on the GPU (src/pipeline/lanes): pieces of work in flight on its slots give
 * the answers they give alone, each slot's stages ordered by its events only (a long spin ahead of
 * an upload, or ahead of a compute, would let a stage that did not wait read stale memory), the
 * slot rules of runInSlot, the drain after a failure, the copy back straight into lent pinned
 * memory or through staging, and disposal settling every waiter.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Lane, LaneBusyError, type LaneSlot } from '../../../src/pipeline/index.js';
import { CopyBack } from '../../../src/pipeline/lanes/copy-back.js';
import { Event } from '../../../src/runtime/event.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import { loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { poison, randomF32 } from '../helpers.js';

const A = -1.75;
/** The constant piece `i` adds, so that a result of another piece (or a stale one) is caught. */
const offset = (i: number): number => 0.5 * i + 3;

/** Checks `got` against A * x + offset(i), computed in float64. */
function expectAxpy(got: Float32Array, x: Float32Array, i: number): void {
  for (let j = 0; j < x.length; j++) {
    const want = A * x[j]! + offset(i);
    if (!(Math.abs(got[j]! - want) <= 1e-5 * Math.max(1, Math.abs(want))))
      throw new Error(`piece ${i} element ${j}: got ${got[j]}, want ${want}`);
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe.skipIf(!gpu.available)(`Lane on the GPU${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let k!: BasicKernels;
  beforeAll(() => {
    k = loadBasicKernels();
  });

  /**
   * Piece `i` in `slot`: uploads x, computes A * x + offset(i), downloads it into the slot's
   * (poisoned) staging. A spin ahead of the upload and one ahead of the compute: a compute that did
   * not wait for the upload reads the slot's previous input, a download that did not wait for the
   * compute the slot's previous result.
   */
  async function axpy(lane: Lane, slot: LaneSlot, x: Float32Array, i: number): Promise<Float32Array> {
    const n = x.length;
    const { copyIn, copyOut } = lane.copies;
    const input = lane.buffers.host('x', 'f32', n, slot.index);
    const output = lane.buffers.host('y', 'f32', n, slot.index);
    const dx = lane.buffers.device('x', 'f32', n, { slot: slot.index });
    const dy = lane.buffers.device('y', 'f32', n, { slot: slot.index });
    input.array.set(x);
    poison(output.array);
    k.spin_ns({ grid: 1, block: 1, stream: copyIn }, 3_000_000n);
    dx.write(input, { stream: copyIn });
    lane.uploaded(slot);
    k.spin_ns({ grid: 1, block: 1, stream: lane.stream }, 3_000_000n);
    k.fill_f32({ grid: 256, block: 256, stream: lane.stream }, dy, offset(i), n);
    k.saxpy_f32({ grid: 256, block: 256, stream: lane.stream }, n, A, dx, dy);
    lane.computed(slot);
    dy.read(output, { stream: copyOut });
    await lane.finished(slot);
    return output.array.slice(0, n);
  }

  it('runs pieces of work on its slots at once, each giving its own answer on fresh random data', async () => {
    const n = (1 << 18) + 3;
    using lane = new Lane({ slots: 3, label: 'lane axpy' });
    expect(lane.depth).toBe(3);
    expect(new Set([lane.stream, lane.copies.copyIn, lane.copies.copyOut]).size).toBe(3);
    const xs = Array.from({ length: 10 }, () => randomF32(n));
    let most = 0;
    const results = await Promise.all(
      xs.map(async (x, i) => {
        const slot = await lane.acquire();
        most = Math.max(most, lane.busy);
        try {
          return await axpy(lane, slot, x, i);
        } finally {
          lane.release(slot);
        }
      }),
    );
    expect(most).toBe(3);
    expect(lane.busy).toBe(0);
    results.forEach((got, i) => expectAxpy(got, xs[i]!, i));
  });

  it('a serial lane (one stream for everything) gives the same answers', async () => {
    const n = 4099;
    using stream = new Stream({ label: 'lane serial stream' });
    using serial = new Lane({ slots: 2, stream, copies: { copyIn: stream, copyOut: stream }, label: 'lane serial' });
    const run = async (x: Float32Array, i: number): Promise<Float32Array> => {
      const slot = await serial.acquire();
      try {
        return await axpy(serial, slot, x, i);
      } finally {
        serial.release(slot);
      }
    };
    const xs = Array.from({ length: 4 }, () => randomF32(n));
    const results = await Promise.all(xs.map(run));
    results.forEach((got, i) => expectAxpy(got, xs[i]!, i));
  });

  it('runInSlot refuses work without a slot (LaneBusyError), gives exclusive work the lane alone, and gives slots back', async () => {
    using lane = new Lane({ slots: 2, label: 'lane rules' });
    const gate = deferred();
    const held = (w: string): Promise<string> => gate.promise.then(() => w);
    const first = lane.runInSlot('first', held);
    const exclusive = lane.runInSlot('alone', held, true);
    await expect(exclusive).rejects.toBeInstanceOf(LaneBusyError);
    await expect(exclusive).rejects.toThrow(/1 of its 2 slots taken and needs the lane alone/);
    const second = lane.runInSlot('second', held);
    await expect(lane.runInSlot('third', held)).rejects.toThrow(/2 of its 2 slots taken;/);
    expect(lane.busy).toBe(2);
    gate.resolve();
    expect(await Promise.all([first, second])).toEqual(['first', 'second']);
    expect(lane.busy).toBe(0);
    const alone = lane.runInSlot(
      'alone',
      async (w) => {
        // Nothing else gets a slot beside exclusive work.
        await expect(lane.runInSlot('beside', held)).rejects.toBeInstanceOf(LaneBusyError);
        return w;
      },
      true,
    );
    expect(await alone).toBe('alone');
  });

  it('after a failure, lets the streams run out before the slot goes back, and the lane goes on', async () => {
    const n = 1024;
    using lane = new Lane({ slots: 1, label: 'lane failure' });
    using marker = new Event({ context: lane.context, label: 'after the spin' });
    const failed = lane.runInSlot(null, async () => {
      k.spin_ns({ grid: 1, block: 1, stream: lane.copies.copyOut }, 30_000_000n);
      marker.record(lane.copies.copyOut);
      throw new Error('stage refused');
    });
    await expect(failed).rejects.toThrow('stage refused');
    // The rejection came once the copy-out stream had passed the spin.
    expect(marker.query()).toBe(true);
    expect(lane.busy).toBe(0);
    const x = randomF32(n);
    expectAxpy(await lane.runInSlot(x, (w, slot) => axpy(lane, slot, w, 7)), x, 7);
  });

  it('copies back straight into a lent pinned array and through the slot staging otherwise', async () => {
    const n = 50_000;
    using lent = HostBuffer.alloc('f32', 2 * n, { label: 'lent' });
    using lane = new Lane({ slots: 1, pinned: new Map([[lent.array.buffer, lent]]), label: 'lane copy back' });
    const x = randomF32(n);
    using d = DeviceBuffer.from('f32', x);
    const plain = poison(new Float32Array(n + 5));
    const view = poison(lent.array.subarray(n, 2 * n));
    const bytes = await lane.runInSlot(null, async (_, slot) => {
      const back = new CopyBack(lane, slot.index);
      back.fetch(d, view, 0, n, 'lent');
      back.fetch(d, plain, 5, n, 'staged');
      lane.computed(slot);
      back.enqueue();
      await lane.finished(slot);
      await back.finish();
      return back.bytes;
    });
    expect(bytes).toBe(2 * n * 4);
    for (let i = 0; i < n; i++) {
      if (view[i] !== x[i]) throw new Error(`lent element ${i}: got ${view[i]}, want ${x[i]}`);
      if (plain[5 + i] !== x[i]) throw new Error(`staged element ${i}: got ${plain[5 + i]}, want ${x[i]}`);
    }
    // Only the plain array went through staging: one pinned buffer of n floats.
    expect(lane.buffers.hostBytes).toBe(n * 4);
  });

  it('disposal refuses the work waiting for a slot (DisposedError) and every later acquire', async () => {
    const lane = new Lane({ slots: 1, label: 'lane dispose' });
    const slot = lane.tryAcquire()!;
    expect(lane.tryAcquire()).toBeUndefined();
    const waiting = lane.acquire();
    lane.release(slot);
    expect(await waiting).toBe(slot);
    const refused = lane.acquire();
    lane.dispose();
    await expect(refused).rejects.toBeInstanceOf(DisposedError);
    await expect(lane.acquire()).rejects.toBeInstanceOf(DisposedError);
    expect(() => lane.tryAcquire()).toThrow(DisposedError);
    await lane.drain();
  });
});
