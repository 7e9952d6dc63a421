/**
 * The complex (IQ) comparisons of the GPU suites (test/gpu/signal/complex-*-suite.ts) run on the
 * CPU: device buffers, cuFFT and the kernels replaced by emulation/fake-runtime.ts (signal.cu and
 * filter.cu compiled by g++, float64 DFTs for cuFFT), at smaller sizes, against scipy.signal run on
 * this host. This checks src/signal's complex orchestration (the I/Q conversion, complex framing
 * and C2C plans, two-sided arrangement, planes, joins) and the new kernels before the GPU suite
 * runs them. Skipped, with the reason, where g++ or python3 with scipy is missing.
 */
import './emulation/emulate-runtime.js';
import { describe, it } from 'vitest';
import { scipy } from '../../gpu/signal/scipy.js';
import { emulatedKernels } from './emulation/fake-runtime.js';

const { iqSpectraSuite, istftSuite, phaseSuite, spectraSuite } =
  await import('../../gpu/signal/complex-spectral-suite.js');
const { convolutionSuite, filterSuite, iqFilterSuite } = await import('../../gpu/signal/complex-filter-suite.js');

const emu = emulatedKernels();
const skip = !emu.so ? emu.reason : !scipy.ok ? scipy.reason : '';

describe.skipIf(!!skip)(
  `complex (IQ) signal operations, emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 300_000 },
  () => {
    const env = { stream: undefined, keep: <T>(b: T): T => b, done: async (): Promise<void> => {}, small: true };
    for (const p of ['f32', 'f64'] as const) {
      it(`stft, spectrogram, welch, csd, coherence on complex ${p} series`, () => spectraSuite(p, env));
      it(`spectrogram angle and phase, complex ${p}`, () => phaseSuite(p, env));
      it(`istft to complex signals, ${p}`, () => istftSuite(p, env));
      it(`sosfilt, sosfiltfilt, lfilter, filtfilt on complex ${p} series`, () => filterSuite(p, env));
      it(`convolve, fftconvolve, oaconvolve, correlate with complex ${p} operands`, () => convolutionSuite(p, env));
      for (const dtype of ['i8', 'i16'] as const) {
        it(`${dtype} I/Q spectra (${p})`, () => iqSpectraSuite(p, dtype, env));
        it(`${dtype} I/Q filters (${p})`, () => iqFilterSuite(p, dtype, env));
      }
    }
  },
);
