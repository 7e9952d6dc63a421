/**
 * Rows `iq_spectrogram` and `iq16_spectrogram` (issue 41 item 7): a two-sided spectrogram of 16 ×
 * 1M complex IQ samples, as software-defined radios deliver them: complex64 (interleaved re, im)
 * for the first row, interleaved int16 I/Q pairs with a scale for the second (converted on the
 * GPU as part of the timed job). scipy.signal.spectrogram(x, window='hann', nperseg=1024,
 * noverlap=512, detrend=False, return_onesided=False, scaling='density', mode='psd'): 16 × 1024
 * frequencies (fftfreq order) × 2047 frames of float32 power. tscuda: `spectrogram(x, { ...,
 * batch, output })` (one framing kernel, one batched C2C FFT, one power kernel; for int16 one
 * conversion kernel first). The IQ series are made from the shared float32 input (series b and
 * b + 1 as I and Q), here and by the peers alike. Checked against float64 DFTs (fft.js) of
 * sampled frames of the first and last series. The peers (iq_spectrogram_peers.py):
 * cupyx.scipy.signal.spectrogram and torch.stft (return_complex, two-sided, |Z|² times scipy's
 * density scale), on the same data.
 */
import FFT from 'fft.js';
import { DeviceBuffer } from '../../../src/runtime/index.js';
import { getWindow, psdScale, spectralGeometry, spectrogram } from '../../../src/signal/index.js';
import { relativeL2 } from '../../tscuda/engine-reference.js';
import { checkPositions, uniformSource } from '../input.js';
import type { RowCheck, RowInput, SignalOpRow } from '../row.js';
import { timeMetric } from '../specs.js';

/** The spectrogram's parameters (scipy's names), shared with the peers through peerJob. */
export const IQ_SPECTROGRAM_PARAMS = {
  window: 'hann',
  nperseg: 1024,
  noverlap: 512,
  detrend: false,
  return_onesided: false,
  scaling: 'density',
  mode: 'psd',
} as const;
/** Frames checked per series (the first and last 2 among them). */
const CHECKED_FRAMES = 24;

/** The complex IQ series made from the shared input: I = series b, Q = series (b + 1) mod batch; interleaved float32. */
export function iqSeries(host: Float32Array, batch: number, length: number): Float32Array {
  const iq = new Float32Array(2 * batch * length);
  for (let b = 0; b < batch; b++) {
    const q = ((b + 1) % batch) * length;
    for (let t = 0; t < length; t++) {
      iq[2 * (b * length + t)] = host[b * length + t]!;
      iq[2 * (b * length + t) + 1] = host[q + t]!;
    }
  }
  return iq;
}

/** The IQ series quantized to int16 I/Q pairs at full scale, and the scale that reads them back. */
export function iq16Series(iq: Float32Array): { pairs: Int16Array; scale: number } {
  let peak = 0;
  for (const v of iq) peak = Math.max(peak, Math.abs(v));
  const scale = peak / 32767;
  const pairs = new Int16Array(iq.length);
  for (let i = 0; i < iq.length; i++) pairs[i] = Math.round(iq[i]! / scale);
  return { pairs, scale };
}

/** The spectrogram geometry of the rows (series of `length` complex samples). */
function rowGeometry(length: number): ReturnType<typeof spectralGeometry> {
  const p = IQ_SPECTROGRAM_PARAMS;
  return spectralGeometry(
    length,
    { window: p.window, nperseg: p.nperseg, noverlap: p.noverlap, detrend: p.detrend },
    { window: 'hann', detrend: false, boundary: null, padded: false },
    true,
  );
}

/**
 * tscuda's power `sxx` (batch × nfft × frames) against float64 DFTs (fft.js) of sampled frames of
 * the first and last series of `iq` (interleaved complex float64-exact values), every frequency.
 */
