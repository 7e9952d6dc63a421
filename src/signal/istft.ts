/**
 * scipy.signal.istft on the GPU: the frames' spectra arranged as the inverse FFT's rows, one
 * batched inverse FFT (complex-to-real for one-sided input, complex-to-complex for two-sided), and
 * a gathering overlap-add divided by the summed squared window. Two-sided input may come back
 * complex (`returnComplex`): the inverse of the STFT of complex input. `istft` resolves the
 * geometry from its options, `istftWithGeometry` runs one resolved already (istftGeometryOf).
 */
import { resolveStream } from '../runtime/stream.js';
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { istftGeometry, type InverseGeometry, type InverseOptions } from './inverse-geometry.js';
import { allocOr, type CallOptions } from './stft.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { elementwise, precisionOf } from './launch.js';
import type { Precision } from '../runtime/fft/precision.js';

export interface IstftOptions extends InverseOptions, CallOptions {
  /** Frames (time slices) per series in Zxx; the frequency bins are Zxx.length / (batch x frames). */
  frames: number;
  /**
   * Two-sided input only (`inputOnesided: false`): return the complex signal, as scipy does for
   * two-sided input (the inverse of the STFT of complex input). Default false: the real parts.
   */
  returnComplex?: boolean | undefined;
  /** Write the signal here (f32/f64, or c64/c128 with returnComplex; B x outputLength). */
  output?: RealBuffer | ComplexBuffer | undefined;
}

/** What `istft()` returns: the sample times in s as a host array, the reconstructed signals on the device (`options.output`, or a new buffer the caller disposes; enqueued, not yet computed) and the inverse geometry used. */
export interface IstftResult<X extends RealBuffer | ComplexBuffer = RealBuffer> {
  /** Sample times in s. */
  t: Float64Array;
  /** B x outputLength signal: real, or complex with returnComplex. */
  x: X;
  geometry: InverseGeometry;
}

/** The geometry istft would use (pure). Throws NolaError where the STFT cannot be inverted. */
export { istftGeometry };

/**
 * scipy.signal.istft (time_axis -1, freq_axis -2) of Zxx laid out B x freqs x frames: inverse FFT
 * of every frame, then a gathering overlap-add divided by the summed squared window (exact where
 * NOLA holds; NOLA violations throw NolaError before anything is enqueued).
 */
export function istft(Zxx: ComplexBuffer, options: IstftOptions & { returnComplex: true }): IstftResult<ComplexBuffer>;
export function istft(Zxx: ComplexBuffer, options: IstftOptions): IstftResult<RealBuffer>;
export function istft(Zxx: ComplexBuffer, options: IstftOptions): IstftResult<RealBuffer | ComplexBuffer> {
  const { p, batch } = zxxSeries(Zxx, options.batch);
  const frames = positiveInteger(options.frames, 'frames');
  if (Zxx.length % (batch * frames) !== 0)
    throw new RangeError(`istft Zxx of ${Zxx.length} values does not split into ${batch} series x ${frames} frames`);
  return istftOf(Zxx, p, batch, istftGeometry(Zxx.length / (batch * frames), frames, options), options);
}

/** What istftWithGeometry takes besides the geometry: where, how many, the output's kind and the output. */
export type IstftRunOptions = Pick<IstftOptions, 'returnComplex' | 'output' | keyof CallOptions>;

/**
 * istft over a geometry resolved already (istftGeometryOf: NOLA checked once by its caller): Zxx must
 * hold `batch` series of g.freqs x g.frames values. The engine's framed jobs run their chunks through it.
 */
export function istftWithGeometry(
  Zxx: ComplexBuffer,
  g: InverseGeometry,
  options: IstftRunOptions & { returnComplex: true },
): IstftResult<ComplexBuffer>;
export function istftWithGeometry(
  Zxx: ComplexBuffer,
  g: InverseGeometry,
  options?: IstftRunOptions,
): IstftResult<RealBuffer>;
export function istftWithGeometry(
  Zxx: ComplexBuffer,
  g: InverseGeometry,
  options: IstftRunOptions = {},
): IstftResult<RealBuffer | ComplexBuffer> {
  const { p, batch } = zxxSeries(Zxx, options.batch);
  if (Zxx.length !== batch * g.freqs * g.frames)
    throw new RangeError(
      `istft Zxx of ${Zxx.length} values is not ${batch} series x ${g.freqs} frequencies x ${g.frames} frames (the geometry's)`,
    );
  return istftOf(Zxx, p, batch, g, options);
}

