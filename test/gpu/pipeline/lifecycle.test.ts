/**
 * Issue 9/10 on the GPU for the pipeline layer: the shared StagedBuffer, the AsyncCoordinator
 * as a front of the Coordinator (guest streams, poll() without yielding), and "nothing waits
 * forever": disposing ManagedContext / TripleBuffer / AsyncCoordinator / dispatchers with
 * work queued or in flight settles every promise.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DependencyFailedError, OperationError } from '../../../src/orchestration/errors.js';
import { AsyncCoordinator } from '../../../src/pipeline/async-coordinator.js';
import { createLerpDispatcher } from '../../../src/pipeline/batching/batch-dispatchers.js';
import { BatcherClosedError } from '../../../src/pipeline/batching/errors.js';
import { lerpBatcher } from '../../../src/pipeline/batching/gpu-batcher.js';
import { ManagedContext } from '../../../src/pipeline/overlap/managed-context.js';
import { TripleBuffer } from '../../../src/pipeline/overlap/triple-buffer.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { StagedBuffer } from '../../../src/runtime/memory/staged-buffer.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import { loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { poison, randomF32 } from '../helpers.js';

/** Settles within `ms` or fails the test: "nothing waits forever" made checkable. */
async function settlesWithin<T>(promises: Promise<T>[], ms: number): Promise<PromiseSettledResult<T>[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([Promise.allSettled(promises), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!gpu.available)(`pipeline lifecycle${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let k!: BasicKernels;
  beforeAll(() => {
    k = loadBasicKernels();
  });

  it('StagedBuffer: upload, kernel, download round trip on fresh random data; unusable after dispose', async () => {
    const n = (1 << 18) + 7;
    using stream = new Stream({ label: 'staged' });
    const staged = StagedBuffer.alloc('f32', n, { label: 'staged' });
    using out = DeviceBuffer.alloc('f32', n);
    const x = randomF32(n);
    staged.array.set(x);
    staged.upload(stream);
    k.scale_f32({ grid: 1024, block: 256, stream }, out, staged.device, -3, n);
    staged.device.copyFrom(out, { stream });
    poison(staged.array);
    staged.download(stream);
    await stream.done();
    const got = staged.array;
    for (let i = 0; i < n; i++) {
      const want = -3 * x[i]!;
      if (Math.abs(got[i]! - want) > 1e-5 * Math.max(1, Math.abs(want)))
        throw new Error(`element ${i}: got ${got[i]}, want ${want}`);
    }
    // A partial download touches only its prefix.
    poison(staged.array);
    staged.download(stream, { length: 5 });
    await stream.done();
    expect(Number.isNaN(staged.array[5]!)).toBe(true);
    expect(staged.array[4]).toBeCloseTo(-3 * x[4]!, 5);
    staged.dispose();
    staged.dispose(); // no-op
    expect(() => staged.upload(stream)).toThrow(DisposedError);
    expect(() => staged.array).toThrow(DisposedError);
    expect(() => StagedBuffer.alloc('f32', 0)).toThrow(RangeError);
  });

  it('AsyncCoordinator runs on guest streams and poll() reports completions without yielding to the event loop', async () => {
    const n = 1 << 16;
    using c = new AsyncCoordinator({ label: 'guest' });
    using side = new Stream({ label: 'guest side' });
    using host = StagedBuffer.alloc('f32', n);
    using y = DeviceBuffer.alloc('f32', n);
    const x = randomF32(n);
    host.array.set(x);
    const up = c.queueUpload(host.host, host.device);
    const onSide = c.queueCompute((s) => k.scale_f32({ grid: 64, block: 256, stream: s }, y, host.device, 4, n), [up], {
      stream: side,
      name: 'side',
    });
    const back = c.queueCompute(
      (s) => k.scale_f32({ grid: 64, block: 256, stream: s }, host.device, y, 0.5, n),
      [onSide],
      { name: 'back' },
    );
    poison(host.array);
    const down = c.queueDownload(host.device, host.host);
    // Busy-wait without awaiting: only poll()'s own query of the GPU can see completions.
    const seen: number[] = [];
    const deadline = performance.now() + 5000;
    while (seen.length < 4 && performance.now() < deadline) for (const s of c.poll()) seen.push(s.id);
    expect(seen).toEqual([up, onSide, back, down]);
    for (let i = 0; i < n; i++)
      if (host.array[i] !== 2 * x[i]!) throw new Error(`element ${i}: got ${host.array[i]}, want ${2 * x[i]!}`);
    expect(c.pool.has(side)).toBe(false); // a guest: tracked, not handed out
  });

  it('AsyncCoordinator: queueing after a failed dependency throws DependencyFailedError at once, enqueueing nothing', async () => {
    using c = new AsyncCoordinator({ label: 'doomed' });
    const slow = c.queueCompute((s) => k.spin_ns({ grid: 1, block: 1, stream: s }, 20_000_000n), [], { name: 'slow' });
    expect(() =>
      c.queueCompute(
        () => {
          throw new Error('launch refused');
        },
        [slow],
        { name: 'refused' },
      ),
    ).toThrow('launch refused');
    const failed = c.poll().find((o) => o.name === 'refused')!;
    expect(failed.status).toBe('failed');
    expect(c.status(failed.id)).toBe('failed');
    let ran = false;
    let thrown: unknown;
    try {
      c.queueCompute(() => void (ran = true), [failed.id], { name: 'late' });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DependencyFailedError);
    expect(thrown).toBeInstanceOf(OperationError);
    expect((thrown as DependencyFailedError).dependencyId).toBe(failed.id);
    expect(ran).toBe(false);
    await c.wait(slow);
    expect(c.status(slow)).toBe('completed');
    expect(() => c.queueCompute(() => undefined, [Number.MAX_SAFE_INTEGER])).toThrow(RangeError);
  });

  it('disposing a triple-mode ManagedContext with steps queued and in flight settles every step', async () => {
    const n = 1 << 16;
    const ctx = new ManagedContext<'f32', 'f32'>({
      mode: 'triple',
      label: 'dispose mid-flight',
      step: {
        config: { dtype: 'f32', length: n },
        telemetry: { dtype: 'f32', length: n },
        compute: ({ config, telemetry, stream }) => {
          k.spin_ns({ grid: 1, block: 1, stream }, 20_000_000n);
          k.scale_f32({ grid: 64, block: 256, stream }, telemetry, config, 2, n);
        },
      },
    });
    const steps = Array.from({ length: 7 }, () => ctx.tripleBufferedStep(randomF32(n)));
    await new Promise((r) => setTimeout(r, 5));
    // The GPU drains what was enqueued (freeing memory under running copies is issue 10 item 3's
    // test, not this one); the poller has not seen it yet, so every promise is still pending.
    ctx.context.synchronize();
    ctx.dispose();
    const results = await settlesWithin(steps, 10_000);
    for (const r of results) {
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(Error);
    }
    // At least the steps still waiting for a slot were refused by the disposal.
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof DisposedError).length).toBeGreaterThan(
      0,
    );
    await expect(ctx.tripleBufferedStep(randomF32(n))).rejects.toBeInstanceOf(DisposedError);
    await expect(ctx.done()).rejects.toBeInstanceOf(DisposedError);
    ctx.context.synchronize();
  });

  it('ManagedContext.done() waits for every step; synchronize() is its deprecated alias', async () => {
    const n = 4096;
    using ctx = new ManagedContext<'f32', 'f32'>({
      mode: 'triple',
      step: {
        config: { dtype: 'f32', length: n },
        telemetry: { dtype: 'f32', length: n },
        compute: ({ config, telemetry, stream }) =>
          k.scale_f32({ grid: 16, block: 256, stream }, telemetry, config, 3, n),
      },
    });
    const x = randomF32(n);
    let settled = 0;
    for (let i = 0; i < 5; i++) void ctx.tripleBufferedStep(x).then(() => settled++);
    await ctx.done();
    await Promise.resolve();
    expect(settled).toBe(5);
    await ctx.synchronize();
  });

  it('disposing a TripleBuffer rejects an awaited completion() with DisposedError', async () => {
    using stream = new Stream({ label: 'tb dispose' });
    const tb = TripleBuffer.alloc('f32', 1024, { label: 'tb dispose' });
    const slot = tb.uploadSlot()!;
    expect(slot.data).toBeInstanceOf(StagedBuffer);
    k.spin_ns({ grid: 1, block: 1, stream }, 30_000_000n);
    tb.commit(slot, stream);
    const waiting = tb.completion(slot);
    tb.dispose();
    const [r] = await settlesWithin([waiting], 5000);
    expect(r!.status).toBe('rejected');
    expect((r as PromiseRejectedResult).reason).toBeInstanceOf(DisposedError);
    await stream.done();
  });

  it('a dispatcher disposed while batches wait for staging rejects them; a bounded close settles everything', async () => {
    const dim = 8;
    const d = createLerpDispatcher({ dim, maxBatchSize: 4, depth: 1, label: 'lerp dispose' });
    const item = { a: Array.from(randomF32(dim)), b: Array.from(randomF32(dim)), t: 0.25 };
    const first = Promise.resolve(d.dispatch([item], { batchId: 1, label: 'x', signal: new AbortController().signal }));
    const second = Promise.resolve(
      d.dispatch([item], { batchId: 2, label: 'x', signal: new AbortController().signal }),
    );
    d.stream.synchronize(); // the first batch's copies are done before its staging is freed
    d.dispose();
    const [a, b] = await settlesWithin([first, second], 5000);
    // The first either finished before the disposal was noticed or was refused; the second never got staging.
    if (a!.status === 'rejected') expect(a!.reason).toBeInstanceOf(Error);
    expect(b!.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason).toBeInstanceOf(DisposedError);
    expect(d.disposed).toBe(true);

    const lerp = lerpBatcher({ dim, maxBatchSize: 4, maxWaitMs: 1, channelSize: 8, label: 'lerp close' });
    const results = Array.from({ length: 6 }, () => lerp.submitOne(item));
    await lerp.close({ timeoutMs: 5000 });
    const settled = await settlesWithin(results, 1000);
    for (const r of settled) {
      if (r.status === 'fulfilled') {
        const want = item.a.map((v, i) => v + 0.25 * (item.b[i]! - v));
        for (let i = 0; i < dim; i++) expect(r.value[i]).toBeCloseTo(want[i]!, 5);
      } else expect(r.reason).toBeInstanceOf(BatcherClosedError);
    }
    expect(lerp.dispatcher.disposed).toBe(true);
  });
});
