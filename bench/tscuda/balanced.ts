/**
 * A balanced workload for the benchmarks: upload, compute and download of one step take about
 * the same time, so a triple-buffered run can approach one stage's time per step while a
 * sequential run takes all three. Compute is a spin kernel calibrated to the copies' time.
 *
 * The copies are timed the way the overlapped pipeline runs them: an upload and a download at
 * once, on two streams, each timed by its own events. PCIe carries both directions at once but
 * not each at its one-way rate (H100: ~55 GB/s one way, ~45 each way when both run), so copies
 * timed alone would call a stage 20 % shorter than it can ever be inside the pipeline, and a
 * perfect overlap would score ~0.82. Both figures are returned; the one-way one is noted.
 */
import { percentile } from '../harness/stats.js';
import { DeviceBuffer, Device, Event, HostBuffer, Stream } from '../../src/runtime/index.js';
import { loadBasicKernels } from '../../test/kernels/launchers.generated.js';
import type { Profiler } from '../../src/orchestration/index.js';
import { ManagedContext } from '../../src/pipeline/index.js';

export interface BalancedPipelineOptions {
  steps: number;
  /** Bytes uploaded, and bytes downloaded, per step. */
  bytesPerStep: number;
  /** 'sequential': ManagedContext in sync mode; 'triple': in triple-buffered mode. */
  mode: 'sequential' | 'triple';
  device?: Device | number;
  /** Triple mode's slots (ManagedContext `slots`; default its own). */
  slots?: number;
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
  /**
   * Steady-state time per iteration: from the first timed step's result to the last one's, over
   * the steps between. Unlike msPerStep it leaves out the pipeline's fill and drain (the first
   * result needs all three stages; the last upload runs with nothing beside it).
   */
  msPerIteration: number;
  /** Each stage as the overlapped pipeline runs it (upload and download at once), measured with timing events before the run (medians). */
  perStageMs: StageTimes;
  /** The copies each timed alone (one direction on the link at a time). */
  oneWayStageMs: StageTimes;
  /** slowest stage (perStageMs) / msPerIteration: 1 means every iteration cost only its slowest stage. */
  overlapEfficiency: number;
  /** The same against the stages timed one way at a time: bounded by the link's two-way/one-way rate. */
  oneWayOverlapEfficiency: number;
}

const CALIBRATION_REPS = 7;

