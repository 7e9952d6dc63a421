/**
 * Issue 9/10 on the GPU for orchestration: StreamPool, Profiler and the allocator are
 * Resources (DisposedError after dispose), the pool's borrowed and guest streams, a pending
 * waitForAnyReady() settles on dispose, Coordinator host-step timeouts next to GPU work, the
 * Coordinator's disposal, and the Profiler's bounded window.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Coordinator } from '../../../src/orchestration/coordinator.js';
import { DependencyFailedError, OperationError, OperationTimeoutError } from '../../../src/orchestration/errors.js';
import { Profiler } from '../../../src/orchestration/profiler.js';
import { StreamPool } from '../../../src/orchestration/stream-pool.js';
import { StreamOrderedAllocator } from '../../../src/runtime/memory/allocator.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import { loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';

describe.skipIf(!gpu.available)(`orchestration lifecycle${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let k!: BasicKernels;
  beforeAll(() => {
    k = loadBasicKernels();
  });

  it("StreamPool: borrowed streams stay the caller's, guests are tracked, dispose settles waitForAnyReady and later calls throw DisposedError", async () => {
    using mine = new Stream({ label: 'borrowed' });
    using guest = new Stream({ label: 'guest' });
    const pool = new StreamPool({
      streams: [
        { stream: mine, purpose: 'KernelExecution' },
        { stream: mine },
        { purpose: 'AuxCompute', label: 'aux named' },
      ],
      label: 'lifecycle pool',
    });
    expect(pool.streams).toHaveLength(2); // the same stream listed twice is one member
    expect(pool.streams.map((s) => s.label)).toEqual(['borrowed', 'aux named']); // a made stream takes its spec's label
    expect(pool.context).toBe(mine.context);
    const heard: (Error | undefined)[] = [];
    pool.submit(
      guest,
      'kernel',
      (s) => k.spin_ns({ grid: 1, block: 1, stream: s }, 1_000_000n),
      { name: 'guest work' },
      (e) => heard.push(e),
    );
    await guest.done();
    await new Promise((r) => setTimeout(r, 5));
    expect(heard).toEqual([undefined]);
    // Both members busy: the wait is still pending when the pool goes away.
    for (const s of pool.streams) k.spin_ns({ grid: 1, block: 1, stream: s }, 50_000_000n);
    const ready = pool.waitForAnyReady({ timeoutMs: 60_000 });
    pool.dispose();
    await expect(ready).resolves.toBeNull();
    expect(() => pool.acquire()).toThrow(DisposedError);
    expect(() => pool.run(mine, 'kernel', () => undefined)).toThrow(DisposedError);
    expect(() => pool.metrics(mine)).toThrow(DisposedError);
    expect(() => pool.waitForAnyReady({ timeoutMs: 1 })).toThrow(DisposedError);
    pool.dispose();
    expect(mine.disposed).toBe(false);
    await mine.done();
    expect(() =>
      new StreamPool({ streams: [{ stream: guest }], label: 'x' }).waitForAnyReady({ timeoutMs: 2 ** 31 }),
    ).toThrow(RangeError);
  });

  it('Coordinator: a host step past its timeout fails its dependents while independent GPU work completes; dispose settles the rest', async () => {
    using pool = new StreamPool({ streams: [{}, {}], label: 'timeouts' });
    const [s0, s1] = pool.streams as [Stream, Stream];
    const n = 4096;
    using buf = DeviceBuffer.alloc('f32', n);
    const x = randomF32(n);
    buf.write(x);
    const coord = new Coordinator(pool, { label: 'timeouts' });
    coord.add({
      name: 'gpu',
      kind: 'kernel',
      stream: s0,
      run: (s) => k.scale_f32({ grid: 16, block: 256, stream: s }, buf, buf, 2, n),
    });
    coord.add({
      name: 'stuck host',
      kind: 'host',
      after: ['gpu'],
      timeoutMs: 30,
      run: () => new Promise<void>(() => undefined),
    });
    coord.add({
      name: 'after host',
      kind: 'kernel',
      stream: s1,
      after: ['stuck host'],
      run: (s) => k.scale_f32({ grid: 16, block: 256, stream: s }, buf, buf, 100, n),
    });
    coord.add({ name: 'free', kind: 'kernel', stream: s1, run: (s) => k.empty({ grid: 1, block: 1, stream: s }) });
    await expect(coord.run()).rejects.toBeInstanceOf(OperationTimeoutError);
    await expect(coord.wait('after host')).rejects.toBeInstanceOf(DependencyFailedError);
    await expect(coord.wait('free')).resolves.toBeUndefined();
    const got = buf.read();
    for (let i = 0; i < n; i++)
      if (got[i] !== 2 * x[i]!) throw new Error(`element ${i}: ${got[i]} (the dependent of the timed-out step ran?)`);

    coord.add({
      name: 'long',
      kind: 'kernel',
      stream: s0,
      run: (s) => k.spin_ns({ grid: 1, block: 1, stream: s }, 30_000_000n),
    });
    coord.add({
      name: 'behind',
      kind: 'kernel',
      stream: s1,
      after: ['long'],
      run: (s) => k.empty({ grid: 1, block: 1, stream: s }),
    });
    const running = coord.run();
    coord.dispose();
    await expect(running).rejects.toBeInstanceOf(OperationError);
    await expect(coord.wait('behind')).rejects.toBeInstanceOf(DependencyFailedError);
    expect(() => coord.add({ name: 'x', kind: 'kernel', run: () => undefined })).toThrow(DisposedError);
    await s0.done();
  });

  it('Profiler: a bounded window keeps the latest operations; Profiler and allocator are Resources', async () => {
    using stream = new Stream({ label: 'window' });
    const profiler = new Profiler({ label: 'window', window: 8 });
    for (let i = 0; i < 50; i++)
      profiler.wrap(stream, 'kernel', `op${i}`, () => k.empty({ grid: 1, block: 1, stream }));
    expect(profiler.operationCount).toBeLessThanOrEqual(8);
    const records = await profiler.collect();
    expect(records.at(-1)!.name).toBe('op49');
    expect(records.every((r, i) => i === 0 || r.startMs >= records[i - 1]!.startMs)).toBe(true);
    profiler.dispose();
    expect(() => profiler.begin(stream, 'kernel', 'late')).toThrow(DisposedError);
    expect(() => new Profiler({ window: 0 })).toThrow(RangeError);

    const allocator = new StreamOrderedAllocator({ label: 'lifecycle allocator' });
    const b = allocator.allocate('f32', 1024, stream);
    allocator.freeForStream(b, stream);
    allocator.dispose();
    allocator.dispose();
    expect(() => allocator.allocate(256, stream)).toThrow(DisposedError);
    expect(() => allocator.trim()).toThrow(DisposedError);
  });
});
