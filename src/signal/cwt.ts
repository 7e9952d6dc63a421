/**
 * Continuous wavelet transform (Morlet) by FFT: zero-pad, one batched forward FFT of the series,
 * multiply by a cached table of wavelet spectra, one batched inverse FFT, then keep the first N
 * samples as complex values, as power |.|², or as power summed over the frequencies of each band.
 * The wavelet convention (MNE's morlet) is described in morlet.ts.
 */
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { resolveStream, type Stream } from '../runtime/stream.js';
import { bandMembers, morletGeometry, type MorletGeometry, type MorletOptions } from './morlet.js';
import { positiveInteger } from '../runtime/value-checks.js';
import type { ComplexBuffer, RealBuffer } from './primitives.js';
import { COMPLEX_OF, signalWorkspace as ws, type Precision } from './workspace.js';
import { ComplexInputError } from './input-errors.js';
import { elementwise, expectBuffer, precisionOf } from './launch.js';

export interface CwtOptions extends MorletOptions {
  /** Only 'morlet'. */
  wavelet?: 'morlet' | undefined;
  /** 'complex' (c64/c128, B x F x N), or 'power' (|.|², real B x F x N; B x bands x N with `bands`). Default 'power'. */
  output?: 'complex' | 'power' | undefined;
  /** Sum the power over the frequencies lying in each band [lo, hi] Hz (output 'power' only). */
  bands?: readonly (readonly [number, number])[] | undefined;
  /** Series in `x` (default 1): N = x.length / batch. */
  batch?: number | undefined;
  stream?: Stream | undefined;
  /** Write here (no allocation): c64/c128 for 'complex', f32/f64 for 'power', large enough. */
  into?: DeviceBuffer<'f32'> | DeviceBuffer<'f64'> | DeviceBuffer<'c64'> | DeviceBuffer<'c128'> | undefined;
}

/** Recent geometries by their parameters: morletGeometry costs O(sum of supports) exps per call. */
const geometries = new Map<string, MorletGeometry>();
const GEOMETRY_CACHE = 64;

function cachedMorlet(length: number, o: CwtOptions): MorletGeometry {
  const list = (v: readonly number[] | Float64Array | undefined): string =>
    v === undefined ? '-' : Array.prototype.join.call(v, ',');
  const key = `${length}|${o.fs ?? 1}|${o.nCycles ?? '-'}|${o.w0 ?? '-'}|${list(o.freqs)}|${list(o.scales)}`;
  let g = geometries.get(key);
  if (!g) {
    g = morletGeometry(length, o);
    if (geometries.size >= GEOMETRY_CACHE) geometries.delete(geometries.keys().next().value!);
    geometries.set(key, g);
  }
  return g;
}

/** The geometry a cwt call will use (pure: sizes and wavelets), e.g. to size `into`. Cached by its parameters. */
export function cwtGeometry(length: number, options: CwtOptions): MorletGeometry & { rows: number } {
  if (options.wavelet !== undefined && options.wavelet !== 'morlet')
    throw new TypeError(`wavelet must be 'morlet', got ${JSON.stringify(options.wavelet)}`);
  const g = cachedMorlet(length, options);
  const output = options.output ?? 'power';
  if (output !== 'complex' && output !== 'power')
    throw new TypeError(`output must be 'complex' or 'power', got ${JSON.stringify(output)}`);
  if (options.bands !== undefined && output !== 'power') throw new TypeError("bands need output: 'power'");
  const rows = options.bands !== undefined ? options.bands.length : g.freqs.length;
  return { ...g, rows };
}

/** The wavelet spectra table (freqs x L complex) of a geometry, built on the GPU on first use. */
function waveletTable(x: RealBuffer, g: MorletGeometry, p: Precision, stream: Stream): ComplexBuffer {
  const ctx = x.context;
  const L = g.paddedLength;
  const nf = g.freqs.length;
  const make = (): DeviceBuffer<'c64' | 'c128'> =>
    DeviceBuffer.alloc(COMPLEX_OF[p], nf * L, { context: ctx, label: `morlet table ${nf}x${L} (${p})` });
  const build = (buffer: DeviceBuffer<'c64' | 'c128'>): void => {
    const params = ws.table(ctx, `${g.key}:params`, 'f64', stream, () => g.params);
    ws.kernel(ctx, 'morlet_table', p)(elementwise(nf * L, stream), buffer, params, nf, L);
    ws.complexInPlace(ctx, p, L, nf, buffer, 'forward', stream);
  };
  return ws.built(ctx, `${p}:${g.key}`, stream, make, build) as ComplexBuffer;
}

