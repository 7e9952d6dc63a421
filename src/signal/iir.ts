/**
 * IIR filtering with second-order sections on the GPU, batched over series (and, for long series,
 * in parallel along time: sos-scan.ts): scipy.signal.sosfilt
 * (with the filter state zi in and zf out, so a long signal filtered in chunks equals filtering it
 * at once) and sosfiltfilt (zero phase, scipy's default odd padding). f32 and f64 series; the
 * arithmetic and the state are float64 in both (as scipy's, whose coefficients are float64).
 * Enqueue only, on `stream` (default: x's context's default stream). Every check runs
 * before any GPU work.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { resolveStream } from '../runtime/stream.js';
import type { ComplexBuffer, RealBuffer } from './buffers.js';
import { checkSos, MAX_SOS_SECTIONS, sosfiltfiltPadlen, sosfiltZi, type SosInput } from './filter-design.js';
import { FilterCoefficientError } from './filter-errors.js';
import { filterOutput, filterSeries, type FilterCallOptions, type FilteredWithState } from './filter-call.js';
import { resolvePadding, type PadOptions } from './filter-padding.js';
import { coefficientTable } from './filter-tables.js';
import { cachedScanPowers, scanGeometry, SCAN_CHUNK, SCAN_ROW_THREADS, SCAN_THREADS, usesScan } from './sos-scan.js';
import { signalWorkspace as ws } from './workspace.js';
import { elementwise, expectBuffer } from './launch.js';
import { complexCall, planesCall, refuseState, runPlanes, type ComplexCallOptions } from './iq.js';
import type { ComplexInput } from './samples.js';

export { MAX_SOS_SECTIONS };

/** The most blocks a launch of the parallel path asks for (its kernels loop over the rest): many waves of six 64-thread blocks per SM. */
const MAX_SCAN_GRID = 65_536;

/** Options of sosfilt. */
export interface SosfiltOptions extends FilterCallOptions {
  /** Initial state, scipy's layout (n_sections, batch, 2), same dtype as x; default zeros. Giving it makes sosfilt return { y, zf }. */
  zi?: RealBuffer | undefined;
  /** Where the final state goes (same layout; may be zi itself to carry it in place); default a new buffer. Only with zi. */
  zf?: RealBuffer | undefined;
}

/** Options of sosfiltfilt: the call options and the padding (padtype 'odd', padlen 3 × taps by default). */
export interface SosfiltfiltOptions extends FilterCallOptions, PadOptions {}

/** Checks sos for the GPU kernels: scipy's checks, then at most MAX_SOS_SECTIONS sections. */
function deviceSos(sos: SosInput, what: string): { flat: Float64Array; sections: number } {
  const checked = checkSos(sos, what);
  if (checked.sections > MAX_SOS_SECTIONS)
    throw new FilterCoefficientError(
      `${what}: ${checked.sections} sections is more than the ${MAX_SOS_SECTIONS} the GPU filter keeps state for`,
    );
  return checked;
}

/**
 * scipy.signal.sosfilt(sos, x, axis=-1, zi): each series through the cascade of second-order
 * sections. Returns y, or { y, zf } when `zi` is given. y may be x (pass it as `output`).
 */
export function sosfilt(sos: SosInput, x: ComplexInput, options?: ComplexCallOptions): ComplexBuffer;
export function sosfilt(sos: SosInput, x: RealBuffer, options: SosfiltOptions & { zi: RealBuffer }): FilteredWithState;
export function sosfilt(sos: SosInput, x: RealBuffer, options?: SosfiltOptions): RealBuffer;
export function sosfilt(
  sos: SosInput,
  x: RealBuffer | ComplexInput,
  options: SosfiltOptions | ComplexCallOptions = {},
): RealBuffer | ComplexBuffer | FilteredWithState {
  const { flat, sections } = deviceSos(sos, 'sosfilt');
  if (complexCall(x, options, 'sosfilt')) {
    // Real coefficients: the real and imaginary parts are filtered as series of their own.
    refuseState(options, 'sosfilt');
    const call = planesCall(x as ComplexInput, options, 'sosfilt', (n) => n);
    return runPlanes(call, 1, (planes, batch, out) =>
      sosfilt(sos, planes, { batch, stream: call.stream, output: out }),
    );
  }
  return sosfiltReal(flat, sections, x as RealBuffer, options as SosfiltOptions);
}

