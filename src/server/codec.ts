/**
 * Codecs between HTTP bodies and the engine's typed arrays.
 *
 * Requests: a JSON body carries the signal as an array (1-D, or 2-D: one row per series); a
 * binary body (`application/octet-stream`) is the B x N samples, little-endian float32 or
 * float64, or 16-bit (`i16` integers, `f16`/`bf16` bits) (`dtype`), row after row, with the
 * parameters in the query or `x-tscuda-*` headers.
 *
 * Responses (chosen by `Accept`): JSON with flat number arrays and their shapes, or binary
 * (`application/octet-stream`): the result arrays back to back, little-endian, in the order
 * and with the element types and shapes listed by the `x-tscuda-fields` header
 * (`filtered=f32[4,1024];spectrum=f32[4,256]`; waves asked for as `outputDtype` f16/bf16 are
 * `filtered=f16[4,1024]`, their raw bits; JSON widens them to numbers), the dominant cycles as `dominant=f64[B,4]`
 * (frequency, period, amplitude, phase per series), and the other fields (id, lane, device,
 * batch, length, fs, timings, stage outputs) as JSON in the `x-tscuda-result` header.
 */
import { outputDef, RESULT_ARRAY_FIELDS } from '../engine/parameters.js';
import type { JobData, JobHalfType, JobResult } from '../engine/types.js';
import { bf16Value, f16Value } from '../runtime/memory/half.js';
import { HttpError, invalidField, sampleOutOfRange } from './errors.js';
import type { SampleDtype } from './params.js';
import type { Precision } from '../runtime/fft/precision.js';
import { clip, shownValue } from '../runtime/value-checks.js';

/** Bytes per sample of each dtype. */
export const DTYPE_BYTES: Record<SampleDtype, number> = { f32: 4, f64: 8, i16: 2, f16: 2, bf16: 2 };

/** The fields of a JobResult that are arrays, in the order a binary response lays them out (the engine's list). */
export const ARRAY_FIELDS = RESULT_ARRAY_FIELDS;

/** One array field of a result. */
export type ArrayField = (typeof ARRAY_FIELDS)[number];

/** A typed array of `dtype` over `n` elements of `buffer` from `byteOffset` (i16: Int16Array; f16, bf16: their bits in a Uint16Array). */
function view(dtype: SampleDtype, buffer: ArrayBufferLike, byteOffset: number, n: number): JobData {
  switch (dtype) {
    case 'f32':
      return new Float32Array(buffer, byteOffset, n);
    case 'f64':
      return new Float64Array(buffer, byteOffset, n);
    case 'i16':
      return new Int16Array(buffer, byteOffset, n);
    default:
      return new Uint16Array(buffer, byteOffset, n);
  }
}

/**
 * A little-endian binary body as a typed array: Float32Array, Float64Array, Int16Array (i16) or
 * Uint16Array (f16/bf16 bits; the job names which with `dtype`). A Buffer that is not aligned to
 * the element size (a small body from Node's shared pool) is copied; an aligned one is viewed,
 * not copied.
 */
export function decodeBinarySignal(body: Buffer, dtype: SampleDtype): JobData {
  const size = DTYPE_BYTES[dtype];
  if (body.byteLength === 0) throw invalidField('body', 'is empty: expected samples');
  if (body.byteLength % size !== 0) {
    throw invalidField(
      'body',
      `${body.byteLength} bytes is not a multiple of the ${dtype} element size (${size} bytes)`,
    );
  }
  const n = body.byteLength / size;
  if (body.byteOffset % size === 0) return view(dtype, body.buffer, body.byteOffset, n);
  const copy = new Uint8Array(body.byteLength);
  copy.set(body);
  return view(dtype, copy.buffer, 0, n);
}

/**
 * A JSON signal (numbers, or rows of numbers of equal length) as a typed array; returns the
 * rows as `batch` when the signal is 2-D. The first bad element is named (`signal[3][17]`).
 * Every row's length is checked before anything is allocated, and the total against
 * `maxSamples` (413): a huge first row over many short ones allocates nothing.
 */
