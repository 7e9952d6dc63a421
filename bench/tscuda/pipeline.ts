/**
 * pipeline_overlap_efficiency, pipeline_speedup_vs_sequential and event_loop_lag_p99_ms.
 *
 * The pipeline is issue 5's balanced workload, `runBalancedPipeline({ steps, bytesPerStep,
 * mode })` -> { totalMs, perStageMs, overlapEfficiency } from src/pipeline/balanced.ts:
 * sequential and triple-buffered runs alternate (so drift cancels in each pair's ratio);
 * efficiency is the triple run's own overlapEfficiency, speedup sequential.totalMs /
 * triple.totalMs, each the median over pairs.
 *
 * Event-loop lag: a chain of 1 ms timers runs while triple-buffered pipelines run back to
 * back for LAG_WINDOW_MS; the metric is the 99th percentile of how late the timers fire.
 * Until runBalancedPipeline exists, the lag is measured during the harness's own
 * triple-buffered loop over the runtime (upload, scale kernel, download on three streams,
 * the host awaiting slot events), and the two pipeline metrics are not measured.
 */
import { DeviceBuffer } from '../../src/runtime/memory/device-buffer.js';
import { Event } from '../../src/runtime/event.js';
import { HostBuffer } from '../../src/runtime/memory/host-buffer.js';
import { Stream } from '../../src/runtime/stream.js';
import { startLagProbe } from '../harness/lag.js';
import { percentile, summarize, type PassSummary } from '../harness/stats.js';
import { findExport, isObject, type Fn } from './optional.js';
import { disposeAll, NotMeasured, type BenchContext, type MeasuredMetric, type TscudaBenchmark, type UnmeasuredMetric } from './types.js';

export const PIPELINE_STEPS = 64;
export const PIPELINE_BYTES_PER_STEP = 16 * 2 ** 20;
export const LAG_WINDOW_MS = 1500;
const LAG_SLICES = 5;
export const BALANCED_FILES = ['src/pipeline/balanced.ts', 'src/pipeline/index.ts', 'src/index.ts'];

interface PipelineRun {
  totalMs: number;
  overlapEfficiency: number;
}

function asRun(x: unknown, mode: string): PipelineRun {
  if (!isObject(x) || typeof x.totalMs !== 'number' || typeof x.overlapEfficiency !== 'number') {
    throw new NotMeasured(`runBalancedPipeline({ mode: '${mode}' }) did not return { totalMs, overlapEfficiency } numbers`);
  }
  return { totalMs: x.totalMs, overlapEfficiency: x.overlapEfficiency };
}

/** Called around the timed steps of a run (runBalancedPipeline's onTimedStart/onTimedEnd). */
interface TimedHooks {
  onTimedStart?: () => void;
  onTimedEnd?: () => void;
}

async function findBalanced(ctx: BenchContext): Promise<{ run: (mode: 'sequential' | 'triple', hooks?: TimedHooks) => Promise<PipelineRun>; file: string } | { missing: string }> {
  let found: { value: unknown; file: string };
  try {
    found = await findExport(ctx.root, 'runBalancedPipeline', BALANCED_FILES);
  } catch (e) {
    if (e instanceof NotMeasured) return { missing: e.message };
    throw e;
  }
  if (typeof found.value !== 'function') return { missing: `runBalancedPipeline in ${found.file} is not a function` };
  const fn = found.value as Fn;
  return {
    file: found.file,
    run: async (mode, hooks) => asRun(await fn({ steps: PIPELINE_STEPS, bytesPerStep: PIPELINE_BYTES_PER_STEP, mode, ...hooks }), mode),
  };
}

/**
 * The harness's own triple-buffered loop, used for the lag only while runBalancedPipeline is
 * missing: slot i's upload waits until its previous download finished (the host awaits that
 * event), compute waits for the upload, download for the compute, across three streams.
 * Buffers are made before `run` (outside the timed window) and freed by `dispose`.
 */
