/**
 * tscuda's side of every metric bench/native/bench.cu measures, mirrored call for call:
 * same streams (non-blocking, created per metric), same sizes, same warm-ups, same shapes
 * (timing.ts). Where C calls the driver, these call tscuda's public runtime API.
 */
import { StreamOrderedAllocator } from '../../src/orchestration/index.js';
import { DeviceBuffer, Event, FftPlan, HostBuffer, Stream } from '../../src/runtime/index.js';
import type { FftType, Kernel, LaunchConfig } from '../../src/runtime/index.js';
import { driver as driverApi } from '../../src/ffi/index.js';
import { coordinatorEdge } from './coordinator.js';
import { graphReplay } from './graph.js';
import {
  pairedWithFloor,
  pairedPerIterWithFloor,
  pairedPerIterWithFloorAsync,
  firstTime,
  gbps,
  loopMetric,
  repeated,
} from './timing.js';
import { rawAllocFree, rawLaunchAwait, rawLaunchLoop, rawLaunchSync, rawSmallCopy } from './floors.js';
import { disposeAll, single, type BenchContext, type MeasuredMetric, type TscudaBenchmark } from './types.js';

/** bench.cu's sizes. */
export const BIG_BYTES = 256 * 2 ** 20;
export const SMALL_BYTES = 4096;
export const ALLOC_BYTES = 2 ** 20;
export const FFT_N = 4096;
export const FFT_BATCH = 8192;

function emptyConfig(stream: Stream): LaunchConfig {
  return { grid: 1, block: 1, stream };
}

/**
 * A launch loop through the generated typed launcher (setArg + launchPrepared, what users of
 * the built-in kernels call) where the checkout has it, else through Kernel.launch(config,
 * ...args); the other path's value goes into the notes once.
 */
function launchLoop(
  ctx: BenchContext,
  metric: string,
  typed: ((n: number) => void) | null,
  generic: (n: number) => void,
  sync: () => void,
  genericCall: string,
  floor: (n: number) => void,
): MeasuredMetric {
  const paired = (run: (n: number) => void): ReturnType<typeof pairedWithFloor> =>
    pairedWithFloor(
      ctx.timing,
      metric,
      run,
      floor,
      sync,
      "cuLaunchKernel (the kernel's parameter block as last written)",
      ctx.log,
    );
  if (typed === null) {
    const f = paired(generic);
    return { pass: f.pass, floor: f.floor, notes: [`${genericCall} (${ctx.kernels.typedNote})`, ...f.notes] };
  }
  const f = paired(typed);
  const pass = f.pass;
  const notes = [`through the ${ctx.kernels.typedNote} (setArg + launchPrepared)`, ...f.notes];
  // The generic path's value is measured once (first pass) and noted, next to the typed launcher's.
  if (firstTime(`${metric} generic`)) {
    notes.push(`generic ${genericCall}: ${loopMetric(ctx.timing, generic, sync).median.toFixed(3)} us (first pass)`);
  }
  return { pass, floor: f.floor, notes };
}

function launchEmpty(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench launch_empty' });
  try {
    const k = ctx.kernels.empty;
    const t = ctx.kernels.typed;
    const cfg = emptyConfig(s);
    const typed = t
      ? (n: number): void => {
          for (let i = 0; i < n; i++) t.empty(cfg);
        }
      : null;
    const generic = (n: number): void => {
      for (let i = 0; i < n; i++) k.launch(cfg);
    };
    return launchLoop(
      ctx,
      'launch_empty_us',
      typed,
      generic,
      () => s.synchronize(),
      'Kernel.launch(config)',
      rawLaunchLoop(k, s),
    );
  } finally {
    disposeAll(s);
  }
}

function launch4Args(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench launch_4args' });
  const a = DeviceBuffer.alloc('f32', 64, { label: 'k4 a' });
  const b = DeviceBuffer.alloc('f32', 64, { label: 'k4 b' });
  try {
    const k = ctx.kernels.k4;
    const t = ctx.kernels.typed;
    const cfg = emptyConfig(s);
    // n = 0: the kernel returns at once, as in bench.cu.
    const typed = t
      ? (n: number): void => {
          for (let i = 0; i < n; i++) t.k4(cfg, a, b, 0, 2.0);
        }
      : null;
    const generic = (n: number): void => {
      for (let i = 0; i < n; i++) k.launch(cfg, a, b, 0, 2.0);
    };
    return launchLoop(
      ctx,
      'launch_4args_us',
      typed,
      generic,
      () => s.synchronize(),
      'Kernel.launch(config, a, b, 0, 2)',
      rawLaunchLoop(k, s),
    );
  } finally {
    disposeAll(s, a, b);
  }
}

