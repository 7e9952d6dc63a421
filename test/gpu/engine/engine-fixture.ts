/**
 * The shared checks of the JobEngine GPU tests (engine-*.test.ts): the float64 reference of a job and
 * the comparison of a result with it, row by row.
 */
import { expect } from 'vitest';
import { type JobResult, type JobSpec } from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { hannPeriodic, referenceRow, relL2, rows, type ReferenceRow } from './reference.js';

/** The suffix of a suite's name that says why it is skipped. */
export const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;

/** The float64 reference rows of job `spec` (the periodic Hann window unless `window` is given). */
export function referenceOf(
  spec: JobSpec & { data: Float32Array | Float64Array },
  window?: Float64Array,
): ReferenceRow[] {
  const batch = spec.batch ?? 1;
  const n = spec.data.length / batch;
  const fs = spec.fs ?? 1;
  const w = window ?? hannPeriodic(n);
  const out: ReferenceRow[] = [];
  for (let b = 0; b < batch; b++) {
    out.push(
      referenceRow(spec.data.subarray(b * n, (b + 1) * n), {
        fs,
        detrend: spec.detrend ?? 'linear',
        window: w,
        passBand: spec.passBand ?? [0, fs / 2],
        previewBins: spec.previewBins ?? Math.min(256, Math.floor(n / 2) + 1),
        bands: spec.bands ?? [],
      }),
    );
  }
  return out;
}

/** Checks every stft/cycles field of `r` against the float64 reference, row by row. */
export function expectMatches(r: JobResult, ref: ReferenceRow[], tol: number, what: string): void {
  const n = r.length;
  const nb = ref[0]!.bandPowers.length;
  const p = ref[0]!.spectrum.length;
  for (let b = 0; b < ref.length; b++) {
    const e = ref[b]!;
    if (r.filtered) expect(relL2(rows(r.filtered, n, b, 1), e.filtered), `${what} filtered row ${b}`).toBeLessThan(tol);
    if (r.spectrum) expect(relL2(rows(r.spectrum, p, b, 1), e.spectrum), `${what} spectrum row ${b}`).toBeLessThan(tol);
    if (r.bandPowers)
      expect(relL2(rows(r.bandPowers, nb, b, 1), e.bandPowers), `${what} band powers row ${b}`).toBeLessThan(tol);
    if (r.bandWaves)
      expect(relL2(rows(r.bandWaves, nb * n, b, 1), e.bandWaves), `${what} band waves row ${b}`).toBeLessThan(tol);
    if (r.dominant) {
      const d = r.dominant[b]!;
      expect(d.bin, `${what} dominant bin row ${b}`).toBe(e.dominant.bin);
      expect(d.frequency).toBeCloseTo(e.dominant.frequency, 9);
      expect(
        Math.abs(d.amplitude - e.dominant.amplitude) / e.dominant.amplitude,
        `${what} dominant amplitude row ${b}`,
      ).toBeLessThan(tol * 10);
      expect(
        Math.abs(Math.atan2(Math.sin(d.phase - e.dominant.phase), Math.cos(d.phase - e.dominant.phase))),
        `${what} dominant phase row ${b}`,
      ).toBeLessThan(tol * 100);
    }
  }
}