/** Zxx checked (a complex device buffer) with its precision, and the series count. */
function zxxSeries(Zxx: ComplexBuffer, batch: number | undefined): { p: Precision; batch: number } {
  if (!(Zxx instanceof DeviceBuffer)) throw new TypeError('istft Zxx must be a DeviceBuffer');
  const p = precisionOf(Zxx, 'istft Zxx');
  if (Zxx.dtype !== COMPLEX_OF[p])
    throw new TypeError(`istft Zxx "${Zxx.label}" must be complex (c64 or c128), not ${Zxx.dtype}`);
  return { p, batch: positiveInteger(batch ?? 1, 'batch') };
}

function istftOf(
  Zxx: ComplexBuffer,
  p: Precision,
  batch: number,
  g: InverseGeometry,
  options: IstftRunOptions,
): IstftResult<RealBuffer | ComplexBuffer> {
  const { frames, freqs } = g;
  const returnComplex = options.returnComplex ?? false;
  if (typeof returnComplex !== 'boolean')
    throw new TypeError(`istft returnComplex must be a boolean, got ${JSON.stringify(returnComplex)}`);
  if (returnComplex && g.onesided)
    throw new TypeError(
      'istft returnComplex needs two-sided input (inputOnesided: false): one-sided input inverts to a real signal',
    );
  const ctx = Zxx.context;
  const stream = resolveStream(ctx, options.stream);
  const rowBins = g.onesided ? Math.floor(g.nfft / 2) + 1 : g.nfft;
  const rows = batch * frames;
  if (rows * g.nfft > 2 ** 31 - 1)
    throw new RangeError(`${batch} series x ${frames} frames x nfft ${g.nfft} exceeds 2^31 - 1 samples per call`);
  const out = allocOr(options.output, returnComplex ? COMPLEX_OF[p] : p, batch * g.outputLength, stream, 'istft');
  const spectra = ws.scratch(ctx, stream, 'istft-rows', COMPLEX_OF[p], rows * rowBins);
  ws.kernel(ctx, 'arrange_istft', p)(
    elementwise(rows * rowBins, stream),
    Zxx,
    spectra,
    batch,
    frames,
    freqs,
    rowBins,
    g.nfft,
    g.onesided ? 1 : 0,
  );
  const window = ws.window(ctx, g.windowSpec, g.nperseg, p, stream);
  let framesBuffer: DeviceBuffer<DType>;
  let frameStride: number;
  let elemStride: number;
  if (g.onesided) {
    const real = ws.scratch(ctx, stream, 'istft-frames', p, rows * g.nfft);
    ws.realInverse(ctx, p, g.nfft, rows, spectra, real, stream);
    framesBuffer = real;
    frameStride = g.nfft;
    elemStride = 1;
  } else {
    ws.complexInPlace(ctx, p, g.nfft, rows, spectra, 'inverse', stream);
    if (returnComplex) {
      ws.kernel(ctx, 'overlap_add_complex', p)(
        elementwise(batch * g.outputLength, stream),
        spectra,
        out as ComplexBuffer,
        window,
        batch,
        frames,
        g.nperseg,
        g.hop,
        g.nfft,
        g.trim,
        g.outputLength,
        g.frameGain,
      );
      return { t: sampleTimes(g), x: out as ComplexBuffer, geometry: g };
    }
    // The kernel reads the real parts: the complex rows seen as reals, every other one.
    framesBuffer = spectra;
    frameStride = 2 * g.nfft;
    elemStride = 2;
  }
  ws.kernel(ctx, 'overlap_add', p)(
    elementwise(batch * g.outputLength, stream),
    framesBuffer as RealBuffer, // real frames, or complex rows read as reals (the strides below)
    out as RealBuffer,
    window,
    batch,
    frames,
    g.nperseg,
    g.hop,
    frameStride,
    elemStride,
    g.trim,
    g.outputLength,
    g.frameGain,
  );
  return { t: sampleTimes(g), x: out as RealBuffer, geometry: g };
}

/** The output's sample times in s (scipy's t). */
function sampleTimes(g: InverseGeometry): Float64Array {
  const t = new Float64Array(g.outputLength);
  for (let i = 0; i < t.length; i++) t[i] = i / g.fs;
  return t;
}
