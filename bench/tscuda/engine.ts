/**
 * The job engine's benchmarks (issue 11):
 *   stft_job_gsamples_per_s           float32 series in engine-lent pinned arrays, flags stft + cycles
 *   stft_job_pcie_fraction            that rate over the PCIe bound measured in this run:
 *                                     min(pinned H2D, pinned D2H) GB/s / 4 B per sample
 *   stft_job_pageable_gsamples_per_s  the same job from plain (pageable) Float32Arrays
 *   cwt_job_gsamples_per_s            the wavelet flag: 128 Morlet frequencies over 64k-sample series, band-reduced on the GPU
 *   engine_event_loop_lag_p99_ms      p99 lateness of a 1 ms timer while the pinned STFT load runs
 *
 * The jobs are those of bench/peers/stft_job_peer.py (keep the constants equal). Each rate is
 * input samples per second of a closed loop (3 jobs in flight per lane: one waiting in the engine for each lane) over windows of
 * WINDOW_MS, median over the windows. Before any timing, the first job's results are compared
 * with float64 CPU references (engine-reference.ts): a wrong engine is "not measured", never fast.
 */
import { CudaError } from '../../src/ffi/index.js';
import { measureLinks } from '../../src/cli/commands/link-bound.js'; // private-path: the CLI's copy-bound measurement, the bound `tscuda demo` prints
import type { JobResult, JobSpec } from '../../src/engine/index.js';
import { startLagProbe } from '../harness/lag.js';
import { summarize } from '../harness/stats.js';
import { referenceCwtBandPower, referenceCycles, referenceFiltered, relativeL2 } from './engine-reference.js';
import { DEFAULT_LANE_DEPTH, JobEngine } from '../../src/engine/index.js';
import {
  STFT_B,
  STFT_N,
  FS,
  PASS_BAND,
  BANDS,
  PREVIEW_BINS,
  CWT_B,
  CWT_N,
  CWT_FREQS,
  CWT_CYCLES,
  CWT_FMIN,
  CWT_FMAX,
  CWT_BANDS,
  cwtFrequencies,
  jobData,
  stftSpec,
  cwtSpec,
  lend,
  pinnedStftSpec,
} from './engine-jobs.js';
import { lagPass } from './pipeline.js';
import {
  NotMeasured,
  type BenchContext,
  type MeasuredMetric,
  type TscudaBenchmark,
  type UnmeasuredMetric,
} from './types.js';

function intFromEnv(name: string, fallback: number, max: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1 || n > max)
    throw new RangeError(`${name} must be an integer in 1..${max}, got ${value}`);
  return n;
}

/** Engine lanes (streams); TSCUDA_BENCH_ENGINE_LANES overrides it to study the scaling (the results name the count). */
export const LANES = intFromEnv('TSCUDA_BENCH_ENGINE_LANES', 4, 64);
/** Jobs in flight per lane in the closed loop (TSCUDA_BENCH_ENGINE_IN_FLIGHT overrides it). */
export const IN_FLIGHT_PER_LANE = intFromEnv('TSCUDA_BENCH_ENGINE_IN_FLIGHT', 3, 16);
/** The engine's laneDepth (TSCUDA_BENCH_ENGINE_DEPTH overrides its default). */
export const LANE_DEPTH = intFromEnv('TSCUDA_BENCH_ENGINE_DEPTH', DEFAULT_LANE_DEPTH, 8);
export const WINDOW_MS = 400;
const MAX_WINDOWS = 8;
/** float32 end to end over 64k-point FFTs: the filtered wave within 1e-4 (relative L2) of float64. */
const FILTERED_TOLERANCE = 1e-4;
const BAND_POWER_TOLERANCE = 1e-3;
const PCIE_BYTES = 256 * 2 ** 20;

/**
 * Pinned H2D and D2H GB/s of the bench's device, each alone and both at once (each way), from the
 * copy-bound measurement `tscuda demo` prints (src/cli/commands/link-bound.ts: median of copies of
 * 256 MiB). `boundGsamples` is the f32 job's one-way bound min(H2D, D2H) / 4 B (issue 11's
 * definition); `bothGsamples` the bound of its traffic, both directions at once, / 4 B.
 */
export function measurePcie(ctx: BenchContext): {
  h2d: number;
  d2h: number;
  both: number;
  boundGsamples: number;
  bothGsamples: number;
} {
  const { h2d, d2h, both } = measureLinks([ctx.context.device], PCIE_BYTES).perDevice[0]!;
  return { h2d, d2h, both, boundGsamples: Math.min(h2d, d2h) / 4, bothGsamples: both / 4 };
}