function launchSyncRoundtrip(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench launch_sync_roundtrip' });
  try {
    const k = ctx.kernels.empty;
    const cfg = emptyConfig(s);
    const body = (): void => {
      k.launch(cfg);
      s.synchronize();
    };
    const f = pairedPerIterWithFloor(
      ctx.timing,
      'launch_sync_roundtrip_us',
      body,
      rawLaunchSync(k, s),
      'cuLaunchKernel + cuStreamSynchronize',
      ctx.log,
    );
    return { pass: f.pass, floor: f.floor, notes: f.notes };
  } finally {
    disposeAll(s);
  }
}

async function awaitCompletion(ctx: BenchContext): Promise<MeasuredMetric> {
  const s = new Stream({ label: 'bench await_completion' });
  try {
    const k = ctx.kernels.empty;
    const cfg = emptyConfig(s);
    const body = (): Promise<void> => {
      k.launch(cfg);
      return s.done();
    };
    const f = await pairedPerIterWithFloorAsync(
      ctx.timing,
      'await_completion_us',
      body,
      rawLaunchAwait(k, s),
      'cuLaunchKernel, then cuStreamQuery once per setImmediate turn until idle',
      ctx.log,
    );
    return { pass: f.pass, floor: f.floor, notes: ['launch + await stream.done() per iteration', ...f.notes] };
  } finally {
    disposeAll(s);
  }
}

function eventRecord(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench event_record' });
  const ev = new Event({ label: 'bench event_record' });
  try {
    const run = (n: number): void => {
      for (let i = 0; i < n; i++) ev.record(s);
    };
    const record = driverApi().cuEventRecord;
    const [eh, sh] = [ev.handle, s.handle];
    const floor = (n: number): void => {
      for (let i = 0; i < n; i++) record(eh, sh);
    };
    const f = pairedWithFloor(
      ctx.timing,
      'event_record_us',
      run,
      floor,
      () => s.synchronize(),
      'cuEventRecord',
      ctx.log,
    );
    return { pass: f.pass, floor: f.floor, notes: f.notes };
  } finally {
    disposeAll(s, ev);
  }
}

function eventQuery(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench event_query' });
  const ev = new Event({ label: 'bench event_query' });
  try {
    ev.record(s);
    ev.synchronize();
    let incomplete = 0;
    const run = (n: number): void => {
      for (let i = 0; i < n; i++) if (!ev.query()) incomplete++;
    };
    const query = driverApi().cuEventQuery;
    const eh = ev.handle;
    const floor = (n: number): void => {
      for (let i = 0; i < n; i++) if (query(eh) !== 0) incomplete++;
    };
    const f = pairedWithFloor(ctx.timing, 'event_query_us', run, floor, () => {}, 'cuEventQuery', ctx.log);
    if (incomplete > 0) throw new Error(`event reported incomplete ${incomplete} times after synchronize()`);
    return { pass: f.pass, floor: f.floor, notes: f.notes };
  } finally {
    disposeAll(s, ev);
  }
}

function pinnedCopy(ctx: BenchContext, direction: 'h2d' | 'd2h'): MeasuredMetric {
  const s = new Stream({ label: `bench ${direction}_pinned` });
  const host = HostBuffer.alloc('u8', BIG_BYTES, { label: 'bench pinned' });
  const dev = DeviceBuffer.alloc('u8', BIG_BYTES, { label: 'bench device' });
  const t0 = new Event({ timing: true, label: 'bench t0' });
  const t1 = new Event({ timing: true, label: 'bench t1' });
  try {
    host.array.fill(1);
    const opts = { stream: s };
    const one = (): number => {
      t0.record(s);
      if (direction === 'h2d') dev.write(host, opts);
      else dev.read(host, opts);
      t1.record(s);
      t1.synchronize();
      return gbps(BIG_BYTES, Event.elapsedMs(t0, t1));
    };
    return { pass: repeated(ctx.timing, 2, one) };
  } finally {
    disposeAll(s, host, dev, t0, t1);
  }
}

