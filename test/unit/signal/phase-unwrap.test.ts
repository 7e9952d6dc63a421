/**
 * spectrogram's 'phase' mode unwraps along frequency, as scipy does
 * (`np.unwrap(np.angle(Sxx), axis=-2)`), not along time (issue 22). The kernel (spectrogram_mode,
 * mode 3, and its unwrap_correction helper) runs on the CPU through the g++ emulation of
 * src/kernels/signal.cu and is compared with scipy's float64 result, on a signal whose phase
 * wraps every few bins and on random noise.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  psdScale,
  SPECTROGRAM_DEFAULTS,
  spectralGeometry,
  type SpectralGeometry,
} from '../../../src/signal/geometry.js';
import { randomSeries, relativeL2, scipy, scipyReference, wrappingPhaseSeries } from '../../gpu/signal/scipy.js';
import { arr, emu, framesSpectra, launch, loadEmulatedKernels, typed, type Arr, type P } from './emulation/emulator.js';

const skipReason = !emu.so ? emu.reason : !scipy.ok ? scipy.reason : '';
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-12 };
const MODE_PHASE = 3;

/** What spectrogram(x, { mode: 'phase' }) enqueues, on the emulated kernels. */
function phase(p: P, x: Arr, batch: number, g: SpectralGeometry): Arr {
  const half = framesSpectra(p, x, batch, g);
  const out = arr(p, batch * g.freqs * g.frames);
  launch(
    `spectrogram_mode_${p}`,
    half,
    out,
    batch,
    g.frames,
    g.halfBins,
    g.freqs,
    g.nfft,
    Math.sqrt(psdScale(g, 'density')),
    MODE_PHASE,
  );
  return out;
}

/** Largest |step| along frequency (axis -2 of B x F x T). */
function largestFrequencyStep(a: ArrayLike<number>, batch: number, freqs: number, frames: number): number {
  let worst = 0;
  for (let b = 0; b < batch; b++)
    for (let k = 1; k < freqs; k++)
      for (let f = 0; f < frames; f++)
        worst = Math.max(worst, Math.abs(a[(b * freqs + k) * frames + f]! - a[(b * freqs + k - 1) * frames + f]!));
  return worst;
}

describe.skipIf(!!skipReason)(
  `spectrogram phase unwraps along frequency (emulated kernel vs scipy)${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  { timeout: 120_000 },
  () => {
    beforeAll(loadEmulatedKernels);
    const batch = 2;
    const nperseg = 48;

    for (const p of ['f32', 'f64'] as const)
      for (const onesided of [true, false]) {
        it(`a phase that wraps every few bins equals scipy's (${p}, ${onesided ? 'one' : 'two'}-sided)`, async () => {
          const x64 = wrappingPhaseSeries(batch, 12, nperseg);
          const x = typed(p, x64);
          const n = x64.length / batch;
          const options = { nperseg, noverlap: 0, detrend: false as const, returnOnesided: onesided, fs: 2 };
          const g = spectralGeometry(n, options, SPECTROGRAM_DEFAULTS);
          const got = phase(p, x, batch, g);
          const ref = await scipyReference([
            {
              id: 'phase',
              op: 'spectrogram',
              input: Float64Array.from(x),
              shape: [batch, n],
              params: { fs: 2, nperseg, noverlap: 0, detrend: false, return_onesided: onesided, mode: 'phase' },
            },
          ]);
          const want = ref.get('phase')!;
          expect(want.shape).toEqual([batch, g.freqs, g.frames]);
          // Unwrapped along frequency the phase runs down a line: tens of radians, many turns.
          expect(Math.min(...want.values)).toBeLessThan(-8 * Math.PI);
          expect(relativeL2(got, want.values)).toBeLessThanOrEqual(TOL[p]);
        });
      }

    it('random noise (f64): equal to scipy, and no step along frequency above pi', async () => {
      const n = 1501;
      const x = randomSeries(batch * n);
      const options = { nperseg: 36, noverlap: 12, fs: 3 };
      const g = spectralGeometry(n, options, SPECTROGRAM_DEFAULTS);
      const got = phase('f64', x, batch, g);
      const ref = await scipyReference([
        {
          id: 'r',
          op: 'spectrogram',
          input: x,
          shape: [batch, n],
          params: { fs: 3, nperseg: 36, noverlap: 12, mode: 'phase' },
        },
      ]);
      expect(relativeL2(got, ref.get('r')!.values)).toBeLessThanOrEqual(1e-10);
      expect(largestFrequencyStep(got, batch, g.freqs, g.frames)).toBeLessThanOrEqual(Math.PI + 1e-12);
    });
  },
);
