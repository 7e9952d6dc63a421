/**
 * Complex (IQ) series through the spectral operations on the GPU against scipy.signal run on this
 * host (the comparisons: complex-spectral-suite.ts). Relative L2 <= 1e-5 (f32) / 1e-11 (f64).
 */
import { describe, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import type { SuiteEnv } from './complex-cases.js';
import { iqSpectraSuite, istftSuite, phaseSuite, spectraSuite } from './complex-spectral-suite.js';
import { gpuTestScope, scipy } from './scipy.js';

const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

describe.skipIf(!!skip)(
  `complex spectra vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 180_000 },
  () => {
    const { stream, keep } = gpuTestScope('complex spectral test', skip);
    const env: SuiteEnv = { stream, keep, done: () => stream!.done(), small: false };
    for (const p of ['f32', 'f64'] as const) {
      it(`stft, spectrogram (psd, complex, magnitude), welch, csd, coherence (${p}): 1000, 777, 2 and 1 samples`, () =>
        spectraSuite(p, env));
      it(`spectrogram angle and phase (${p}), odd and even nperseg`, () => phaseSuite(p, env));
      it(`istft of two-sided spectra to complex signals (${p})`, () => istftSuite(p, env));
      for (const dtype of ['i8', 'i16'] as const)
        it(`interleaved ${dtype} I/Q with a scale, converted on the GPU (${p}): stft, spectrogram, welch`, () =>
          iqSpectraSuite(p, dtype, env));
    }
  },
);