/** H2D on s1 and D2H on s2 at once, from an event on s1 that s2 waits for to one on s1 after s1 waited for s2. */
function bidirPinned(ctx: BenchContext): MeasuredMetric {
  const s1 = new Stream({ label: 'bench bidir s1' });
  const s2 = new Stream({ label: 'bench bidir s2' });
  const hSrc = HostBuffer.alloc('u8', BIG_BYTES, { label: 'bench h_src' });
  const hDst = HostBuffer.alloc('u8', BIG_BYTES, { label: 'bench h_dst' });
  const dDst = DeviceBuffer.alloc('u8', BIG_BYTES, { label: 'bench d_dst' });
  const dSrc = DeviceBuffer.alloc('u8', BIG_BYTES, { label: 'bench d_src' });
  const start = new Event({ timing: true, label: 'bench start' });
  const end = new Event({ timing: true, label: 'bench end' });
  const s2Done = new Event({ label: 'bench s2 done' });
  try {
    hSrc.array.fill(1);
    hDst.array.fill(1);
    const on1 = { stream: s1 };
    const on2 = { stream: s2 };
    const one = (): number => {
      start.record(s1);
      s2.waitEvent(start);
      dDst.write(hSrc, on1);
      dSrc.read(hDst, on2);
      s2Done.record(s2);
      s1.waitEvent(s2Done);
      end.record(s1);
      end.synchronize();
      return gbps(2 * BIG_BYTES, Event.elapsedMs(start, end));
    };
    return { pass: repeated(ctx.timing, 2, one) };
  } finally {
    disposeAll(s1, s2, hSrc, hDst, dDst, dSrc, start, end, s2Done);
  }
}

/** A synchronous write from a plain Float32Array; the context is synchronised around it as in bench.cu. */
function h2dPageable(ctx: BenchContext): MeasuredMetric {
  const n = BIG_BYTES / 4;
  const host = new Float32Array(n).fill(1); // every page touched before timing
  const dev = DeviceBuffer.alloc('f32', n, { label: 'bench pageable target' });
  try {
    const context = ctx.context;
    const one = (): number => {
      context.synchronize();
      const t0 = performance.now();
      dev.write(host);
      context.synchronize();
      return BIG_BYTES / 1e9 / ((performance.now() - t0) / 1e3);
    };
    return {
      pass: repeated(ctx.timing, 1, one),
      notes: ['DeviceBuffer.write(Float32Array) without a stream (cuMemcpyHtoD)'],
    };
  } finally {
    disposeAll(dev);
  }
}

function smallCopyRoundtrip(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench small_copy' });
  const hSrc = HostBuffer.alloc('u8', SMALL_BYTES, { label: 'bench small src' });
  const hDst = HostBuffer.alloc('u8', SMALL_BYTES, { label: 'bench small dst' });
  const dev = DeviceBuffer.alloc('u8', SMALL_BYTES, { label: 'bench small dev' });
  try {
    hSrc.array.fill(1);
    const opts = { stream: s };
    const body = (): void => {
      dev.write(hSrc, opts);
      dev.read(hDst, opts);
      s.synchronize();
    };
    const raw = rawSmallCopy(hSrc, hDst, dev, SMALL_BYTES, s);
    const f = pairedPerIterWithFloor(
      ctx.timing,
      'small_copy_roundtrip_us',
      body,
      raw,
      'cuMemcpyHtoDAsync + cuMemcpyDtoHAsync + cuStreamSynchronize',
      ctx.log,
    );
    return { pass: f.pass, floor: f.floor, notes: f.notes };
  } finally {
    disposeAll(s, hSrc, hDst, dev);
  }
}

/**
 * tscuda's stream-ordered allocator (size classes over a MemoryPool, reuse in stream order)
 * against C's cuMemAllocAsync/cuMemFreeAsync; the raw DeviceBuffer.alloc({ stream }) path,
 * one driver allocation and one owning object per call, is measured too and given in the notes.
 */