export function decodeJsonSignal(
  signal: unknown,
  dtype: Precision,
  maxSamples = Number.MAX_SAFE_INTEGER,
): { data: Float32Array | Float64Array; rows: number | undefined } {
  if (!Array.isArray(signal))
    throw invalidField(
      'signal',
      `must be an array of numbers (or of rows of numbers), got ${signal === null ? 'null' : typeof signal}`,
    );
  if (signal.length === 0) throw invalidField('signal', 'is empty');
  const make = (n: number): Float32Array | Float64Array => {
    if (n > maxSamples)
      throw new HttpError(413, 'too_many_samples', `signal: ${n} samples, at most ${maxSamples} per request`, {
        field: 'signal',
      });
    return dtype === 'f32' ? new Float32Array(n) : new Float64Array(n);
  };
  if (Array.isArray(signal[0])) {
    const rows = signal.length;
    const n = (signal[0] as unknown[]).length;
    for (let r = 1; r < rows; r++) {
      const row: unknown = signal[r];
      if (!Array.isArray(row)) throw invalidField(`signal[${r}]`, 'must be an array of numbers like the first row');
      if (row.length !== n)
        throw invalidField(
          `signal[${r}]`,
          `has ${row.length} samples, the first row ${n}: rows must have equal length`,
        );
    }
    const data = make(rows * n);
    for (let r = 0; r < rows; r++) {
      const row = signal[r] as unknown[];
      for (let i = 0; i < n; i++) {
        const v: unknown = row[i];
        if (typeof v !== 'number')
          throw invalidField(`signal[${r}][${i}]`, `must be a number, got ${v === null ? 'null' : typeof v}`);
        data[r * n + i] = v;
        if (!Number.isFinite(data[r * n + i]!)) throw sampleOutOfRange(`signal[${r}][${i}]`, v, dtype);
      }
    }
    return { data, rows };
  }
  const data = make(signal.length);
  for (let i = 0; i < signal.length; i++) {
    const v: unknown = signal[i];
    if (typeof v !== 'number')
      throw invalidField(`signal[${i}]`, `must be a number, got ${v === null ? 'null' : typeof v}`);
    data[i] = v;
    if (!Number.isFinite(data[i]!)) throw sampleOutOfRange(`signal[${i}]`, v, dtype);
  }
  return { data, rows: undefined };
}

/** The response format a request's `Accept` header asks for. */
export type ResponseFormat = 'json' | 'binary';

/**
 * `application/octet-stream` anywhere in Accept (with a q above 0) picks binary, unless JSON is
 * listed before it; anything else (absent, `*\/*`, `application/json`) is JSON.
 */
export function responseFormat(accept: string | undefined): ResponseFormat {
  if (accept === undefined || accept === '') return 'json';
  // The two plain spellings clients send on every request, before the general parse.
  if (accept === 'application/octet-stream') return 'binary';
  if (accept === 'application/json') return 'json';
  if (typeof accept !== 'string')
    throw new TypeError(`responseFormat takes the Accept header's text, got ${shownValue(accept)}`);
  let best: { format: ResponseFormat; q: number } | null = null;
  for (const part of accept.split(',')) {
    const [typeRaw, ...params] = part.split(';');
    const type = (typeRaw ?? '').trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      // Parameter names are case-insensitive (RFC 9110); a weight is a number in [0, 1].
      if (k?.trim().toLowerCase() === 'q') q = Number(v?.trim());
    }
    if (!(q >= 0 && q <= 1)) {
      const at = clip(part.trim());
      throw new HttpError(400, 'bad_accept', `Accept: ${at} has a weight (q) outside [0, 1]`, { field: 'accept' });
    }
    if (!(q > 0)) continue;
    const format: ResponseFormat | null =
      type === 'application/octet-stream'
        ? 'binary'
        : type === 'application/json' || type === '*/*' || type === 'application/*'
          ? 'json'
          : null;
    if (format !== null && (best === null || q > best.q)) best = { format, q };
  }
  if (best === null)
    throw new HttpError(
      406,
      'not_acceptable',
      `Accept: ${accept} lists neither application/json nor application/octet-stream`,
      { field: 'accept' },
    );
  return best.format;
}

