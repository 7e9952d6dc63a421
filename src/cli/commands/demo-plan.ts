/**
 * What `tscuda demo` computes on, and how it reports, without CUDA: the synthetic signal (a
 * multi-tone chirp with noise, trend and DC, with planted cycles of known period), matching the
 * engine's dominant cycles against the planted ones, the job-level timeline, and the text tables.
 * Tested in CI (test/unit/cli/demo-plan.test.ts).
 */
import type { Band, DominantCycle } from '../../engine/types.js';
import type { TimelineRecord } from '../../report/timeline.js';

/** The demo's sampling rate: a 1 kHz sensor. */
export const DEMO_FS = 1000;

/** One planted cycle: a cosine on an exact FFT bin of the series, so the engine can find it exactly. */
export interface PlantedCycle {
  bin: number;
  frequency: number;
  period: number;
  /** Amplitude on the series where it is the dominant cycle; others carry it at `backgroundAmplitude`. */
  amplitude: number;
  backgroundAmplitude: number;
  /** The band the cycles flag measures around it. */
  band: Band;
}

/** Frequencies the planted cycles sit near (Hz); each is moved to the nearest bin of the series length. */
export const PLANTED_NEAR_HZ = [2.5, 12, 40, 110] as const;
export const DOMINANT_AMPLITUDE = 2;
export const BACKGROUND_AMPLITUDE = 0.5;
export const CHIRP_HZ: readonly [number, number] = [20, 300];
export const CHIRP_AMPLITUDE = 0.4;
export const NOISE_SIGMA = 0.8;
export const TREND_PER_SECOND = 0.05;
export const DC = 10;
/** The stft flag's pass band: everything below the chirp's top, above the trend. */
export const DEMO_PASS_BAND: Band = [1, 150];

/** The planted cycles for series of `n` samples at `fs`. */
export function plantedCycles(n: number, fs = DEMO_FS): PlantedCycle[] {
  return PLANTED_NEAR_HZ.map((near) => {
    const bin = Math.max(1, Math.round((near * n) / fs));
    const frequency = (bin * fs) / n;
    const band: Band = [frequency * 0.8, Math.min(fs / 2, frequency * 1.25)];
    return {
      bin,
      frequency,
      period: 1 / frequency,
      amplitude: DOMINANT_AMPLITUDE,
      backgroundAmplitude: BACKGROUND_AMPLITUDE,
      band,
    };
  });
}

/** Which planted cycle dominates series `s` (they take turns). */
export function dominantIndexOf(series: number, planted: number): number {
  return series % planted;
}

/** Deterministic uniform generator (xorshift32) so the demo is the same every run. */
function generator(seed: number): () => number {
  let s = seed >>> 0 || 0x9e3779b9;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s + 0.5) / 4294967296;
  };
}

/**
 * `batch` series of `n` samples: DC + trend + a linear chirp (CHIRP_HZ over the series) + every
 * planted cycle (the series' dominant one at DOMINANT_AMPLITUDE, the others at
 * BACKGROUND_AMPLITUDE) + Gaussian noise. Written into `into` when given (an engine-lent array).
 */
export function synthesizeDemo(
  batch: number,
  n: number,
  options: { fs?: number | undefined; seed?: number | undefined; into?: Float32Array | undefined } = {},
): Float32Array {
  const fs = options.fs ?? DEMO_FS;
  const out = options.into ?? new Float32Array(batch * n);
  if (out.length !== batch * n)
    throw new RangeError(`synthesizeDemo: the output holds ${out.length} samples, expected ${batch} x ${n}`);
  const planted = plantedCycles(n, fs);
  const duration = n / fs;
  // The deterministic part of each series depends only on its dominant cycle: one wave per cycle.
  const base = planted.map((_, d) => {
    const w = new Float64Array(n);
    const [f0, f1] = CHIRP_HZ;
    for (let i = 0; i < n; i++) {
      const t = i / fs;
      let v =
        DC +
        TREND_PER_SECOND * t +
        CHIRP_AMPLITUDE * Math.sin(2 * Math.PI * (f0 * t + ((f1 - f0) * t * t) / (2 * duration)));
      planted.forEach((c, k) => {
        v += (k === d ? c.amplitude : c.backgroundAmplitude) * Math.cos((2 * Math.PI * c.bin * i) / n + 0.3 * (k + 1));
      });
      w[i] = v;
    }
    return w;
  });
  const uniform = generator(options.seed ?? 12345);
  for (let b = 0; b < batch; b++) {
    const w = base[dominantIndexOf(b, planted.length)]!;
    const row = b * n;
    for (let i = 0; i < n; i += 2) {
      // Box-Muller: two normals per pair of uniforms.
      const r = NOISE_SIGMA * Math.sqrt(-2 * Math.log(uniform()));
      const a = 2 * Math.PI * uniform();
      out[row + i] = w[i]! + r * Math.cos(a);
      if (i + 1 < n) out[row + i + 1] = w[i + 1]! + r * Math.sin(a);
    }
  }
  return out;
}

