/**
 * scipy-style conveniences over the primitives: detrend (device buffers, enqueue only), and
 * bandPower / dominantCycle, which end on the host (they await the stream, never block it).
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { shownValue } from '../runtime/value-checks.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import { finishDominantCycles, type DominantCycle } from './cycles.js';
import { checkFs, type DetrendType } from './geometry.js';
import { bandPowers, detrendWindow, dominantCycleDevice, halfBins, rfft, type RealBuffer } from './primitives.js';
import { windowSum, type WindowSpec } from './window.js';
import { COMPLEX_OF, signalWorkspace as ws } from './workspace.js';
import { expectBuffer, realSeries } from './launch.js';

/** Options of `detrend()`: how x splits into series, the stream to enqueue on (default: x's context's default stream) and where to write. */
export interface DetrendOptions {
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (same dtype and length as x); default a new buffer. Pass x itself for in place. */
  output?: RealBuffer | undefined;
}

/** scipy.signal.detrend(x, type) along each series ('linear' default, as scipy). Enqueue only. */
export function detrend(
  x: RealBuffer,
  type: 'constant' | 'linear' = 'linear',
  options: DetrendOptions = {},
): RealBuffer {
  if (type !== 'constant' && type !== 'linear') {
    // The older form put the type in an options object; say so rather than "got an object".
    const objectForm = typeof type === 'object' && type !== null && 'type' in type;
    const hint = objectForm ? " (detrend(x, { type }) is the older form: write detrend(x, 'linear', options))" : '';
    throw new TypeError(
      `detrend: type (the second argument) must be 'constant' or 'linear', got ${shownValue(type)}${hint}`,
    );
  }
  const { p, batch, length } = realSeries(x, options.batch, 'detrend');
  const stream = resolveStream(x.context, options.stream);
  let out: RealBuffer;
  if (options.output) {
    expectBuffer(options.output, p, x.length, 'detrend output');
    out = options.output;
  } else out = DeviceBuffer.alloc(p, x.length, { stream, label: 'detrend output' }) as RealBuffer;
  detrendWindow(x, out, { batch, length, detrend: type, window: null, stream });
  return out;
}

/** What `bandPower()` and `dominantCycle()` share: the sample rate `fs` in Hz (default 1), the series count `batch` (default 1), the stream (default: x's context's default stream), and an optional detrend and window applied before the real FFT. */
export interface SpectrumPrepOptions {
  fs?: number | undefined;
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Whole-series detrend before the FFT (default false). */
  detrend?: DetrendType | undefined;
  /** Window before the FFT (default none). */
  window?: WindowSpec | null | undefined;
}

/**
 * Checks x, resolves the call's stream (resolveStream: x's context's default stream without one)
 * and enqueues detrend/window (when asked) and the real FFT of each series into its scratch.
 */
function spectrumOf(
  x: RealBuffer,
  options: SpectrumPrepOptions,
  what: string,
): { spectrum: DeviceBuffer<'c64' | 'c128'>; batch: number; length: number; stream: Stream } {
  const { p, batch, length } = realSeries(x, options.batch, what);
  const stream = resolveStream(x.context, options.stream);
  const ctx = x.context;
  const detrend = options.detrend ?? false;
  const window = options.window ?? null;
  let input: RealBuffer = x;
  if (detrend !== false || window !== null) {
    input = ws.scratch(ctx, stream, `${what}-prep`, p, x.length) as RealBuffer;
    detrendWindow(x, input, { batch, length, detrend, window, stream });
  }
  const spectrum = ws.scratch(ctx, stream, `${what}-spectrum`, COMPLEX_OF[p], batch * halfBins(length));
  rfft(input, spectrum as DeviceBuffer<'c64'>, { batch, length, stream });
  return { spectrum, batch, length, stream };
}

/** Waits for the stream (without blocking the event loop), then copies `buffer` to the host. */
async function readBack(buffer: DeviceBuffer<'f64'>, stream: Stream): Promise<Float64Array> {
  await stream.done();
  return buffer.read(new Float64Array(buffer.length));
}

/** Options of `bandPower()`: the spectrum preparation, and whether powers are relative to the total. */
export interface BandPowerOptions extends SpectrumPrepOptions {
  /** Divide each band's power by the total power over [0, fs/2] (default false). */
  relative?: boolean | undefined;
}

/**
 * Power of each band [lo, hi] Hz per series (B x bands, float64 on the host), with bandPowers'
 * convention: sum over the band's bins of c_k |X_k|^2 / N^2 (c_k = 2 except DC and an even N's
 * Nyquist), so all bins together give mean(x^2) and a bin-centred cosine of amplitude A gives A^2/2.
 * `relative` divides by that total.
 */
export async function bandPower(
  x: RealBuffer,
  bands: readonly (readonly [number, number])[],
  options: BandPowerOptions = {},
): Promise<Float64Array> {
  const fs = checkFs(options.fs ?? 1);
  if (!Array.isArray(bands) || bands.length === 0) throw new RangeError('bands must be a non-empty array of [lo, hi]');
  const all: (readonly [number, number])[] = options.relative ? [...bands, [0, fs / 2]] : [...bands];
  const { spectrum, batch, length, stream } = spectrumOf(x, options, 'bandPower');
  using out = DeviceBuffer.alloc('f64', batch * all.length, { stream, label: 'bandPower output' });
  bandPowers(spectrum as DeviceBuffer<'c64'>, out, { batch, length, fs, bands: all, stream });
  const host = await readBack(out, stream);
  if (!options.relative) return host;
  const nb = bands.length;
  const result = new Float64Array(batch * nb);
  for (let b = 0; b < batch; b++) {
    const total = host[b * (nb + 1) + nb]!;
    for (let q = 0; q < nb; q++) result[b * nb + q] = host[b * (nb + 1) + q]! / total;
  }
  return result;
}

/** Options of `dominantCycle()`: the spectrum preparation, and the frequency range searched. */
export interface DominantCycleOptions extends SpectrumPrepOptions {
  /** Search bins with frequency in [lo, hi] Hz (default [fs/N, fs/2]: DC excluded). */
  range?: readonly [number, number] | undefined;
}

/**
 * The dominant cycle of each series: the strongest bin of its spectrum, as frequency, period,
 * amplitude (corrected by the window's sum when a window is given) and phase at sample 0.
 * A cosine centred on a bin is found exactly.
 */
export async function dominantCycle(x: RealBuffer, options: DominantCycleOptions = {}): Promise<DominantCycle[]> {
  const fs = checkFs(options.fs ?? 1);
  const { spectrum, batch, length, stream } = spectrumOf(x, options, 'dominantCycle');
  using out = DeviceBuffer.alloc('f64', 4 * batch, { stream, label: 'dominantCycle output' });
  dominantCycleDevice(spectrum as DeviceBuffer<'c64'>, out, {
    batch,
    length,
    fs,
    stream,
    ...(options.range ? { range: options.range } : {}),
  });
  const rows = await readBack(out, stream);
  const window = options.window ?? null;
  return finishDominantCycles(rows, {
    batch,
    length,
    fs,
    windowSum: window === null ? length : windowSum(window, length),
  });
}