/**
 * The dtype of a result array: a Uint16Array holds the bits of the `outputDtype` the job asked
 * for (`half`); without it such an array is refused rather than mislabelled.
 */
function dtypeOf(a: Float32Array | Float64Array | Uint16Array, half: JobHalfType | undefined): SampleDtype {
  if (a instanceof Uint16Array) {
    if (half === undefined)
      throw new TypeError('a 16-bit result array needs the outputDtype (f16 or bf16) its job asked for');
    return half;
  }
  return a instanceof Float32Array ? 'f32' : 'f64';
}

/** A result array as plain numbers: 16-bit float bits widened to their values. */
function numbers(a: Float32Array | Float64Array | Uint16Array, dtype: SampleDtype): number[] {
  if (dtype === 'f16') return Array.from(a, f16Value);
  if (dtype === 'bf16') return Array.from(a, bf16Value);
  return Array.from(a);
}

/** The shape of each array field of a result: B x ... from the result's own sizes, by its row's layout (job-schema.ts). */
export function shapeOf(result: JobResult, field: ArrayField): number[] {
  const a = result[field];
  const b = result.batch;
  const total = a === undefined ? 0 : a.length;
  const perRow = b > 0 && total % b === 0 ? [b, total / b] : [total];
  switch (outputDef(field)?.layout) {
    case 'series':
      return [b, result.length];
    case 'spectrum': {
      // Framed stft: a spectrogram, B x previewBins x frames.
      const frames = result.frames;
      if (frames !== undefined && frames > 0 && b > 0 && total % (b * frames) === 0)
        return [b, total / (b * frames), frames];
      return perRow;
    }
    case 'rows': {
      const per = b * result.length;
      return per > 0 && total % per === 0 ? [b, total / per, result.length] : [total];
    }
    default:
      return perRow;
  }
}

/** The non-array part of a result, as sent in JSON bodies and in `x-tscuda-result`. */
export function resultMeta(result: JobResult): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    id: result.id,
    lane: result.lane,
    device: result.device,
    batch: result.batch,
    length: result.length,
    fs: result.fs,
    timings: result.timings,
  };
  if (result.frames !== undefined) meta.frames = result.frames;
  if (result.dominant !== undefined) meta.dominant = result.dominant;
  if (result.stages !== undefined) meta.stages = result.stages;
  return meta;
}

/**
 * A JSON response body: the metadata, each array as a plain number array, and `shapes`/`dtypes`.
 * `half` is the job's `outputDtype` when it asked for f16/bf16 waves: their values are widened to
 * numbers (exactly: every f16/bf16 value is a double), `dtypes` still names them f16/bf16.
 */
export function encodeJsonResult(result: JobResult, half?: JobHalfType): Record<string, unknown> {
  const body = resultMeta(result);
  const shapes: Record<string, number[]> = {};
  const dtypes: Record<string, SampleDtype> = {};
  for (const field of ARRAY_FIELDS) {
    const a = result[field];
    if (a === undefined) continue;
    const dtype = dtypeOf(a, half);
    body[field] = numbers(a, dtype);
    shapes[field] = shapeOf(result, field);
    dtypes[field] = dtype;
  }
  body.shapes = shapes;
  body.dtypes = dtypes;
  return body;
}

/**
 * Throws 406 when `result` holds more than `maxValues` array values: its JSON text (~20 bytes a
 * value, written in one piece on the event loop) would stall the server for seconds and can pass
 * the longest string V8 makes; the binary answer carries the same result as its raw bytes.
 */
