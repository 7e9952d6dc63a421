import { beforeAll, describe, expect, it } from 'vitest';
import { AsyncCoordinator } from '../../../src/pipeline/async-coordinator.js';
import { AsyncDependencyError, AsyncOperationError } from '../../../src/pipeline/errors.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { Profiler } from '../../../src/orchestration/profiler.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!gpu.available)(`AsyncCoordinator${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let k!: BasicKernels;
  beforeAll(() => {
    k = loadBasicKernels();
  });
  const cfg = (stream: Stream): { grid: number; block: number; stream: Stream } => ({ grid: 256, block: 256, stream });

  it('runs a fork/join diamond across streams with no host wait, its branches overlapping', async () => {
    const n = 1 << 18;
    const profiler = new Profiler({ label: 'diamond' });
    using c = new AsyncCoordinator({ label: 'diamond', profiler });
    using side = new Stream({ label: 'diamond side' });
    expect(new Set([c.uploadStream, c.computeStream, c.downloadStream]).size).toBe(3);
    using hostIn = HostBuffer.alloc('f32', n);
    using hostOut = HostBuffer.alloc('f32', n);
    using x = DeviceBuffer.alloc('f32', n);
    using a = DeviceBuffer.alloc('f32', n);
    using b = DeviceBuffer.alloc('f32', n);
    using out = DeviceBuffer.alloc('f32', n);
    const data = randomF32(n);
    hostIn.array.set(data);
    hostOut.array.fill(Number.NaN);

    const upload = c.queueUpload(hostIn, x);
    c.registerCompute('double', (s) => {
      k.spin_ns({ grid: 1, block: 1, stream: s }, 20_000_000n);
      k.scale_f32(cfg(s), a, x, 2, n);
    });
    const left = c.queueCompute('double', [upload]);
    const right = c.queueCompute(
      (s) => {
        k.spin_ns({ grid: 1, block: 1, stream: s }, 20_000_000n);
        k.scale_f32(cfg(s), b, x, 3, n);
      },
      [upload],
      { name: 'triple', stream: side },
    );
    const join = c.queueCompute((s) => k.add_f32(cfg(s), out, a, b, n), [left, right], { name: 'join' });
    const download = c.queueDownload(out, hostOut); // waits for the latest compute: the join
    expect(c.status(download)).toBe('pending');
    await c.wait(download);
    for (const id of [upload, left, right, join, download]) expect(c.status(id)).toBe('completed');
    const got = hostOut.array;
    for (let i = 0; i < n; i++) {
      if (Math.abs(got[i]! - 5 * data[i]!) > 1e-5) throw new Error(`element ${i}: got ${got[i]}, want ${5 * data[i]!}`);
    }
    const records = await profiler.collect();
    const double = records.find((r) => r.name === 'double')!;
    const triple = records.find((r) => r.name === 'triple')!;
    const joined = records.find((r) => r.name === 'join')!;
    expect(Math.min(double.endMs, triple.endMs) - Math.max(double.startMs, triple.startMs)).toBeGreaterThan(10);
    expect(joined.startMs).toBeGreaterThanOrEqual(Math.max(double.endMs, triple.endMs) - 1e-3);
    expect(records.find((r) => r.kind === 'upload')!.bytes).toBe(4 * n);
    await profiler.reset();
    profiler.dispose();
  });

  it('poll() never blocks and reports each operation once', async () => {
    using c = new AsyncCoordinator({ label: 'poll' });
    const slow = c.queueCompute((s) => k.spin_ns({ grid: 1, block: 1, stream: s }, 30_000_000n), [], { name: 'slow' });
    const after = c.queueCompute((s) => k.empty({ grid: 1, block: 1, stream: s }), [slow], { name: 'after' });
    const t0 = performance.now();
    const early = c.poll();
    expect(performance.now() - t0).toBeLessThan(5);
    expect(early.map((o) => o.id)).not.toContain(slow);
    expect(c.status(slow)).toBe('pending');
    const seen: number[] = [];
    const deadline = performance.now() + 10_000;
    while (seen.length < 2 && performance.now() < deadline) {
      for (const o of c.poll()) {
        expect(o.status).toBe('completed');
        seen.push(o.id);
      }
      await sleep(1);
    }
    expect(seen).toEqual([slow, after]);
    expect(c.poll()).toEqual([]);
    expect(c.pendingCount).toBe(0);
  });

  it('synchronizeAll() blocks until all streams are idle; done() is its non-blocking form', async () => {
    using c = new AsyncCoordinator({ label: 'sync' });
    using host = HostBuffer.alloc('f32', 1024);
    using dev = DeviceBuffer.alloc('f32', 1024);
    host.array.fill(7);
    const up = c.queueUpload(host, dev);
    const spin = c.queueCompute((s) => k.spin_ns({ grid: 1, block: 1, stream: s }, 10_000_000n), [up]);
    const down = c.queueDownload(dev, host);
    c.synchronizeAll();
    expect([c.status(up), c.status(spin), c.status(down)]).toEqual(['completed', 'completed', 'completed']);
    expect(c.poll().map((o) => o.id)).toEqual([up, spin, down]);

    const again = c.queueCompute((s) => k.spin_ns({ grid: 1, block: 1, stream: s }, 10_000_000n));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await c.done();
    clearInterval(timer);
    expect(c.status(again)).toBe('completed');
    expect(ticks).toBeGreaterThan(0); // the event loop kept running while it waited
  });

  it('refuses bad operations at once and fails exactly the dependents of a failed operation', async () => {
    const c = new AsyncCoordinator({ label: 'errors' });
    expect(() => c.queueCompute('nobody', [])).toThrow(/no compute registered as "nobody"/);
    expect(() => c.queueCompute(() => undefined, [12345])).toThrow(RangeError);
    expect(() =>
      c.queueCompute(() => {
        throw new Error('launch refused');
      }),
    ).toThrow('launch refused');
    await expect(c.wait(999)).rejects.toThrow(RangeError);

    // Work still running when the coordinator goes away fails, with its dependents; nothing hangs.
    using host = HostBuffer.alloc('f32', 16);
    using dev = DeviceBuffer.alloc('f32', 16);
    const slow = c.queueCompute((s) => k.spin_ns({ grid: 1, block: 1, stream: s }, 50_000_000n), [], { name: 'slow' });
    const independent = c.queueUpload(host, dev, { name: 'independent' });
    await c.wait(independent);
    const dependent = c.queueDownload(dev, host, { deps: [slow] });
    const waits = [c.wait(slow), c.wait(dependent)];
    c.dispose();
    const [slowResult, dependentResult] = await Promise.allSettled(waits);
    expect(slowResult!.status).toBe('rejected');
    expect((slowResult as PromiseRejectedResult).reason).toBeInstanceOf(AsyncOperationError);
    expect(dependentResult!.status).toBe('rejected');
    expect((dependentResult as PromiseRejectedResult).reason).toBeInstanceOf(AsyncDependencyError);
    expect(c.status(independent)).toBe('completed');
    expect(() => c.queueCompute(() => undefined)).toThrow(/disposed/);
    // The spin still runs on the GPU: let it end before the buffers it is ordered with are freed.
    c.context.synchronize();
  });
});