/**
 * Closed loop: `inputs.length` workers, each submitting its own input again as soon as its
 * previous job settled, for `windows` + 1 windows of WINDOW_MS (the first is a warm-up).
 * Returns input Gsamples/s per timed window.
 */
export async function closedLoop(
  engine: JobEngine,
  specs: readonly JobSpec[],
  windows: number,
  onTimed?: (phase: 'start' | 'end') => void,
): Promise<number[]> {
  const rates: number[] = [];
  for (let w = 0; w <= windows; w++) {
    if (w === 1) onTimed?.('start');
    const t0 = performance.now();
    const until = t0 + WINDOW_MS;
    let samples = 0;
    await Promise.all(
      specs.map(async (s) => {
        while (performance.now() < until) {
          await engine.submit(s).result;
          samples += s.data.length;
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    if (w > 0) rates.push(samples / seconds / 1e9);
  }
  onTimed?.('end');
  return rates;
}

/** Compares the first rows of a finished STFT job with the float64 references; throws NotMeasured when off. */
export function checkStft(result: JobResult, data: Float32Array): string {
  if (!result.filtered || !result.bandPowers)
    throw new NotMeasured('the stft + cycles job returned no filtered wave or no band powers');
  const n = STFT_N;
  let worstFiltered = 0;
  let worstBands = 0;
  for (const row of [0, STFT_B - 1]) {
    const x = data.subarray(row * n, (row + 1) * n);
    worstFiltered = Math.max(
      worstFiltered,
      relativeL2(result.filtered.subarray(row * n, (row + 1) * n), referenceFiltered(x, FS, PASS_BAND)),
    );
    const ref = referenceCycles(x, FS, BANDS);
    worstBands = Math.max(
      worstBands,
      relativeL2(result.bandPowers.subarray(row * BANDS.length, (row + 1) * BANDS.length), ref.bandPowers),
    );
    const dom = result.dominant?.[row];
    if (dom && Math.abs(dom.frequency - ref.dominant.frequency) > 1e-9 * FS) {
      throw new NotMeasured(
        `wrong result: row ${row}'s dominant cycle is at ${dom.frequency} Hz, the reference's at ${ref.dominant.frequency} Hz`,
      );
    }
  }
  if (!(worstFiltered <= FILTERED_TOLERANCE))
    throw new NotMeasured(
      `wrong result: the filtered wave differs from the float64 reference by ${worstFiltered.toExponential(2)} (relative L2; tolerance ${FILTERED_TOLERANCE})`,
    );
  if (!(worstBands <= BAND_POWER_TOLERANCE))
    throw new NotMeasured(
      `wrong result: band powers differ from the float64 reference by ${worstBands.toExponential(2)} (relative L2; tolerance ${BAND_POWER_TOLERANCE})`,
    );
  return `first job vs float64 CPU reference (rows 0 and ${STFT_B - 1}): filtered wave relative L2 ${worstFiltered.toExponential(2)}, band powers ${worstBands.toExponential(2)}`;
}

/** Output samples of the CWT spot check: both edges (where the zero padding matters) and inside. */
const CWT_CHECK_SAMPLES = [0, 1, 977, 4096, 12345, 32768, 50000, CWT_N - 2, CWT_N - 1];

/**
 * Checks the wavelet job: every value finite and >= 0, and rows 0 and B-1 at CWT_CHECK_SAMPLES
 * against a float64 direct convolution with the same wavelets.
 */
function checkCwt(result: JobResult, data: Float32Array, freqs: readonly number[]): string {
  const p = result.waveletPower;
  const nb = CWT_BANDS.length;
  const expected = CWT_B * nb * CWT_N;
  if (!p || p.length !== expected)
    throw new NotMeasured(
      `the wavelet job returned ${p ? p.length : 'no'} values, expected B x bands x N = ${expected}`,
    );
  for (let i = 0; i < p.length; i++) {
    const v = p[i]!;
    if (!(v >= 0) || !Number.isFinite(v)) throw new NotMeasured(`wrong result: wavelet power ${i} is ${v}`);
  }
  let worst = 0;
  for (const row of [0, CWT_B - 1]) {
    const ref = referenceCwtBandPower(
      data.subarray(row * CWT_N, (row + 1) * CWT_N),
      FS,
      freqs,
      CWT_CYCLES,
      CWT_BANDS,
      CWT_CHECK_SAMPLES,
    );
    const got = new Float64Array(ref.length);
    for (let q = 0; q < nb; q++) {
      CWT_CHECK_SAMPLES.forEach((t, s) => (got[q * CWT_CHECK_SAMPLES.length + s] = p[(row * nb + q) * CWT_N + t]!));
    }
    worst = Math.max(worst, relativeL2(got, ref));
  }
  if (!(worst <= BAND_POWER_TOLERANCE))
    throw new NotMeasured(
      `wrong result: the band-reduced wavelet power differs from a float64 direct convolution by ${worst.toExponential(2)} (relative L2 at ${CWT_CHECK_SAMPLES.length} samples of rows 0 and ${CWT_B - 1}; tolerance ${BAND_POWER_TOLERANCE})`,
    );
  return `first job vs float64 direct convolution (rows 0 and ${CWT_B - 1}, ${CWT_CHECK_SAMPLES.length} samples each): relative L2 ${worst.toExponential(2)}`;
}

/** How the engine's lanes ran the jobs' compute (captured into CUDA graphs and replayed, or call by call). */
export function graphsNote(engine: JobEngine): string {
  const c = engine.stats().computeGraphs;
  return c
    ? `compute graphs: ${c.replayed} jobs replayed, ${c.captured} captured, ${c.eager} run call by call`
    : 'compute graphs off';
}

export function statsNote(engine: JobEngine): string {
  const s = engine.stats();
  const lanes = s.lanes
    .map((l) => `lane ${l.lane}: ${l.jobs} jobs, busy ${(100 * l.gpuBusyFraction).toFixed(0)}%`)
    .join('; ');
  return `engine.stats(): ${s.jobs} jobs, avg ${s.avgJobMs.toFixed(2)} ms, p99 ${s.p99JobMs.toFixed(2)} ms per job; ${lanes}`;
}

export type Results = Partial<Record<string, MeasuredMetric | UnmeasuredMetric>>;

/**
 * Runs one part of the benchmark; a failure (a wrong result, a missing API, a job error) marks
 * that part's metrics not measured with the reason and lets the other parts run. A sticky CUDA
 * error is rethrown: nothing else can run in this process after it.
 */
export async function part(out: Results, names: readonly string[], run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (e) {
    if (e instanceof CudaError && e.sticky) throw e;
    const why = e instanceof NotMeasured ? e.message : `failed: ${e instanceof Error ? e.message : String(e)}`;
    for (const n of names) out[n] ??= { notMeasured: why };
  }
}

async function stftMetrics(ctx: BenchContext, out: Results): Promise<void> {
  const windows = Math.max(3, Math.min(ctx.timing.reps, MAX_WINDOWS));
  const pcie = measurePcie(ctx);
  const shape = `${LANES} lanes of depth ${LANE_DEPTH}, ${LANES * IN_FLIGHT_PER_LANE} jobs in flight of ${STFT_B} x ${STFT_N} float32 samples, flags stft + cycles (${BANDS.length} bands, bandWaves false), ${windows} windows of ${WINDOW_MS} ms (src/engine)`;
  // One job's series, copied into every in-flight input (generating each would take seconds).
  const base = jobData(STFT_B, STFT_N, 11);
  await part(out, ['stft_job_gsamples_per_s', 'stft_job_pcie_fraction', 'engine_event_loop_lag_p99_ms'], async () => {
    const engine = new JobEngine({
      device: ctx.device,
      lanes: LANES,
      laneDepth: LANE_DEPTH,
      precision: 'f32',
      maxQueued: 4 * LANES * IN_FLIGHT_PER_LANE,
      label: 'bench stft',
    });
    try {
      const specs = Array.from({ length: LANES * IN_FLIGHT_PER_LANE }, () => pinnedStftSpec(engine, base));
      const check = checkStft(await engine.submit(specs[0]!).result, base);
      let lags: number[] = [];
      let probe: ReturnType<typeof startLagProbe> | undefined;
      const rates = await closedLoop(engine, specs, windows, (phase) => {
        if (phase === 'start') probe = startLagProbe(1);
        else lags = probe?.stop() ?? [];
      });
      const median = summarize(rates).median;
      const bound =
        `PCIe bound ${pcie.boundGsamples.toFixed(2)} Gsamples/s (pinned H2D ${pcie.h2d.toFixed(1)} GB/s, D2H ${pcie.d2h.toFixed(1)} GB/s, this run); ` +
        `with both directions at once (the job's traffic) ${pcie.both.toFixed(1)} GB/s each way: ${pcie.bothGsamples.toFixed(2)} Gsamples/s, of which the job reached ${(median / pcie.bothGsamples).toFixed(2)}`;
      out.stft_job_gsamples_per_s = {
        pass: summarize(rates),
        notes: [
          `input and results in engine-lent pinned arrays (JobSpec.into); ${shape}`,
          check,
          bound,
          statsNote(engine),
          graphsNote(engine),
        ],
      };
      out.stft_job_pcie_fraction = { pass: summarize(rates.map((r) => r / pcie.boundGsamples)), notes: [bound] };
      out.engine_event_loop_lag_p99_ms =
        lags.length > 0
          ? {
              pass: lagPass(lags),
              notes: [`a 1 ms timer during the timed windows of stft_job_gsamples_per_s; ${lags.length} ticks`],
            }
          : { notMeasured: 'no timer ticks recorded' };
    } finally {
      await engine.close();
    }
  });
  // The same job from plain arrays: the engine copies each into its lane's pinned buffer.
  await part(out, ['stft_job_pageable_gsamples_per_s'], async () => {
    const plain = new JobEngine({
      device: ctx.device,
      lanes: LANES,
      laneDepth: LANE_DEPTH,
      precision: 'f32',
      maxQueued: 4 * LANES * IN_FLIGHT_PER_LANE,
      label: 'bench stft pageable',
    });
    try {
      // Preallocated plain result arrays (JobSpec.into), as the peers preallocate their numpy outputs.
      const specs = Array.from({ length: LANES * IN_FLIGHT_PER_LANE }, (): JobSpec => {
        const into = {
          filtered: new Float32Array(STFT_B * STFT_N),
          spectrum: new Float32Array(STFT_B * PREVIEW_BINS),
          bandPowers: new Float64Array(STFT_B * BANDS.length),
        };
        return { ...stftSpec(Float32Array.from(base)), into };
      });
      const check = checkStft(await plain.submit(specs[0]!).result, base);
      const rates = await closedLoop(plain, specs, windows);
      out.stft_job_pageable_gsamples_per_s = {
        pass: summarize(rates),
        notes: [
          `plain Float32Arrays in, preallocated plain result arrays out (JobSpec.into; the engine stages both through its lanes' pinned buffers); ${shape}`,
          check,
        ],
      };
    } finally {
      await plain.close();
    }
  });
}

async function cwtMetric(ctx: BenchContext): Promise<MeasuredMetric> {
  const windows = Math.max(3, Math.min(ctx.timing.reps, MAX_WINDOWS));
  const freqs = cwtFrequencies();
  const engine = new JobEngine({
    device: ctx.device,
    lanes: LANES,
    precision: 'f32',
    maxQueued: 4 * LANES,
    label: 'bench cwt',
  });
  try {
    const base = jobData(CWT_B, CWT_N, 13);
    const specs = Array.from({ length: LANES }, (): JobSpec => {
      const data = lend(engine, CWT_B * CWT_N);
      data.set(base);
      return { ...cwtSpec(data, freqs), into: { waveletPower: lend(engine, CWT_B * CWT_BANDS.length * CWT_N) } };
    });
    const check = checkCwt(await engine.submit(specs[0]!).result, base, freqs);
    const rates = await closedLoop(engine, specs, windows);
    const shape = `${LANES} lanes, ${LANES} jobs in flight of ${CWT_B} x ${CWT_N} samples, ${CWT_FREQS} Morlet frequencies ${CWT_FMIN}..${CWT_FMAX} Hz (${CWT_CYCLES} cycles) reduced on the GPU to ${CWT_BANDS.length} bands, ${windows} windows of ${WINDOW_MS} ms (src/engine)`;
    return { pass: summarize(rates), notes: [shape, check, statsNote(engine)] };
  } finally {
    await engine.close();
  }
}

export const ENGINE_BENCHMARK: TscudaBenchmark = {
  names: [
    'stft_job_gsamples_per_s',
    'stft_job_pcie_fraction',
    'stft_job_pageable_gsamples_per_s',
    'cwt_job_gsamples_per_s',
    'engine_event_loop_lag_p99_ms',
  ],
  run: async (ctx) => {
    const out: Results = {};
    await stftMetrics(ctx, out);
    await part(out, ['cwt_job_gsamples_per_s'], async () => {
      out.cwt_job_gsamples_per_s = await cwtMetric(ctx);
    });
    return out;
  },
};
