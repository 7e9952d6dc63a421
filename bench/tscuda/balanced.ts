/**
 * A balanced workload for the benchmarks: upload, compute and download of one step take about
 * the same time, so a triple-buffered run can approach one stage's time per step while a
 * sequential run takes all three. Compute is a spin kernel calibrated to the copies' time.
 */
import { DeviceBuffer } from '../../src/runtime/memory/device-buffer.js';
import type { Device } from '../../src/runtime/device.js';
import { resolveContext } from '../../src/runtime/defaults.js';
import { Event } from '../../src/runtime/event.js';
import { HostBuffer } from '../../src/runtime/memory/host-buffer.js';
import { loadBasicKernels } from '../../test/kernels/launchers.generated.js';
import type { Profiler } from '../../src/orchestration/profiler.js';
import { Stream } from '../../src/runtime/stream.js';
import { ManagedContext } from '../../src/pipeline/overlap/managed-context.js';

export interface BalancedPipelineOptions {
  steps: number;
  /** Bytes uploaded, and bytes downloaded, per step. */
  bytesPerStep: number;
  /** 'sequential': ManagedContext in sync mode; 'triple': in triple-buffered mode. */
  mode: 'sequential' | 'triple';
  device?: Device | number;
  /** Steps run before timing (default 3). */
  warmupSteps?: number;
  /** Receives the timeline of the timed steps (it is reset after the warm-up). */
  profiler?: Profiler;
  /** Called right before and right after the timed steps (setup and calibration are outside). */
  onTimedStart?: () => void;
  onTimedEnd?: () => void;
}

export interface StageTimes {
  upload: number;
  compute: number;
  download: number;
}

export interface BalancedPipelineResult {
  mode: 'sequential' | 'triple';
  steps: number;
  bytesPerStep: number;
  /** Wall-clock time of the timed steps, from the first call to the last result. */
  totalMs: number;
  msPerStep: number;
  /** Each stage alone, measured with timing events before the run (medians). */
  perStageMs: StageTimes;
  /** slowest stage x steps / totalMs: 1 means every step cost only its slowest stage. */
  overlapEfficiency: number;
}

const CALIBRATION_REPS = 7;

export async function runBalancedPipeline(options: BalancedPipelineOptions): Promise<BalancedPipelineResult> {
  const { steps, bytesPerStep, mode } = options;
  if (!Number.isInteger(steps) || steps < 1) throw new RangeError(`runBalancedPipeline: steps must be a positive integer, got ${steps}`);
  if (!Number.isInteger(bytesPerStep) || bytesPerStep < 4) throw new RangeError(`runBalancedPipeline: bytesPerStep must be an integer >= 4, got ${bytesPerStep}`);
  if (mode !== 'sequential' && mode !== 'triple') throw new TypeError(`runBalancedPipeline: mode must be 'sequential' or 'triple', got ${String(mode)}`);
  const context = resolveContext(options.device === undefined ? {} : { device: options.device });
  const device = context.device;
  const length = Math.ceil(bytesPerStep / 4);
  const kernels = loadBasicKernels({ context });
  try {
    const perStageMs = await calibrateCopies(device, length);
    const spinNs = BigInt(Math.round(((perStageMs.upload + perStageMs.download) / 2) * 1e6));
    perStageMs.compute = await timeStage(device, CALIBRATION_REPS, (s) => kernels.spin_ns({ grid: 1, block: 1, stream: s }, spinNs));
    using managed = new ManagedContext<'f32', 'f32'>({
      mode: mode === 'triple' ? 'triple' : 'sync',
      device,
      label: `balanced ${mode}`,
      ...(options.profiler ? { profiler: options.profiler } : {}),
      step: {
        config: { dtype: 'f32', length },
        telemetry: { dtype: 'f32', length },
        compute: ({ stream }) => kernels.spin_ns({ grid: 1, block: 1, stream }, spinNs),
      },
    });
    // The staging keeps whatever it held: the host-side fill and read are not what is measured.
    const run = async (n: number): Promise<void> => {
      // All settle before any error is thrown, so nothing is in flight when the context is disposed.
      const results = await Promise.allSettled(Array.from({ length: n }, () => managed.tripleBufferedStep(leaveAsIs, ignore)));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    };
    await run(options.warmupSteps ?? 3);
    await options.profiler?.reset();
    options.onTimedStart?.();
    const start = performance.now();
    await run(steps);
    const totalMs = performance.now() - start;
    options.onTimedEnd?.();
    const slowest = Math.max(perStageMs.upload, perStageMs.compute, perStageMs.download);
    return { mode, steps, bytesPerStep, totalMs, msPerStep: totalMs / steps, perStageMs, overlapEfficiency: (slowest * steps) / totalMs };
  } finally {
    kernels.module.dispose();
  }
}

function leaveAsIs(): void {}
function ignore(): void {}

async function calibrateCopies(device: Device, length: number): Promise<StageTimes> {
  const context = device.context;
  using host = HostBuffer.alloc('f32', length, { context, label: 'balanced calibration (host)' });
  using buffer = DeviceBuffer.alloc('f32', length, { context, label: 'balanced calibration' });
  host.array.fill(1);
  const upload = await timeStage(device, CALIBRATION_REPS, (stream) => buffer.write(host, { stream }));
  const download = await timeStage(device, CALIBRATION_REPS, (stream) => buffer.read(host, { stream }));
  return { upload, compute: 0, download };
}

/** Median over `reps` runs (after one warm-up) of what `enqueue` puts on a stream, by timing events. */
async function timeStage(device: Device, reps: number, enqueue: (stream: Stream) => void): Promise<number> {
  const context = device.context;
  using stream = new Stream({ context, label: 'balanced calibration' });
  using start = new Event({ context, timing: true });
  using end = new Event({ context, timing: true });
  const times: number[] = [];
  for (let i = 0; i <= reps; i++) {
    start.record(stream);
    enqueue(stream);
    end.record(stream);
    await end.done();
    if (i > 0) times.push(end.elapsedSince(start));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
