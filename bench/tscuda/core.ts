/**
 * tscuda's side of every metric bench/native/bench.cu measures, mirrored call for call:
 * same streams (non-blocking, created per metric), same sizes, same warm-ups, same shapes
 * (timing.ts). Where C calls the driver, these call tscuda's public runtime API.
 */
import { DeviceBuffer, Event, Stream } from '../../src/runtime/index.js';
import type { Kernel, LaunchConfig } from '../../src/runtime/index.js';
import { driver as driverApi } from '../../src/ffi/index.js';
import { coordinatorEdge } from './coordinator.js';
import { graphReplay } from './graph.js';
import {
  pairedWithFloor,
  pairedPerIterWithFloor,
  pairedPerIterWithFloorAsync,
  firstTime,
  loopMetric,
} from './timing.js';
import { rawLaunchAwait, rawLaunchLoop, rawLaunchSync } from './floors.js';
import { disposeAll, single, type BenchContext, type MeasuredMetric, type TscudaBenchmark } from './types.js';
import { allocFreeAsync, bidirPinned, fft, h2dPageable, pinnedCopy, smallCopyRoundtrip } from './core-copies.js';

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
