/**
 * Row `fftconvolve` (issue 41): scipy.signal.fftconvolve of 16 × 1M float32 series with a 4,097-tap
 * FIR, mode 'full'. tscuda: `fftconvolve(x, taps, { batch, output })` (cuFFT in float32, overlap-save:
 * 86 rows of 16,384 points per series gathered, one batched R2C, the product with the taps' cached
 * spectrum, one batched C2R, each row's last 12,288 samples scattered; src/signal/fft-convolution.ts).
 * Checked against direct float64 sums at sampled outputs of the first and last series.
 */
import { DeviceBuffer } from '../../../src/runtime/index.js';
import { fftconvolve, firwin } from '../../../src/signal/index.js';
import { relativeL2 } from '../../tscuda/engine-reference.js';
import { checkPositions, uniformSource } from '../input.js';
import type { RowCheck, SignalOpRow } from '../row.js';
import { timeMetric } from '../specs.js';

/** The FIR: firwin(4097, 0.1), a low-pass at a tenth of Nyquist (scipy's defaults: hamming, scaled). */
export const FFTCONVOLVE_TAPS = 4097;
export const FFTCONVOLVE_CUTOFF = 0.1;
/** Outputs checked per series (the first and last 48 of the full output among them: the partial overlaps). */
const CHECKED = 384;

/** tscuda's full-mode output `y` (batch × (length + taps − 1)) against direct float64 sums at sampled outputs of the first and last series. */
export function fftconvolveCheck(
  host: Float32Array,
  taps: ArrayLike<number>,
  y: Float32Array,
  batch: number,
  length: number,
): RowCheck {
  const outLength = length + taps.length - 1;
  const uniform = uniformSource(7);
  const got: number[] = [];
  const want: number[] = [];
  for (const s of [0, batch - 1]) {
    const x = host.subarray(s * length, (s + 1) * length);
    for (const k of checkPositions(outLength, CHECKED, 48, uniform)) {
      let sum = 0;
      for (let j = Math.max(0, k - length + 1); j <= Math.min(k, taps.length - 1); j++) sum += taps[j]! * x[k - j]!;
      want.push(sum);
      got.push(y[s * outLength + k]!);
    }
  }
  return {
    error: relativeL2(got, want),
    tolerance: 1e-4,
    what: `series 0 and ${batch - 1}, ${CHECKED} outputs each (both ends among them), against direct float64 sums`,
  };
}

export const FFTCONVOLVE_ROW: SignalOpRow = {
  id: 'fftconvolve',
  job: `fftconvolve(x, h, mode='full') of 16 x 1M float32 series with a ${FFTCONVOLVE_TAPS}-tap low-pass FIR (firwin(${FFTCONVOLVE_TAPS}, ${FFTCONVOLVE_CUTOFF})), taps float32 on the peers; 16 x (1M + ${FFTCONVOLVE_TAPS - 1}) float32 out`,
  metrics: { time: timeMetric('fftconvolve') },
  bound: {
    hbm: false,
    why: "every implementation goes through the FFT: tscuda's overlap-save blocks move each sample through gather, forward, product, inverse and scatter, the peers' 1M-point transforms several passes each: the compulsory bytes' fraction is reported, not held to 0.8",
  },
  peerTolerance: 1e-4,
  prepare(input) {
    const { batch, length, stream } = input;
    const taps = firwin(FFTCONVOLVE_TAPS, FFTCONVOLVE_CUTOFF);
    const outLength = length + FFTCONVOLVE_TAPS - 1;
    const output = DeviceBuffer.alloc('f32', batch * outLength, { stream, label: 'bench signal fftconvolve out' });
    return {
      run: () => void fftconvolve(input.x, taps, { batch, stream, output }),
      output,
      outputShape: [batch, outLength],
      check: (y) => fftconvolveCheck(input.host, taps, y, batch, length),
      traffic: { read: 4 * batch * length + 8 * taps.length, written: 4 * batch * outLength },
      peerJob: { taps: Array.from(taps), mode: 'full' },
      dispose: () => output.dispose(),
    };
  },
};