export function checkJsonResultSize(result: JobResult, maxValues: number): void {
  let values = 0;
  for (const field of ARRAY_FIELDS) values += result[field]?.length ?? 0;
  if (values > maxValues)
    throw new HttpError(
      406,
      'result_too_large_for_json',
      `the result holds ${values} values, over the ${maxValues} a JSON answer may (limits.maxJsonResultValues): ask for it binary (Accept: application/octet-stream)`,
      { field: 'accept' },
    );
}

/** A binary response: the body and its two describing headers. */
export interface BinaryResult {
  body: Buffer;
  fields: string;
  meta: string;
}

/** A binary response as the pieces that follow each other in the body (views of the result's arrays, not copies). */
export interface BinaryResultParts {
  parts: Buffer[];
  /** Bytes of all parts. */
  byteLength: number;
  fields: string;
  meta: string;
}

/**
 * The arrays of a result back to back (little-endian, as the host stores them) in one Buffer, and
 * the headers describing them; `half`: the job's `outputDtype` when it asked for f16/bf16 waves.
 */
export function encodeBinaryResult(result: JobResult, half?: JobHalfType): BinaryResult {
  const { parts, fields, meta } = encodeBinaryResultParts(result, half);
  const body = parts.length === 0 ? Buffer.alloc(0) : parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return { body, fields, meta };
}

/** encodeBinaryResult without joining the pieces: a server writes them one after the other, copying nothing. */
export function encodeBinaryResultParts(result: JobResult, half?: JobHalfType): BinaryResultParts {
  const parts: Buffer[] = [];
  const fields: string[] = [];
  for (const field of ARRAY_FIELDS) {
    const a = result[field];
    if (a === undefined) continue;
    parts.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
    fields.push(`${field}=${dtypeOf(a, half)}[${shapeOf(result, field).join(',')}]`);
  }
  const meta = resultMeta(result);
  if (result.dominant !== undefined) {
    // One row per series could outgrow a header: the dominant cycles travel in the body.
    const d = new Float64Array(result.dominant.length * 4);
    result.dominant.forEach((c, i) => d.set([c.frequency, c.period, c.amplitude, c.phase], i * 4));
    parts.push(Buffer.from(d.buffer));
    fields.push(`dominant=f64[${result.dominant.length},4]`);
    delete meta.dominant;
  }
  // Header values must be Latin-1 without control characters: escape the rest as JSON does.
  const metaText = JSON.stringify(meta).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return { parts, byteLength: parts.reduce((n, p) => n + p.byteLength, 0), fields: fields.join(';'), meta: metaText };
}

/** One field described by `x-tscuda-fields`. */
export interface FieldLayout {
  name: string;
  dtype: SampleDtype;
  shape: number[];
  /** Byte offset in the body. */
  offset: number;
  bytes: number;
}

/** Parses `x-tscuda-fields` (for clients and tests): each field's place in the binary body. */
export function parseFieldsHeader(header: string): FieldLayout[] {
  const out: FieldLayout[] = [];
  let offset = 0;
  for (const part of header.split(';')) {
    if (part === '') continue;
    // Dimensions are whole numbers, none empty (`[1,,2]`), and the byte count a safe integer.
    const m = /^(\w+)=(f32|f64|f16|bf16)\[((?:\d+(?:,\d+)*)?)\]$/.exec(part);
    if (m === null) throw new Error(`x-tscuda-fields: cannot read ${clip(JSON.stringify(part))}`);
    const dtype = m[2] as SampleDtype;
    const shape = m[3] === '' ? [] : m[3]!.split(',').map(Number);
    const bytes = shape.reduce((p, d) => p * d, 1) * DTYPE_BYTES[dtype];
    if (!Number.isSafeInteger(bytes))
      throw new Error(`x-tscuda-fields: ${clip(JSON.stringify(part))} is larger than any body`);
    out.push({ name: m[1]!, dtype, shape, offset, bytes });
    offset += bytes;
  }
  return out;
}
