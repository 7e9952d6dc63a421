/**
 * The shared setup of the JobFuser tests (fusion-*.test.ts, fusion-edges.test.ts): test series and jobs, the payload of a
 * result and what the engine answers for a job alone, a poll, and fusers closed after each test
 * (`afterEach(closeFusers)` in each file).
 */
import type { JobResult, JobSpec } from '../../../src/engine/types.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { FakeEngine, fakeResult } from './fake-engine.js';

/** `rows` series of `n` samples, different for each seed (so a request's rows are its own). */
export function series(rows: number, n: number, seed: number): Float32Array {
  return Float32Array.from({ length: rows * n }, (_, i) => Math.fround(Math.sin(i * 0.37 + seed) + seed));
}

/** Two bands below fs/2 of a unit rate. */
export const BANDS = [[0.05, 0.2] as const, [0.2, 0.4] as const];
/** An stft + cycles job of `rows` series over `data`. */
export function stftCycles(data: Float32Array, rows: number, extra: Partial<JobSpec> = {}): JobSpec {
  return { data, batch: rows, flags: ['stft', 'cycles'], bands: BANDS, previewBins: 4, ...extra };
}

/** The result arrays and dominant cycles of a result, for comparing answers (ids, lanes and timings aside). */
export function payload(r: JobResult): Record<string, unknown> {
  return {
    batch: r.batch,
    length: r.length,
    filtered: Array.from(r.filtered ?? []),
    spectrum: Array.from(r.spectrum ?? []),
    bandPowers: Array.from(r.bandPowers ?? []),
    dominant: r.dominant,
    waveletPower: Array.from(r.waveletPower ?? []),
  };
}

/** What the engine answers for `spec` alone (unfused). */
export const alone = (spec: JobSpec): Record<string, unknown> => payload(fakeResult(spec, 0, 'f32', true));

/** Polls `what` until it holds, failing after 5 s. */
export async function until(what: () => boolean, label: string): Promise<void> {
  const t0 = performance.now();
  while (!what()) {
    if (performance.now() - t0 > 5000) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

const fusers: JobFuser[] = [];
/** A fuser in front of `engine` (a 5 ms window unless `options` say otherwise), closed after the test. */
export function fuser(engine: FakeEngine, options: Partial<ConstructorParameters<typeof JobFuser>[1]> = {}): JobFuser {
  const f = new JobFuser(engine, { maxBatchDelayMs: 5, ...options });
  fusers.push(f);
  return f;
}
/** Has closeFusers() close `f` (a fuser a test made itself). */
export function closeAfterTest(f: JobFuser): JobFuser {
  fusers.push(f);
  return f;
}

/** Closes every fuser fuser() made or closeAfterTest() was given; each fusion test file runs it after each test. */
export function closeFusers(): void {
  fusers.splice(0).forEach((f) => f.close());
}
