/**
 * Complex (IQ) series through the filters and convolutions on the GPU against scipy.signal run on
 * this host (the comparisons: complex-filter-suite.ts). Relative L2 <= 1e-5 (f32) / 1e-11 (f64).
 */
import { describe, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import type { SuiteEnv } from './complex-cases.js';
import { convolutionSuite, filterSuite, iqFilterSuite } from './complex-filter-suite.js';
import { gpuTestScope, scipy } from './scipy.js';

const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

describe.skipIf(!!skip)(
  `complex filters and convolutions vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 180_000 },
  () => {
    const { stream, keep } = gpuTestScope('complex filter test', skip);
    const env: SuiteEnv = { stream, keep, done: () => stream!.done(), small: false };
    for (const p of ['f32', 'f64'] as const) {
      it(`sosfilt, sosfiltfilt, lfilter, filtfilt (${p}): 2000, 1001, 2 and 1 samples`, () => filterSuite(p, env));
      it(`convolve (direct, fft), fftconvolve, oaconvolve, correlate (${p}): complex x and/or taps, every mode`, () =>
        convolutionSuite(p, env));
      for (const dtype of ['i8', 'i16'] as const)
        it(`interleaved ${dtype} I/Q with a scale (${p}): sosfilt and convolve`, () => iqFilterSuite(p, dtype, env));
    }
  },
);