function sosfiltReal(
  flat: Float64Array,
  sections: number,
  x: RealBuffer,
  options: SosfiltOptions,
): RealBuffer | FilteredWithState {
  const { p, batch, length } = filterSeries(x, options.batch, 'sosfilt');
  const stateLength = sections * batch * 2;
  const zi = options.zi;
  if (zi !== undefined) expectBuffer(zi, p, stateLength, 'sosfilt zi');
  if (options.zf !== undefined) {
    if (zi === undefined) throw new TypeError('sosfilt: zf (where the final state goes) needs zi (the initial state)');
    expectBuffer(options.zf, p, stateLength, 'sosfilt zf');
  }
  const stream = resolveStream(x.context, options.stream);
  const y = filterOutput(x, options, stream, 'sosfilt');
  const zf =
    zi === undefined
      ? undefined
      : (options.zf ?? (DeviceBuffer.alloc(p, stateLength, { stream, label: 'sosfilt zf' }) as RealBuffer));
  const ctx = x.context;
  const table = coefficientTable(ctx, 'sos', flat, stream);
  // Without zi the state pointers are never read or written; x stands in for them.
  const [ziArg, zfArg, hasZi, hasZf] = [zi ?? x, zf ?? x, zi ? 1 : 0, zf ? 1 : 0];
  if (!usesScan(length, sections)) {
    ws.filterKernel(ctx, `sosfilt_${p}`)(
      elementwise(batch, stream),
      x,
      y,
      table,
      ziArg,
      zfArg,
      batch,
      length,
      sections,
      hasZi,
      hasZf,
    );
    return zf === undefined ? y : { y, zf };
  }
  // Long series: in parallel along time (sos-scan.ts, sos.cu): tiles of chunks from a zero state, the
  // chunk starts by a tree per tile and a scan of the tile starts, every chunk again from its start.
  const { tiles, treeLength } = scanGeometry(batch, length, sections);
  const tree = ws.scratch(ctx, stream, 'sosfilt-scan', 'f64', treeLength);
  const powers = coefficientTable(ctx, 'sos-scan', cachedScanPowers(flat, sections), stream);
  const blocks = { grid: Math.min(batch * tiles, MAX_SCAN_GRID), block: SCAN_THREADS, stream };
  const up = ws.sosKernel(ctx, `sos_scan_up_${p}`);
  up(blocks, x, table, powers, tree, batch, length, sections, SCAN_CHUNK);
  const series = { grid: Math.min(batch, MAX_SCAN_GRID), block: SCAN_ROW_THREADS, stream };
  const scan = ws.sosKernel(ctx, `sos_scan_tiles_${p}`);
  scan(series, tree, powers, ziArg, batch, length, sections, SCAN_CHUNK, SCAN_THREADS, hasZi);
  const down = ws.sosKernel(ctx, `sos_scan_down_${p}`);
  down(blocks, x, y, table, powers, tree, zfArg, batch, length, sections, SCAN_CHUNK, hasZf);
  return zf === undefined ? y : { y, zf };
}

/**
 * scipy.signal.sosfiltfilt(sos, x, axis=-1, padtype='odd', padlen=None): forward-backward
 * filtering (zero phase, squared magnitude) after extending each series by `padlen` samples at
 * both ends, each pass started in steady state (sosfilt_zi). SignalLengthError when a series is
 * not longer than padlen; FilterCoefficientError for a section with a pole at z = 1.
 */
export function sosfiltfilt(sos: SosInput, x: ComplexInput, options?: ComplexCallOptions & PadOptions): ComplexBuffer;
export function sosfiltfilt(sos: SosInput, x: RealBuffer, options?: SosfiltfiltOptions): RealBuffer;
export function sosfiltfilt(
  sos: SosInput,
  x: RealBuffer | ComplexInput,
  options: SosfiltfiltOptions | (ComplexCallOptions & PadOptions) = {},
): RealBuffer | ComplexBuffer {
  const { flat, sections } = deviceSos(sos, 'sosfiltfilt');
  if (complexCall(x, options, 'sosfiltfilt')) {
    const call = planesCall(x as ComplexInput, options, 'sosfiltfilt', (n) => n);
    // The padding is checked against the series before anything is enqueued.
    resolvePadding(call.input.length, options, sosfiltfiltPadlen(sos), 'sosfiltfilt');
    const pad = { padtype: options.padtype, padlen: options.padlen };
    return runPlanes(call, 1, (planes, batch, out) =>
      sosfiltfilt(sos, planes, { ...pad, batch, stream: call.stream, output: out }),
    );
  }
  const real = x as RealBuffer;
  const { p, batch, length } = filterSeries(real, options.batch, 'sosfiltfilt');
  const { edge, code } = resolvePadding(length, options, sosfiltfiltPadlen(sos), 'sosfiltfilt');
  const zi = Float64Array.from(sosfiltZi(sos).flat());
  const stream = resolveStream(real.context, options.stream);
  const y = filterOutput(real, options as SosfiltfiltOptions, stream, 'sosfiltfilt');
  const ctx = real.context;
  const work = ws.scratch(ctx, stream, 'sosfiltfilt', 'f64', batch * (length + 2 * edge));
  const table = coefficientTable(ctx, 'sos', flat, stream);
  const ziTable = coefficientTable(ctx, 'sos-zi', zi, stream);
  ws.filterKernel(ctx, `sosfiltfilt_${p}`)(
    elementwise(batch, stream),
    real,
    y,
    work,
    table,
    ziTable,
    batch,
    length,
    sections,
    edge,
    code,
  );
  return y;
}
