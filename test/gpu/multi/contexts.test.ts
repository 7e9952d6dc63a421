/**
 * Issue 23: work on the second GPU must report its completion whichever context the thread has
 * current, and every CUDA object made for a device must live in that device's context, whatever
 * was current when it was made. Every wait is bounded (`within`): a regression is a red test with a
 * reason, never a suite that stops.
 */
import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { driver } from '../../../src/ffi/api.js';
import type { Context } from '../../../src/runtime/context.js';
import { Device } from '../../../src/runtime/device.js';
import { Event } from '../../../src/runtime/event.js';
import '../../../src/runtime/index.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { MemoryPool } from '../../../src/runtime/memory/memory-pool.js';
import { Stream } from '../../../src/runtime/stream.js';
import { loadBasicKernels } from '../../kernels/launchers.generated.js';
import { expectSameValues, within } from '../exact.js';
import { randomF32 } from '../helpers.js';
import { titled, twoGpus } from './multi-available.js';

/** The context the driver has current on this thread (not tscuda's record of it). */
function driverCurrent(): bigint {
  const cell: [unknown] = [null];
  expect(driver().cuCtxGetCurrent(cell as never)).toBe(0);
  return cell[0] === null ? 0n : BigInt(koffi.address(cell[0]));
}

function handleOf(context: Context): bigint {
  return BigInt(koffi.address(context.handle));
}

/** The context the driver says `stream` belongs to (cuStreamGetCtx). */
function contextOfStream(stream: Stream): bigint {
  const cell: [unknown] = [null];
  expect(driver().cuStreamGetCtx(stream.handle, cell as never)).toBe(0);
  return BigInt(koffi.address(cell[0]));
}

describe.skipIf(!twoGpus.ok)(titled('two contexts in one thread: placement and completion', twoGpus), () => {
  it('makeCurrent() makes the driver current (cuCtxGetCurrent), and a stream made while the other device is current lives in its own device', () => {
    const [c0, c1] = [Device.get(0).context, Device.get(1).context];
    c0.makeCurrent();
    expect(driverCurrent()).toBe(handleOf(c0));
    c1.makeCurrent();
    expect(driverCurrent()).toBe(handleOf(c1));
    for (const [mine, other] of [
      [c0, c1],
      [c1, c0],
    ] as const) {
      other.makeCurrent();
      using s = new Stream({ device: mine.device });
      expect(s.context).toBe(mine);
      expect(contextOfStream(s)).toBe(handleOf(mine));
      other.makeCurrent();
      using pool = new MemoryPool({ device: mine.device });
      expect(pool.context).toBe(mine);
    }
  }, 30_000);

  it("device 1's stream.done(), event.done(), query() and synchronize() settle while device 0's context is current", async () => {
    const [c0, c1] = [Device.get(0).context, Device.get(1).context];
    const k1 = loadBasicKernels({ context: c1 });
    using s1 = new Stream({ device: 1, label: 'device 1 work' });
    using e1 = new Event({ device: 1, label: 'device 1 event' });
    // 20 ms of device-1 work, so the waits below really poll.
    k1.spin_ns({ grid: 1, block: 1, stream: s1 }, 20_000_000n);
    const streamDone = s1.done();
    e1.record(s1);
    const eventDone = e1.done();
    c0.makeCurrent(); // the poller's ticks now run with device 0 current
    expect(driverCurrent()).toBe(handleOf(c0));
    await within(Promise.all([streamDone, eventDone]), 10_000, "device 1's completions polled with device 0 current");
    c0.makeCurrent();
    expect(e1.query()).toBe(true);
    k1.spin_ns({ grid: 1, block: 1, stream: s1 }, 5_000_000n);
    e1.record(s1);
    c0.makeCurrent();
    e1.synchronize();
    expect(e1.query()).toBe(true);
    expect(c1.completion.pending).toBe(0);
    expect(c0.completion.pending).toBe(0);
  }, 30_000);

  it("a buffer of device 1 disposed while device 0's context is current is freed (cuMemFree in its own context)", () => {
    const [c0, c1] = [Device.get(0).context, Device.get(1).context];
    const bytes = 1 << 30;
    const big = DeviceBuffer.alloc('u8', bytes, { device: 1 });
    const held = c1.memoryInfo().freeBytes;
    c0.makeCurrent();
    big.dispose();
    expect(c1.memoryInfo().freeBytes - held).toBeGreaterThan(0.9 * bytes);
  }, 30_000);

  it('interleaved work on both devices, awaited in a mixed order, all settles with exact data on each', async () => {
    const n = 1 << 20;
    const streams = [0, 1].flatMap((d) =>
      [0, 1].map((i) => new Stream({ device: d, label: `device ${d} stream ${i}` })),
    );
    try {
      const hosts = streams.map(() => randomF32(n));
      const outs = streams.map(() => new Float32Array(n).fill(Number.NaN));
      const buffers = streams.map((s) => DeviceBuffer.alloc('f32', n, { stream: s }));
      const waits: Promise<void>[] = [];
      for (let round = 0; round < 25; round++) {
        for (const [i, s] of streams.entries()) {
          buffers[i]!.write(hosts[i]!, { stream: s });
          // The other device's context is current when each wait is queued and polled.
          waits.push(s.done());
          Device.get(1 - s.context.device.ordinal).context.makeCurrent();
        }
      }
      for (const [i, s] of streams.entries()) buffers[i]!.read(outs[i]!, { stream: s });
      await within(
        Promise.all([...waits, ...streams.map((s) => s.done())]),
        20_000,
        `${waits.length} completions across two devices`,
      );
      for (const [i, s] of streams.entries()) expectSameValues(outs[i]!, hosts[i]!, s.label);
      for (const b of buffers) b.dispose();
    } finally {
      for (const s of streams) s.dispose();
    }
  }, 60_000);
});