function allocFreeAsync(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench alloc_free' });
  const allocator = new StreamOrderedAllocator({ label: 'bench allocator' });
  try {
    const descriptor = { stream: s };
    const raw = loopMetric(
      ctx.timing,
      (n) => {
        for (let i = 0; i < n; i++) DeviceBuffer.alloc('u8', ALLOC_BYTES, descriptor).dispose();
      },
      () => s.synchronize(),
    );
    const f = pairedWithFloor(
      ctx.timing,
      'alloc_free_async_us',
      (n) => {
        for (let i = 0; i < n; i++) allocator.freeForStream(allocator.allocate('u8', ALLOC_BYTES, s), s);
      },
      rawAllocFree(ALLOC_BYTES, s),
      () => s.synchronize(),
      'cuMemAllocAsync + cuMemFreeAsync (1 MiB)',
      ctx.log,
    );
    return {
      pass: f.pass,
      floor: f.floor,
      notes: [
        ...f.notes,
        'StreamOrderedAllocator.allocate(u8, 1 MiB, stream) + freeForStream on the same stream (size-class reuse, no driver call once warm)',
        `raw DeviceBuffer.alloc(u8, 1 MiB, { stream }).dispose() (cuMemAllocAsync/cuMemFreeAsync + an owning object): ${raw.median.toFixed(3)} us`,
      ],
    };
  } finally {
    allocator.dispose();
    disposeAll(s);
  }
}

/**
 * Batched 1D FFT, 8192 transforms of 4096 points, forward, in place; the input is refilled
 * (untimed, one fill kernel, as bench.cu does) before each timed execution.
 */
function fft(ctx: BenchContext, type: Extract<FftType, 'C2C' | 'Z2Z'>): MeasuredMetric {
  const elems = FFT_N * FFT_BATCH;
  const reals = elems * 2;
  const s = new Stream({ label: `bench fft ${type}` });
  const data = DeviceBuffer.alloc(type === 'C2C' ? 'c64' : 'c128', elems, { label: `bench fft ${type} data` });
  const t0 = new Event({ timing: true, label: 'bench fft t0' });
  const t1 = new Event({ timing: true, label: 'bench fft t1' });
  let plan: FftPlan | undefined;
  try {
    plan = FftPlan.create({
      shape: [FFT_N],
      type,
      batch: FFT_BATCH,
      stream: s,
      label: `bench ${type} ${FFT_N}x${FFT_BATCH}`,
    });
    const fillCfg: LaunchConfig = { grid: 1024, block: 256, stream: s };
    const fill =
      type === 'C2C'
        ? () => ctx.kernels.fillF32.launch(fillCfg, data, 0.01, reals)
        : () => ctx.kernels.fillF64.launch(fillCfg, data, 0.01, reals);
    const p = plan;
    const one = (): number => {
      fill();
      t0.record(s);
      p.forward(data);
      t1.record(s);
      t1.synchronize();
      return Event.elapsedMs(t0, t1);
    };
    return {
      pass: repeated(ctx.timing, 3, one),
      notes: [
        'FftPlan.create({ shape: [4096], batch: 8192 }).forward(data), in place; refilled with a constant (bench.cu: a pattern) before each run',
      ],
    };
  } finally {
    disposeAll(s, data, t0, t1, plan);
  }
}

/** In bench.cu's order. */
export const CORE_BENCHMARKS: readonly TscudaBenchmark[] = [
  single('launch_empty_us', launchEmpty),
  single('launch_4args_us', launch4Args),
  single('launch_sync_roundtrip_us', launchSyncRoundtrip),
  single('await_completion_us', awaitCompletion),
  single('event_record_us', eventRecord),
  single('event_query_us', eventQuery),
  single('h2d_pinned_gbps', (ctx) => pinnedCopy(ctx, 'h2d')),
  single('d2h_pinned_gbps', (ctx) => pinnedCopy(ctx, 'd2h')),
  single('bidir_pinned_gbps', bidirPinned),
  single('h2d_pageable_gbps', h2dPageable),
  single('small_copy_roundtrip_us', smallCopyRoundtrip),
  single('alloc_free_async_us', allocFreeAsync),
  single('graph_replay_per_kernel_us', graphReplay),
  single('coordinator_edge_us', coordinatorEdge),
  single('fft_c2c_4096x8192_ms', (ctx) => fft(ctx, 'C2C')),
  single('fft_z2z_4096x8192_ms', (ctx) => fft(ctx, 'Z2Z')),
];
