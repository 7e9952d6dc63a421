import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hot, type HotFunctions } from '../../../src/runtime/cuda.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import type { Kernel } from '../../../src/runtime/kernel.js';
import { Coordinator, StreamOrderedAllocator, StreamPool } from '../../../src/orchestration/index.js';
import { Profiler } from '../../../src/orchestration/profiler.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { loadBasicModule, randomF32 } from '../helpers.js';

/** Counts the driver calls the edge path makes, by wrapping the captured hot functions. */
function countCalls(): { records: number; waits: number; restore: () => void } {
  const h: HotFunctions = hot();
  const record = h.eventRecord;
  const wait = h.streamWaitEvent;
  const counts = {
    records: 0,
    waits: 0,
    restore: (): void => {
      h.eventRecord = record;
      h.streamWaitEvent = wait;
    },
  };
  // Each checked call passes its `during` and values after its arguments: forwarded as they come.
  type Call = (...args: unknown[]) => void;
  h.eventRecord = ((...args: unknown[]) => (counts.records++, (record as Call)(...args))) as typeof record;
  h.streamWaitEvent = ((...args: unknown[]) => (counts.waits++, (wait as Call)(...args))) as typeof wait;
  return counts;
}

describe.skipIf(!gpu.available)(
  `orchestration runtime behaviour${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let spin!: Kernel;
    let fill!: Kernel;
    let add!: Kernel;
    let scale!: Kernel;
    const cleanup: (() => void)[] = [];
    beforeAll(() => {
      const mod = loadBasicModule();
      spin = mod.kernel('spin_ns', ['u64']);
      fill = mod.kernel('fill_f32', ['ptr', 'f32', 'i32']);
      add = mod.kernel('add_f32', ['ptr', 'ptr', 'ptr', 'i32']);
      scale = mod.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']);
    });
    afterEach(() => {
      while (cleanup.length) cleanup.pop()!();
    });
    const one = (s: Stream): { grid: number; block: number; stream: Stream } => ({ grid: 1, block: 1, stream: s });
    const wide = (s: Stream): { grid: number; block: number; stream: Stream } => ({ grid: 64, block: 256, stream: s });

    it('enqueues a cross-stream chain at once: one event per operation, one wait per edge, no host wait, profiler off adds nothing', async () => {
      const pool = new StreamPool({ streams: [{}, {}, {}], label: 'chain' });
      cleanup.push(() => pool.dispose());
      const [s0, s1, s2] = pool.streams as [Stream, Stream, Stream];
      const n = 16_384;
      const buf = DeviceBuffer.alloc('f32', n);
      cleanup.push(() => buf.dispose());
      const seed = 1 + Math.floor(Math.random() * 7);
      const coord = new Coordinator(pool);
      coord.add({
        name: 'A',
        kind: 'kernel',
        stream: s0,
        run: (s) => {
          spin.launch(one(s), 30_000_000n);
          fill.launch(wide(s), buf, seed, n);
        },
      });
      coord.add({
        name: 'B',
        kind: 'kernel',
        stream: s1,
        after: ['A'],
        run: (s) => add.launch(wide(s), buf, buf, buf, n),
      });
      coord.add({
        name: 'C',
        kind: 'kernel',
        stream: s2,
        after: ['B'],
        run: (s) => add.launch(wide(s), buf, buf, buf, n),
      });
      coord.add({
        name: 'D',
        kind: 'kernel',
        stream: s0,
        after: ['C'],
        run: (s) => add.launch(wide(s), buf, buf, buf, n),
      });
      const calls = countCalls();
      let done: Promise<void>;
      try {
        done = coord.run();
      } finally {
        calls.restore();
      }
      // All four are on the GPU while A still spins: nothing waited on the host.
      expect(['A', 'B', 'C', 'D'].map((x) => coord.state(x))).toEqual(['enqueued', 'enqueued', 'enqueued', 'enqueued']);
      expect(calls.records).toBe(4);
      expect(calls.waits).toBe(3);
      await done;
      expect(buf.read().every((v) => v === seed * 8)).toBe(true);

      // With the profiler on, each operation is bracketed by two timing events (and one origin).
      const profiler = new Profiler({ label: 'chain' });
      cleanup.push(() => profiler.dispose());
      const profiled = new StreamPool({ streams: [{}, {}], profiler, label: 'profiled' });
      cleanup.push(() => profiled.dispose());
      const on = countCalls();
      try {
        for (const s of profiled.streams) profiled.run(s, 'kernel', () => fill.launch(wide(s), buf, 1, n));
      } finally {
        on.restore();
      }
      expect(on.records).toBe(2 + 2 * 2 + 1);
      profiler.enabled = false;
      const off = countCalls();
      try {
        for (const s of profiled.streams) profiled.run(s, 'kernel', () => fill.launch(wide(s), buf, 1, n));
      } finally {
        off.restore();
      }
      expect(off.records).toBe(2);
      await Promise.all(profiled.streams.map((s) => s.done()));
      expect(await profiler.collect()).toHaveLength(2);
    });

    it('runs a host step after its GPU dependency completes, then enqueues what depends on it', async () => {
      const pool = new StreamPool({
        streams: [{ purpose: 'ConfigUpload' }, { purpose: 'KernelExecution' }, { purpose: 'AuxCompute' }],
        label: 'host step',
      });
      cleanup.push(() => pool.dispose());
      const [up, compute, aux] = pool.streams as [Stream, Stream, Stream];
      const n = 50_000;
      const xs = randomF32(n);
      const x = DeviceBuffer.alloc('f32', n);
      const out = DeviceBuffer.alloc('f32', n);
      cleanup.push(
        () => x.dispose(),
        () => out.dispose(),
      );
      out.memset(0xffffffff, { stream: compute });
      let factor = Number.NaN;
      const order: string[] = [];
      const coord = new Coordinator(pool);
      coord.add({
        name: 'upload',
        kind: 'upload',
        stream: up,
        run: (s) => {
          spin.launch(one(s), 5_000_000n);
          x.write(xs, { stream: s });
        },
        onComplete: () => order.push('upload'),
      });
      coord.add({
        name: 'inspect',
        kind: 'host',
        after: ['upload'],
        run: async () => {
          order.push('inspect');
          // The upload has completed: a synchronous read sees it.
          const seen = x.read();
          factor = 1 + Math.abs(seen[0]!);
          await new Promise((r) => setTimeout(r, 2));
        },
      });
      coord.add({
        name: 'scale',
        kind: 'kernel',
        stream: compute,
        after: ['inspect'],
        run: (s) => {
          order.push(`scale by ${Number.isNaN(factor) ? 'NaN' : 'factor'}`);
          scale.launch(wide(s), out, x, factor, n);
        },
      });
      coord.add({
        name: 'aside',
        kind: 'kernel',
        stream: aux,
        run: (s) => spin.launch(one(s), 1_000_000n),
        onComplete: () => order.push('aside'),
      });
      await coord.run();
      expect(order.indexOf('upload')).toBeLessThan(order.indexOf('inspect'));
      expect(order).toContain('scale by factor');
      expect(order).toContain('aside');
      const got = out.read();
      for (let i = 0; i < n; i += 331) expect(got[i]).toBe(Math.fround(Math.fround(factor) * xs[i]!));
    });

    it('reuses its events: many iterations create none after the first', async () => {
      const pool = new StreamPool({ streams: [{}, {}, {}], label: 'recycle' });
      cleanup.push(() => pool.dispose());
      const buf = DeviceBuffer.alloc('f32', 1024);
      cleanup.push(() => buf.dispose());
      const iterate = async (coord: Coordinator): Promise<void> => {
        pool.streams.forEach((s, i) =>
          coord.add({
            name: `op${i}`,
            kind: 'kernel',
            stream: s,
            after: i ? [`op${i - 1}`] : [],
            run: (st) => fill.launch(one(st), buf, i, 1),
          }),
        );
        coord.barrier();
        coord.add({
          name: 'last',
          kind: 'kernel',
          stream: pool.streams[1]!,
          run: (st) => fill.launch(one(st), buf, 7, 1),
        });
        await coord.run();
        coord.clearSettled();
      };
      const coord = new Coordinator(pool);
      await iterate(coord);
      const events = pool.context.completionEvents;
      const before = events.available;
      const created = events.created;
      // Leaked events would drain the free list (and new ones be created) iteration by iteration.
      expect(before).toBeGreaterThan(0);
      for (let i = 0; i < 100; i++) await iterate(coord);
      // More completions can be pending at one moment than in the first iteration (the host's timing:
      // once 9 events grew to 12 on an H100), so the pool may grow by a few; a leak would take one
      // or more every iteration, and keep them out of the free list.
      const grown = events.created - created;
      expect(grown).toBeLessThan(10);
      // Every event made since is free again, and none went missing (a disposed stream's retired event may also come back meanwhile).
      expect(events.available - before).toBeGreaterThanOrEqual(grown);
      expect(pool.metrics(pool.streams[0]!).operations).toBe(101);
    });

    it('balances by outstanding work, measures it, and re-chooses its strategy from recorded times', async () => {
      const pool = new StreamPool({
        streams: [
          { purpose: 'KernelExecution' },
          { purpose: 'KernelExecution' },
          { purpose: 'KernelExecution' },
          { purpose: 'TelemetryDownload' },
        ],
        strategy: 'LoadBalanced',
        label: 'balance',
      });
      cleanup.push(() => pool.dispose());
      const [k0, k1, k2] = pool.streams as [Stream, Stream, Stream];
      for (let i = 0; i < 3; i++) pool.run(k0, 'kernel', () => spin.launch(one(k0), 20_000_000n));
      pool.run(k1, 'kernel', () => spin.launch(one(k1), 20_000_000n));
      expect(pool.metrics(k0).outstanding).toBe(3);
      expect(pool.acquire({ purpose: 'KernelExecution' })).toBe(k2);
      pool.run(k2, 'kernel', () => spin.launch(one(k2), 20_000_000n), { bytes: 4096 });
      pool.run(k2, 'kernel', () => spin.launch(one(k2), 1_000n), { bytes: 1024 });
      expect(pool.acquire({ purpose: 'KernelExecution' })).toBe(k1);
      await Promise.all([k0, k1, k2].map((s) => s.done()));
      await new Promise((r) => setImmediate(r));
      const m0 = pool.metrics(k0);
      expect(m0).toMatchObject({ operations: 3, kernelLaunches: 3, transfers: 0, outstanding: 0 });
      expect(m0.busyMs).toBeGreaterThanOrEqual(55);
      expect(m0.averageLatencyMs).toBeGreaterThan(15);
      expect(pool.metrics(k2).peakMemoryBytes).toBe(5120);
      expect(pool.hasReadyStreams()).toBe(true);

      pool.recordCompletion('Compute', 12);
      pool.recordCompletion('Compute', 8);
      pool.recordCompletion('Memory', 1);
      expect(pool.averageTime('Compute')).toBe(10);
      expect(pool.optimize()).toBe('Workload');
      // Compute suits the three kernel streams: it keeps the first two; Memory has its own.
      expect(pool.assignments).toEqual({ Compute: [0, 1], Memory: [3] });
      expect([k0, k1]).toContain(pool.acquire({ workload: 'Compute' }));
      expect(pool.acquire({ workload: 'Memory' })).toBe(pool.streams[3]);
    });

    it("executeParallel returns each stream's result after its work completes; waitForAnyReady returns a stream that is idle", async () => {
      const pool = new StreamPool({ streams: [{}, {}, {}], label: 'parallel' });
      cleanup.push(() => pool.dispose());
      const n = 4096;
      const bufs = pool.streams.map(() => DeviceBuffer.alloc('f32', n));
      cleanup.push(() => bufs.forEach((b) => b.dispose()));
      const coord = new Coordinator(pool);
      const values = pool.streams.map(() => 1 + Math.floor(Math.random() * 100));
      const results = await coord.executeParallel(
        (s, i) => {
          spin.launch(one(s), 3_000_000n);
          fill.launch(wide(s), bufs[i]!, values[i]!, n);
          return i * 10;
        },
        { kind: 'kernel' },
      );
      expect(results).toEqual([0, 10, 20]);
      expect(bufs.map((b) => b.read()[n - 1])).toEqual(values);
      await expect(
        coord.executeParallel((_, i) => {
          if (i === 1) throw new Error('stream 1 refused');
        }),
      ).rejects.toThrow('stream 1 refused');

      for (const s of pool.streams) pool.run(s, 'kernel', () => spin.launch(one(s), 150_000_000n));
      expect(pool.hasReadyStreams()).toBe(false);
      expect(await pool.waitForAnyReady({ timeoutMs: 20 })).toBeNull();
      const ready = await pool.waitForAnyReady({ timeoutMs: 10_000 });
      expect(ready).not.toBeNull();
      expect(ready!.query()).toBe(true);
      // Its spin, tracked by the pool, completed before the stream went idle.
      expect(pool.metrics(ready!).outstanding).toBe(0);
      expect(pool.metrics(ready!).averageLatencyMs).toBeGreaterThan(50);
    });

    it('allocator: byte requests, same-stream reuse without waits, cross-stream reuse with one, and trim', async () => {
      const pool = new StreamPool({ streams: [{}, {}], label: 'alloc' });
      cleanup.push(() => pool.dispose());
      const [a, b] = pool.streams as [Stream, Stream];
      const alloc = new StreamOrderedAllocator({ label: 'test allocator' });
      cleanup.push(() => alloc.dispose());
      const first = alloc.allocate(1000, a);
      expect(first.dtype).toBe('u8');
      expect(first.byteLength).toBe(1000);
      const address = first.address;
      alloc.freeForStream(first, a);
      expect(first.disposed).toBe(true);
      expect(() => alloc.freeForStream(first, a)).toThrow('freed already');
      const calls = countCalls();
      let again: DeviceBuffer<'f32'>;
      let other: DeviceBuffer<'u8'>;
      try {
        again = alloc.allocate('f32', 200, a); // 800 B: the same 1 KiB class, on the same stream
        expect(calls.waits).toBe(0);
        // The old buffer object names the address `again` now holds: it must not free `again`.
        expect(() => alloc.freeForStream(first, a)).toThrow('freed already');
        expect(again.disposed).toBe(false);
        expect(() => alloc.freeForStream(null as never, a)).toThrow(/null was not allocated here/);
        expect(() => alloc.freeForStream({ address: again.address } as never, a)).toThrow(
          /a plain Object was not allocated here/,
        );
        expect(() => alloc.allocate('f32', 1.5, a)).toThrow(/positive integer, got 1.5/);
        expect(() => alloc.allocate('f32', 4, {} as never)).toThrow(/stream must be a Stream, got a plain Object/);
        alloc.freeForStream(again, a);
        // Same-stream free and reuse need no driver call: stream order protects the block.
        expect(calls.records).toBe(0);
        other = alloc.allocate(1024, b);
        // Another stream's reuse waits for an event recorded on the freeing stream at that moment.
        expect(calls.records).toBe(1);
        expect(calls.waits).toBe(1);
      } finally {
        calls.restore();
      }
      expect(again.address).toBe(address);
      expect(other.address).toBe(address);
      expect(alloc.stats).toMatchObject({ hits: 2, misses: 1, crossStreamReuses: 1, bytesInUse: 1024, bytesCached: 0 });
      alloc.freeForStream(other, b);
      expect(alloc.stats.bytesCached).toBe(1024);
      alloc.trim();
      expect(alloc.stats.bytesCached).toBe(0);
      const fresh = alloc.allocate(1024, b);
      expect(alloc.stats.misses).toBe(2);
      alloc.freeForStream(fresh, b);
      await Promise.all([a.done(), b.done()]);
    });

    it("allocator: a block freed on a stream disposed since is reused behind that stream's retired event, and its later writes land after the old work", async () => {
      const alloc = new StreamOrderedAllocator({ label: 'retired-owner allocator' });
      cleanup.push(() => alloc.dispose());
      const owner = new Stream({ label: 'short-lived owner' });
      const next = new Stream({ label: 'next user' });
      cleanup.push(() => next.dispose());
      const n = 1 << 16;
      const first = alloc.allocate('f32', n, owner);
      // The owner's work: a long spin, then a fill of 1s; the next user fills 2s once it gets the block.
      spin.launch({ grid: 1, block: 1, stream: owner }, 20_000_000n);
      fill.launch({ grid: 64, block: 256, stream: owner }, first, 1, n);
      alloc.freeForStream(first, owner);
      owner.dispose();
      const calls = countCalls();
      let reused: DeviceBuffer<'f32'>;
      try {
        reused = alloc.allocate('f32', n, next);
        expect(calls.records).toBe(0); // the retired event, recorded at dispose, orders the reuse
        expect(calls.waits).toBe(1);
      } finally {
        calls.restore();
      }
      expect(reused.address).toBe(first.address);
      expect(alloc.stats.crossStreamReuses).toBe(1);
      fill.launch({ grid: 64, block: 256, stream: next }, reused, 2, n);
      await next.done();
      const values = reused.read();
      expect(values.every((v) => v === 2)).toBe(true); // had the reuse not waited, the owner's 1s would land after the 2s
      alloc.freeForStream(reused, next);
    });
  },
);