export function iqSpectrogramCheck(iq: ArrayLike<number>, sxx: Float32Array, batch: number, length: number): RowCheck {
  const g = rowGeometry(length);
  const w = getWindow('hann', g.nperseg);
  const scale = psdScale(g, 'density');
  const fft = new FFT(g.nfft);
  const frame = fft.createComplexArray() as number[];
  const spectrum = fft.createComplexArray() as number[];
  const uniform = uniformSource(11);
  const got: number[] = [];
  const want: number[] = [];
  for (const s of [0, batch - 1])
    for (const f of checkPositions(g.frames, CHECKED_FRAMES, 2, uniform)) {
      for (let j = 0; j < g.nperseg; j++) {
        const t = s * length + f * g.hop + j;
        frame[2 * j] = iq[2 * t]! * w[j]!;
        frame[2 * j + 1] = iq[2 * t + 1]! * w[j]!;
      }
      fft.transform(spectrum, frame);
      for (let k = 0; k < g.nfft; k++) {
        want.push((spectrum[2 * k]! ** 2 + spectrum[2 * k + 1]! ** 2) * scale);
        got.push(sxx[(s * g.nfft + k) * g.frames + f]!);
      }
    }
  return {
    error: relativeL2(Float64Array.from(got), Float64Array.from(want)),
    tolerance: 1e-5,
    what: `series 0 and ${batch - 1}, ${CHECKED_FRAMES} frames each (every frequency), against float64 DFTs (fft.js)`,
  };
}

/** Sets up one of the two rows: the IQ input (complex64 or int16 pairs) on the device, the output, the check. */
function prepareIq(input: RowInput, int16: boolean): ReturnType<SignalOpRow['prepare']> {
  const { batch, length, stream } = input;
  const g = rowGeometry(length);
  const iq = iqSeries(input.host, batch, length);
  const { pairs, scale } = int16 ? iq16Series(iq) : { pairs: undefined, scale: 1 };
  const reference = pairs ? Float64Array.from(pairs, (v) => Math.fround(v * scale)) : iq;
  const x = pairs
    ? DeviceBuffer.from('i16', pairs, { stream, label: 'bench signal iq16 in' })
    : DeviceBuffer.from('c64', iq, { stream, label: 'bench signal iq in' });
  const total = batch * g.freqs * g.frames;
  const output = DeviceBuffer.alloc('f32', total, { stream, label: 'bench signal iq spectrogram out' });
  const p = IQ_SPECTROGRAM_PARAMS;
  const options = {
    window: p.window,
    nperseg: p.nperseg,
    noverlap: p.noverlap,
    detrend: p.detrend,
    scaling: p.scaling,
    mode: p.mode,
    batch,
    stream,
    output,
  } as const;
  return {
    run: () =>
      void (pairs
        ? spectrogram(x as DeviceBuffer<'i16'>, { ...options, iq: true, scale })
        : spectrogram(x as DeviceBuffer<'c64'>, options)),
    output,
    outputShape: [batch, g.freqs * g.frames],
    check: (sxx) => iqSpectrogramCheck(reference, sxx, batch, length),
    traffic: { read: (pairs ? 4 : 8) * batch * length, written: 4 * total },
    // The peers make the same IQ series from the shared input on the device (iq_spectrogram_peers.py).
    peerJob: { ...p, dtype: pairs ? 'int16' : 'complex64', scale, batch, length, frames: g.frames },
    dispose: () => {
      output.dispose();
      x.dispose();
    },
  };
}

const WHY =
  'a hop of half a frame reads each sample twice, then one batched 1024-point C2C FFT and |X|² written: FFT passes over HBM, the compulsory bytes’ fraction is reported, not held to 0.8';

/** Row `iq_spectrogram`: the two-sided spectrogram of complex64 IQ series. */
export const IQ_SPECTROGRAM_ROW: SignalOpRow = {
  id: 'iq_spectrogram',
  job: 'spectrogram of 16 x 1M complex64 IQ samples, two-sided (hann, nperseg 1024, noverlap 512, no detrend, psd density): 16 x 1024 x 2047 float32 out',
  metrics: { time: timeMetric('iq_spectrogram') },
  bound: { hbm: false, why: WHY },
  peerTolerance: 1e-4,
  prepare: (input) => prepareIq(input, false),
};

/** Row `iq16_spectrogram`: the same from interleaved int16 I/Q pairs with a scale, converted on the GPU in the timed call. */
export const IQ16_SPECTROGRAM_ROW: SignalOpRow = {
  id: 'iq16_spectrogram',
  job: 'spectrogram of 16 x 1M interleaved int16 I/Q pairs with a scale (converted on the GPU), two-sided as iq_spectrogram',
  metrics: { time: timeMetric('iq16_spectrogram') },
  bound: { hbm: false, why: `int16 pairs converted first; ${WHY}` },
  peerTolerance: 1e-4,
  prepare: (input) => prepareIq(input, true),
};