export async function runBalancedPipeline(options: BalancedPipelineOptions): Promise<BalancedPipelineResult> {
  const { steps, bytesPerStep, mode } = options;
  if (!Number.isInteger(steps) || steps < 1)
    throw new RangeError(`runBalancedPipeline: steps must be a positive integer, got ${steps}`);
  if (!Number.isInteger(bytesPerStep) || bytesPerStep < 4)
    throw new RangeError(`runBalancedPipeline: bytesPerStep must be an integer >= 4, got ${bytesPerStep}`);
  if (mode !== 'sequential' && mode !== 'triple')
    throw new TypeError(`runBalancedPipeline: mode must be 'sequential' or 'triple', got ${String(mode)}`);
  const device = typeof options.device === 'object' ? options.device : Device.get(options.device ?? 0);
  const context = device.context;
  const length = Math.ceil(bytesPerStep / 4);
  const kernels = loadBasicKernels({ context });
  try {
    const { together: perStageMs, oneWay: oneWayStageMs } = await calibrateCopies(device, length);
    const spinNs = BigInt(Math.round(((perStageMs.upload + perStageMs.download) / 2) * 1e6));
    perStageMs.compute = await timeStage(device, CALIBRATION_REPS, (s) =>
      kernels.spin_ns({ grid: 1, block: 1, stream: s }, spinNs),
    );
    oneWayStageMs.compute = perStageMs.compute;
    using managed = new ManagedContext<'f32', 'f32'>({
      mode: mode === 'triple' ? 'triple' : 'sync',
      device,
      ...(options.slots === undefined ? {} : { slots: options.slots }),
      label: `balanced ${mode}`,
      ...(options.profiler ? { profiler: options.profiler } : {}),
      step: {
        config: { dtype: 'f32', length },
        telemetry: { dtype: 'f32', length },
        compute: ({ stream }) => kernels.spin_ns({ grid: 1, block: 1, stream }, spinNs),
      },
    });
    // The staging keeps whatever it held: the host-side fill and read are not what is measured.
    let resultAt: number[] = [];
    const noteResult = (): void => {
      resultAt.push(performance.now());
    };
    const run = async (n: number): Promise<void> => {
      resultAt = [];
      // All settle before any error is thrown, so nothing is in flight when the context is disposed.
      const results = await Promise.allSettled(
        Array.from({ length: n }, () => managed.tripleBufferedStep(leaveAsIs, noteResult)),
      );
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
    const slowest = (t: StageTimes): number => Math.max(t.upload, t.compute, t.download);
    const msPerIteration = steps > 1 ? (resultAt[resultAt.length - 1]! - resultAt[0]!) / (steps - 1) : totalMs;
    return {
      mode,
      steps,
      bytesPerStep,
      totalMs,
      msPerStep: totalMs / steps,
      msPerIteration,
      perStageMs,
      oneWayStageMs,
      overlapEfficiency: slowest(perStageMs) / msPerIteration,
      oneWayOverlapEfficiency: slowest(oneWayStageMs) / msPerIteration,
    };
  } finally {
    kernels.module.dispose();
  }
}

function leaveAsIs(): void {}

/** The copies of one step: each alone (one way), and an upload and a download at once on two streams (as the pipeline overlaps them). */
async function calibrateCopies(device: Device, length: number): Promise<{ oneWay: StageTimes; together: StageTimes }> {
  const context = device.context;
  using hostIn = HostBuffer.alloc('f32', length, { context, label: 'balanced calibration (host in)' });
  using hostOut = HostBuffer.alloc('f32', length, { context, label: 'balanced calibration (host out)' });
  using input = DeviceBuffer.alloc('f32', length, { context, label: 'balanced calibration (input)' });
  using output = DeviceBuffer.alloc('f32', length, { context, label: 'balanced calibration (output)' });
  hostIn.array.fill(1);
  const upload = await timeStage(device, CALIBRATION_REPS, (stream) => input.write(hostIn, { stream }));
  const download = await timeStage(device, CALIBRATION_REPS, (stream) => output.read(hostOut, { stream }));
  const together = await timeTogether(
    device,
    CALIBRATION_REPS,
    (stream) => input.write(hostIn, { stream }),
    (stream) => output.read(hostOut, { stream }),
  );
  return {
    oneWay: { upload, compute: 0, download },
    together: { upload: together[0], compute: 0, download: together[1] },
  };
}

/** Medians over `reps` runs (after one warm-up) of `a` and `b` enqueued at once on two streams that start together, each timed by its own events. */
async function timeTogether(
  device: Device,
  reps: number,
  a: (stream: Stream) => void,
  b: (stream: Stream) => void,
): Promise<[number, number]> {
  const context = device.context;
  using sa = new Stream({ context, label: 'balanced calibration a' });
  using sb = new Stream({ context, label: 'balanced calibration b' });
  using go = new Event({ context });
  using startA = new Event({ context, timing: true });
  using endA = new Event({ context, timing: true });
  using startB = new Event({ context, timing: true });
  using endB = new Event({ context, timing: true });
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i <= reps; i++) {
    go.record(sa);
    sb.waitEvent(go);
    startA.record(sa);
    startB.record(sb);
    a(sa);
    b(sb);
    endA.record(sa);
    endB.record(sb);
    await Promise.all([endA.done(), endB.done()]);
    if (i > 0) {
      ta.push(endA.elapsedSince(startA));
      tb.push(endB.elapsedSince(startB));
    }
  }
  return [percentile(ta, 0.5), percentile(tb, 0.5)];
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
  return percentile(times, 0.5);
}