/** One planted cycle's verdict over the series where it dominates. */
export interface CycleMatch {
  planted: PlantedCycle;
  /** Series where it was planted dominant. */
  series: number;
  /** Of those, series whose dominant cycle the engine found on exactly the planted bin. */
  found: number;
  /** Median amplitude the engine reported on those series. */
  medianAmplitude: number;
  /** Largest |found - planted| frequency over those series, Hz. */
  worstFrequencyError: number;
}

function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Compares the engine's dominant cycle of each series with the one planted there. */
export function matchCycles(
  dominant: readonly DominantCycle[],
  planted: readonly PlantedCycle[],
  n: number,
  fs = DEMO_FS,
): CycleMatch[] {
  const binWidth = fs / n;
  return planted.map((p, k) => {
    const mine = dominant.filter((_, s) => dominantIndexOf(s, planted.length) === k);
    const hits = mine.filter((d) => Math.abs(d.frequency - p.frequency) < binWidth / 2);
    return {
      planted: p,
      series: mine.length,
      found: hits.length,
      medianAmplitude: median(hits.map((d) => d.amplitude)),
      worstFrequencyError: mine.reduce((w, d) => Math.max(w, Math.abs(d.frequency - p.frequency)), 0),
    };
  });
}

/** One finished job as the demo saw it, for the timeline. */
export interface JobTrace {
  id: number;
  lane: number;
  /** performance.now() at submit, ms. */
  submittedMs: number;
  queuedMs: number;
  runMs: number;
  gpuMs: number;
  samples: number;
}

/**
 * Timeline records of jobs: one bar per job on its lane's row, from when its lane started it to
 * when its result was ready (host clock), named with its GPU time. Only jobs ending in the last
 * `windowMs` before the latest end are kept, so the picture stays readable.
 */
export function jobTimelineRecords(jobs: readonly JobTrace[], windowMs = 250): TimelineRecord[] {
  if (jobs.length === 0) return [];
  const ends = jobs.map((j) => j.submittedMs + j.queuedMs + j.runMs);
  const last = Math.max(...ends);
  const records: TimelineRecord[] = [];
  jobs.forEach((j, i) => {
    const start = j.submittedMs + j.queuedMs;
    const end = ends[i]!;
    if (end < last - windowMs) return;
    records.push({
      stream: `lane ${j.lane}`,
      streamOrder: j.lane,
      kind: 'other',
      name: `job ${j.id}: ${(j.samples / 1e6).toFixed(2)} M samples, GPU ${j.gpuMs.toFixed(2)} ms`,
      startMs: start,
      endMs: Math.max(end, start + 1e-3),
      id: j.id,
    });
  });
  const t0 = Math.min(...records.map((r) => r.startMs));
  for (const r of records) {
    r.startMs -= t0;
    r.endMs -= t0;
  }
  return records;
}

/** Left-aligned first column, right-aligned others; a rule under the header. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  const line = (r: readonly string[]): string =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const [head, ...body] = rows;
  return [line(head ?? []), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** '12.3' / '0.0456': about three significant digits. */
export function fmt(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-4) return v.toExponential(2);
  return v.toFixed(Math.max(0, digits - 1 - Math.floor(Math.log10(a))));
}

/** The demo's settings. */
export interface DemoOptions {
  /** Seconds of the timed multi-lane run. */
  seconds: number;
  lanes: number;
  /** Output folder. */
  out: string;
  /** Series per job and samples per series. */
  batch: number;
  length: number;
  /** The GPUs to run on (--devices / --device): every one, or these ordinals; resolved by resolvePlacement when the demo runs. */
  devices: 'all' | number[];
  /** No progress bar. */
  quiet: boolean;
  /** The summary as one JSON object on stdout (the tables go to stderr). */
  json: boolean;
  help: boolean;
}
