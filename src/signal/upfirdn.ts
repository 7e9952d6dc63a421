/**
 * scipy.signal.upfirdn on the GPU, batched over series: upsample by an integer factor (zeros
 * between samples), apply FIR taps, downsample by an integer factor, in one polyphase kernel that
 * sums only the taps of each output's phase (tiled through shared memory where it fits:
 * upfirdn-tiling.ts). The signal is extended with zeros (scipy's default mode 'constant', cval 0).
 * f32 and f64 series; float64 arithmetic. Enqueue only; every check runs before GPU work. */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { RealBuffer } from './buffers.js';
import { filterSeries } from './filter-call.js';
import { SignalLengthError } from './filter-errors.js';
import { coefficientTable } from './filter-tables.js';
import { checkTaps } from './firwin.js';
import { signalWorkspace as ws } from './workspace.js';
import { BLOCK, elementwise, expectBuffer } from './launch.js';
import { phasedTaps, upfirdnTiling } from './upfirdn-tiling.js';

/** Options of upfirdn. */
export interface UpfirdnOptions {
  /** Series in x (default 1). */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (x's dtype, batch × upfirdnLength(...)); default a new buffer. Must not be x. */
  output?: RealBuffer | undefined;
}

/** scipy's upfirdn output length: ceil(((length − 1)·up + ntaps) / down). */
export function upfirdnLength(ntaps: number, length: number, up: number, down: number): number {
  return Math.floor(((length - 1) * up + ntaps - 1) / down) + 1;
}

/** The up and down factors, checked as positive integers (scipy raises for others too). */
export function rateFactors(up: unknown, down: unknown, what: string): { up: number; down: number } {
  return { up: positiveInteger(up, `${what}: up`), down: positiveInteger(down, `${what}: down`) };
}

/** What resample_poly, decimate and upfirdn enqueue: samples [start, start + outLength) of each series' upfirdn output, into y. */
export interface UpfirdnWindow {
  taps: Float64Array;
  up: number;
  down: number;
  start: number;
  outLength: number;
}

/** Grid cap of the tiled kernel: it takes the tiles beyond the grid in grid strides. */
const MAX_TILE_GRID = 1 << 20;

/**
 * Enqueues the polyphase kernel for `window` over the series of x (checked by the caller) into y:
 * the tiled one (samples staged in shared memory, coalesced) wherever upfirdnTiling plans a tile,
 * else the one that reads each output's samples from global memory (one-tap decimation, taps too
 * long for a tile's shared memory).
 */
export function enqueueUpfirdn(
  x: RealBuffer,
  y: RealBuffer,
  window: UpfirdnWindow,
  batch: number,
  length: number,
  stream: Stream,
): void {
  const p = x.dtype;
  const { taps, up, down, start, outLength } = window;
  const tiling = upfirdnTiling(taps.length, up, down, start, outLength);
  if (tiling !== undefined) {
    const { phaseTaps, perClass, span, tiles, sharedMemBytes } = tiling;
    const phased = coefficientTable(x.context, `phased-${up}`, phasedTaps(taps, up, phaseTaps), stream);
    const grid = Math.min(batch * tiles, MAX_TILE_GRID);
    ws.filterKernel(x.context, `upfirdn_tiled_${p}`)(
      { grid, block: BLOCK, sharedMemBytes, stream },
      x,
      y,
      phased,
      batch,
      length,
      phaseTaps,
      up,
      down,
      outLength,
      start,
      perClass,
      span,
      tiles,
    );
    return;
  }
  const table = coefficientTable(x.context, 'taps', taps, stream);
  ws.filterKernel(x.context, `upfirdn_${p}`)(
    elementwise(batch * outLength, stream),
    x,
    y,
    table,
    batch,
    length,
    taps.length,
    up,
    down,
    outLength,
    start,
  );
}

/** The output buffer of a resampling call (`length` samples in all, at most 2^31 − 1): `output` checked (x's dtype, not x) or a new one for work on `stream`. */
export function resampledOutput(
  x: RealBuffer,
  length: number,
  output: RealBuffer | undefined,
  stream: Stream,
  what: string,
): RealBuffer {
  if (length > 2 ** 31 - 1) throw new SignalLengthError(`${what}: ${length} output samples exceeds 2^31 − 1 per call`);
  if (output === undefined)
    return DeviceBuffer.alloc(x.dtype, length, { stream, label: `${what} output` }) as RealBuffer;
  if (output === x)
    throw new TypeError(`${what}: output must not be x (each output sample reads several input samples)`);
  expectBuffer(output, x.dtype, length, `${what} output`);
  return output;
}

/**
 * scipy.signal.upfirdn(h, x, up, down) for each series of x: batch × upfirdnLength(h.length,
 * length, up, down) samples.
 */
export function upfirdn(
  h: ArrayLike<number>,
  x: RealBuffer,
  up = 1,
  down = 1,
  options: UpfirdnOptions = {},
): RealBuffer {
  const taps = checkTaps(h, 'upfirdn');
  const factors = rateFactors(up, down, 'upfirdn');
  const { batch, length } = filterSeries(x, options.batch, 'upfirdn');
  const outLength = upfirdnLength(taps.length, length, factors.up, factors.down);
  const stream = resolveStream(x.context, options.stream);
  const y = resampledOutput(x, batch * outLength, options.output, stream, 'upfirdn');
  enqueueUpfirdn(x, y, { taps, ...factors, start: 0, outLength }, batch, length, stream);
  return y;
}
