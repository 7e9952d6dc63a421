/**
 * The queue bench's jobs and how they are driven, shared by the bench and its client processes:
 * the STFT mix (16 x 16384 f32, 1 MiB each), the small job of the latency metric (4 x 4096), a
 * window of jobs in flight, and one job at a time.
 */
import type { JobSpec } from '../../src/engine/index.js';
import { percentile } from '../harness/stats.js';

/** The job mix: STFT jobs of 16 series x 16384 samples (1 MiB of f32 each), band-passed, a 64-bin preview. */
export function mixJob(): JobSpec {
  const data = new Float32Array(16 * 16384);
  for (let i = 0; i < data.length; i++) data[i] = Math.random() * 2 - 1;
  return { data, batch: 16, fs: 48_000, flags: ['stft'], passBand: [100, 8000], previewBins: 64 };
}

/** The latency metric's job: 4 x 4096 f32. */
export function smallJob(): JobSpec {
  const data = Float32Array.from({ length: 4 * 4096 }, () => Math.random() * 2 - 1);
  return { data, batch: 4, fs: 1000, flags: ['stft'], passBand: [20, 200], previewBins: 64 };
}

/** What a throughput run did. */
export interface Throughput {
  jobs: number;
  samples: number;
  ms: number;
  /** With client processes: each one's own time from its go to its last result, ms (the tail shows in their spread). */
  clientMs?: number[] | undefined;
}

/** Runs `count` jobs of `specs` (in turn) with at most `window` in flight through `run`. */
export async function throughput(
  count: number,
  window: number,
  specs: readonly JobSpec[],
  run: (spec: JobSpec) => Promise<unknown>,
): Promise<Throughput> {
  let next = 0;
  let samples = 0;
  const t0 = performance.now();
  const lane = async (): Promise<void> => {
    while (next < count) {
      const spec = specs[next++ % specs.length]!;
      await run(spec);
      samples += spec.data.length;
    }
  };
  await Promise.all(Array.from({ length: window }, lane));
  return { jobs: count, samples, ms: performance.now() - t0 };
}

/** Jobs/s and Gsamples/s of a run. */
export function rates(t: Throughput): { jobsPerS: number; gsamplesPerS: number } {
  return { jobsPerS: t.jobs / (t.ms / 1000), gsamplesPerS: t.samples / (t.ms / 1000) / 1e9 };
}

/** p50 latency (ms) of one small job at a time, after 20 to warm up. */
export async function latencyP50(runs: number, run: (spec: JobSpec) => Promise<unknown>): Promise<number> {
  const spec = smallJob();
  for (let i = 0; i < 20; i++) await run(spec);
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await run(spec);
    ms.push(performance.now() - t);
  }
  return percentile(ms, 0.5);
}