/**
 * Morlet CWT of `batch` real series (f32 or f64). Returns `into` or a new buffer: complex
 * (B x F x N), power (B x F x N) or band power (B x bands x N), row-major. Enqueue only; the
 * wavelet table is built on the GPU on first use and cached (other streams wait on its event).
 */
export function cwt(x: RealBuffer, options: CwtOptions): ComplexBuffer | RealBuffer {
  const p = precisionOf(x, 'cwt input');
  if (x.dtype !== p)
    throw new ComplexInputError(`cwt takes real input only (f32 or f64); "${x.label}" holds complex ${x.dtype}`);
  const batch = positiveInteger(options.batch ?? 1, 'batch');
  if (x.length % batch !== 0)
    throw new RangeError(`cwt input of ${x.length} samples does not split into ${batch} series`);
  const n = x.length / batch;
  const g = cwtGeometry(n, options);
  const ctx = x.context;
  const stream = resolveStream(ctx, options.stream);
  const L = g.paddedLength;
  const nf = g.freqs.length;
  const output = options.output ?? 'power';
  const outDtype = output === 'complex' ? COMPLEX_OF[p] : p;
  const outLength = batch * g.rows * n;
  if (batch * nf * L > 2 ** 31 - 1)
    throw new RangeError(`cwt work of ${batch} x ${nf} x ${L} exceeds 2^31 - 1 elements; split the batch`);
  let out: DeviceBuffer<Precision | 'c64' | 'c128'>;
  if (options.into) {
    expectBuffer(options.into, outDtype, outLength, 'cwt into');
    out = options.into;
  } else out = DeviceBuffer.alloc(outDtype, outLength, { stream, label: 'cwt output' });
  const table = waveletTable(x, g, p, stream);
  const padded = ws.scratch(ctx, stream, 'cwt-pad', p, batch * L);
  const half = ws.scratch(ctx, stream, 'cwt-half', COMPLEX_OF[p], batch * (Math.floor(L / 2) + 1));
  const work = ws.scratch(ctx, stream, 'cwt-work', COMPLEX_OF[p], batch * nf * L);
  ws.kernel(ctx, 'pad_rows', p)(elementwise(batch * L, stream), x, padded, batch, n, L);
  ws.realForward(ctx, p, L, batch, padded, half, stream);
  ws.kernel(ctx, 'cwt_multiply', p)(elementwise(batch * nf * L, stream), half, table, work, batch, nf, L);
  ws.complexInPlace(ctx, p, L, batch * nf, work, 'inverse', stream);
  if (output === 'complex')
    ws.kernel(ctx, 'cwt_complex', p)(
      elementwise(batch * nf * n, stream),
      work,
      out as ComplexBuffer,
      batch * nf,
      n,
      L,
      1 / L,
    );
  else if (options.bands === undefined)
    ws.kernel(ctx, 'cwt_power', p)(
      elementwise(batch * nf * n, stream),
      work,
      out as RealBuffer,
      batch * nf,
      n,
      L,
      1 / (L * L),
    );
  else {
    const key = `${g.key}:bands:${JSON.stringify(options.bands)}`;
    const bands = options.bands;
    let csr: ReturnType<typeof bandMembers> | undefined;
    const members = (): ReturnType<typeof bandMembers> => (csr ??= bandMembers(g.freqs, bands));
    const offsetsTable = ws.table(ctx, `${key}:offsets`, 'i32', stream, () => members().offsets);
    const membersTable = ws.table(ctx, `${key}:members`, 'i32', stream, () => members().members);
    const nb = options.bands.length;
    ws.kernel(ctx, 'cwt_band_power', p)(
      elementwise(batch * nb * n, stream),
      work,
      out as RealBuffer,
      offsetsTable,
      membersTable,
      batch,
      nf,
      nb,
      n,
      L,
      1 / (L * L),
    );
  }
  return out as ComplexBuffer | RealBuffer;
}