function fallbackPipeline(ctx: BenchContext): { run: (untilMs: number) => Promise<number>; dispose: () => void } {
  const n = PIPELINE_BYTES_PER_STEP / 4;
  const up = new Stream({ label: 'bench upload' });
  const comp = new Stream({ label: 'bench compute' });
  const down = new Stream({ label: 'bench download' });
  const made: { dispose(): void }[] = [up, comp, down];
  const dispose = (): void => disposeAll(...made);
  try {
    const k = ctx.kernels.scaleF32;
    const slots = [0, 1, 2].map((i) => {
      const slot = {
        hostIn: HostBuffer.alloc('f32', n, { label: `bench in ${i}` }),
        hostOut: HostBuffer.alloc('f32', n, { label: `bench out ${i}` }),
        devIn: DeviceBuffer.alloc('f32', n, { label: `bench dev in ${i}` }),
        devOut: DeviceBuffer.alloc('f32', n, { label: `bench dev out ${i}` }),
        uploaded: new Event({ label: `bench uploaded ${i}` }),
        computed: new Event({ label: `bench computed ${i}` }),
        free: new Event({ label: `bench free ${i}` }),
        used: false,
      };
      made.push(slot.hostIn, slot.hostOut, slot.devIn, slot.devOut, slot.uploaded, slot.computed, slot.free);
      slot.hostIn.array.fill(1);
      return slot;
    });
    const cfg = { grid: 1024, block: 256, stream: comp };
    const onUp = { stream: up };
    const onDown = { stream: down };
    const run = async (untilMs: number): Promise<number> => {
      let steps = 0;
      for (; performance.now() < untilMs; steps++) {
        const slot = slots[steps % 3]!;
        if (slot.used) await slot.free.done();
        slot.devIn.write(slot.hostIn, onUp);
        slot.uploaded.record(up);
        comp.waitEvent(slot.uploaded);
        k.launch(cfg, slot.devOut, slot.devIn, 2.0, n);
        slot.computed.record(comp);
        down.waitEvent(slot.computed);
        slot.devOut.read(slot.hostOut, onDown);
        slot.free.record(down);
        slot.used = true;
      }
      await down.done();
      return steps;
    };
    return { run, dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}

async function lagDuring(work: () => Promise<void>): Promise<number[]> {
  const probe = startLagProbe(1);
  try {
    await work();
  } catch (e) {
    probe.stop();
    throw e;
  }
  return probe.stop();
}

export const PIPELINE_BENCHMARK: TscudaBenchmark = {
  names: ['pipeline_overlap_efficiency', 'pipeline_speedup_vs_sequential', 'event_loop_lag_p99_ms'],
  run: async (ctx) => {
    const out: Partial<Record<string, MeasuredMetric | UnmeasuredMetric>> = {};
    const balanced = await findBalanced(ctx);
    const shape = `${PIPELINE_STEPS} steps of ${PIPELINE_BYTES_PER_STEP / 2 ** 20} MiB`;
    if ('missing' in balanced) {
      const own = fallbackPipeline(ctx);
      let steps = 0;
      let lags: number[];
      try {
        await own.run(performance.now() + 100); // warm-up
        const deadline = performance.now() + LAG_WINDOW_MS;
        lags = await lagDuring(async () => {
          steps = await own.run(deadline);
        });
      } finally {
        own.dispose();
      }
      out.pipeline_overlap_efficiency = { notMeasured: balanced.missing };
      out.pipeline_speedup_vs_sequential = { notMeasured: balanced.missing };
      out.event_loop_lag_p99_ms = {
        pass: lagPass(lags),
        notes: [`during the harness's own triple-buffered loop over the runtime (${steps} steps of ${PIPELINE_BYTES_PER_STEP / 2 ** 20} MiB in ${LAG_WINDOW_MS} ms), since ${balanced.missing}`, `${lags.length} ticks of a 1 ms timer`],
      };
      return out;
    }
    await balanced.run('sequential'); // warm-up: plans, buffers, JIT
    await balanced.run('triple');
    const pairs = Math.max(3, Math.min(ctx.timing.reps, 7));
    const speedups: number[] = [];
    const efficiencies: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const seq = await balanced.run('sequential');
      const tri = await balanced.run('triple');
      speedups.push(seq.totalMs / tri.totalMs);
      efficiencies.push(tri.overlapEfficiency);
    }
    const how = `runBalancedPipeline (${balanced.file}), ${shape}, ${pairs} sequential/triple pairs`;
    out.pipeline_overlap_efficiency = { pass: summarize(efficiencies), notes: [how] };
    out.pipeline_speedup_vs_sequential = { pass: summarize(speedups), notes: [how] };
    // Lag while the pipeline runs: each run's buffer setup and calibration (blocking pinned
    // allocations) are outside the probe's windows.
    const deadline = performance.now() + LAG_WINDOW_MS;
    let runs = 0;
    const lags: number[] = [];
    while (performance.now() < deadline) {
      let probe: ReturnType<typeof startLagProbe> | undefined;
      await balanced.run('triple', {
        onTimedStart: () => (probe = startLagProbe(1)),
        onTimedEnd: () => lags.push(...(probe?.stop() ?? [])),
      });
      runs++;
    }
    out.event_loop_lag_p99_ms = { pass: lagPass(lags), notes: [`during the timed steps of ${runs} triple-buffered runBalancedPipeline runs (setup excluded); ${lags.length} ticks of a 1 ms timer`] };
    return out;
  },
};

/**
 * The p99 of all ticks' lateness; the spread is that of the p99s of consecutive slices of
 * the ticks (LAG_SLICES of them), relative to the whole p99, so the ± says how steady it was.
 */
export function lagPass(lags: readonly number[]): PassSummary {
  if (lags.length === 0) throw new Error('no timer samples');
  const p99 = percentile(lags, 0.99);
  const per = Math.max(1, Math.floor(lags.length / LAG_SLICES));
  const slices: number[] = [];
  for (let i = 0; i < LAG_SLICES && i * per < lags.length; i++) {
    slices.push(percentile(lags.slice(i * per, i === LAG_SLICES - 1 ? lags.length : (i + 1) * per), 0.99));
  }
  const spread = slices.length > 1 && p99 > 0 ? (percentile(slices, 0.9) - percentile(slices, 0.1)) / p99 : 0;
  return { median: p99, spread, samples: lags.length };
}
