/**
 * How a job and its result cross Redis. BullMQ stores a job's data and return value as JSON, and
 * a float array in JSON costs ~10-20 bytes per value and a parse of every number. So only the
 * small parts go through BullMQ (the parameters; the result's scalars and a table of its arrays),
 * while the samples and the result arrays are raw little-endian bytes under their own Redis keys
 * (with a TTL), written and read as Buffers: no base64 (a third larger, and a string copy of
 * every array), no JSON number arrays, and a job's status can be read without pulling its data.
 * Pure: no Redis here.
 */
import { outputDef, RESULT_ARRAY_FIELDS } from '../engine/parameters.js';
import type { JobData, JobOutputArrays, JobResult, JobSpec } from '../engine/types.js';
import { resultArrays, type ResultArrayField } from '../engine/result-arrays.js';
import type { NormalizedJob } from '../engine/validate.js';
import type { Precision } from '../runtime/fft/precision.js';

export { RESULT_ARRAY_FIELDS };

export type { ResultArrayField };

/**
 * Element type of a packed array, by the array that holds it: f32, f64, i16 (16-bit samples) or
 * u16 (raw f16/bf16 bits: the job's `dtype` or `outputDtype`, which travel with its parameters,
 * say which).
 */
export type WireDtype = 'f32' | 'f64' | 'i16' | 'u16';

type WireArrayType = Float32Array | Float64Array | Int16Array | Uint16Array;

/** The job parameters as they travel: the spec without its samples and the fields that cannot cross a process (`into`, `signal`). */
export type WireParams = Omit<JobSpec, 'data' | 'into' | 'signal'>;

/** A queued job's data in BullMQ (JSON). */
export interface WireJob {
  /** Format version, so a worker refuses what a newer client wrote instead of misreading it. */
  v: 1;
  /** How many blob stores the client listed (absent: one), so a worker listing another number says so instead of looking in the wrong one. */
  stores?: number | undefined;
  params: WireParams;
  /** Element type and count of the samples under `inputKey`. */
  dtype: WireDtype;
  samples: number;
  inputKey: string;
  /**
   * The client sent the samples alongside the job's add rather than before it (small samples, to
   * save a round trip): a worker may take the job before they land, and then waits a moment for
   * them (worker-input.ts). Absent: they were stored before the job was added.
   */
  inputAlongside?: boolean | undefined;
  /** How long the samples are kept, ms (absent from older clients). */
  inputTtlMs?: number | undefined;
  /** The submitter's limit on the result's bytes, and how long the result is kept. */
  maxResultBytes: number;
  resultTtlMs: number;
}

/** Where one array lies in a packed result. */
export interface WireArray {
  field: ResultArrayField;
  dtype: WireDtype;
  length: number;
  /** Byte offset in the packed buffer (a multiple of 8). */
  offset: number;
}

/** Which worker ran a job, and how often it was started: the delivery facts a result carries. */
export interface QueueRunInfo {
  /** The queue's id of the job. */
  jobId: string;
  /** The worker that completed it (`runQueueWorker`'s name). */
  worker: string;
  /** Times a worker started it; above 1 the job was retried (a worker died or failed in a retryable way). */
  attempts: number;
  /** Times it was found stalled (its worker stopped renewing its lock, e.g. killed) and put back in the queue. */
  stalls: number;
}

/** A completed job's return value in BullMQ (JSON): the result's scalars and where its arrays are. */
export interface WireResult {
  v: 1;
  resultKey: string;
  /** Bytes under `resultKey`. */
  bytes: number;
  arrays: WireArray[];
  scalars: Omit<JobResult, ResultArrayField>;
  run: QueueRunInfo;
}

const ALIGN = 8;
const align = (n: number): number => Math.ceil(n / ALIGN) * ALIGN;
const TYPES = { f32: Float32Array, f64: Float64Array, i16: Int16Array, u16: Uint16Array } as const;

/** The wire type of an array (samples or a result array). */
export function dtypeOf(a: WireArrayType): WireDtype {
  return a instanceof Float64Array ? 'f64' : a instanceof Int16Array ? 'i16' : a instanceof Uint16Array ? 'u16' : 'f32';
}
/** The array class of a stored element type; an unknown one (a newer writer, a corrupted record) is an Error naming it, not a TypeError from deep inside. */
function arrayClassOf(dtype: WireDtype): (typeof TYPES)[WireDtype] {
  if (!Object.hasOwn(TYPES, dtype)) throw new Error(`stored array: unknown element type ${JSON.stringify(dtype)}`);
  return TYPES[dtype];
}
const bytesOf = (dtype: WireDtype): number => arrayClassOf(dtype).BYTES_PER_ELEMENT;

/** Bytes of `count` values of `dtype`. */
export function wireBytes(dtype: WireDtype, count: number): number {
  return (TYPES[dtype]?.BYTES_PER_ELEMENT ?? 0) * count;
}

/** The samples as bytes: a view of the same memory when the array covers it exactly, else a copy. */
export function samplesToBuffer(data: JobData): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** Samples back from their bytes (a view when aligned, else a copy); throws naming the mismatch. */
export function samplesFromBuffer(buffer: Buffer, dtype: WireDtype, samples: number): JobData {
  const size = bytesOf(dtype);
  if (buffer.byteLength !== samples * size)
    throw new Error(
      `input: ${buffer.byteLength} bytes stored, expected ${samples} ${dtype} samples (${samples * size} bytes)`,
    );
  return typedView(buffer, 0, samples, dtype);
}

/**
 * `length` values of `dtype` at byte `offset` of `buffer`: a view of the same memory when it is
 * aligned for the type (a Redis reply of this size is its own allocation, so it usually is),
 * else a copy into fresh memory.
 */
function typedView(buffer: Buffer, offset: number, length: number, dtype: WireDtype): WireArrayType {
  const start = buffer.byteOffset + offset;
  const Type = arrayClassOf(dtype);
  if (start % Type.BYTES_PER_ELEMENT === 0) return new Type(buffer.buffer as ArrayBuffer, start, length);
  const copy = new ArrayBuffer(length * Type.BYTES_PER_ELEMENT);
  new Uint8Array(copy).set(buffer.subarray(offset, offset + copy.byteLength));
  return new Type(copy);
}

/**
 * A result laid out for the wire: its arrays' bytes in order, each starting at an 8-byte
 * boundary, as views of the arrays themselves (and zero padding between them), so the bytes go to
 * Redis without being packed into one new buffer first; `bytes` is their total.
 */
export interface PackedResult {
  pieces: Uint8Array[];
  bytes: number;
  arrays: WireArray[];
  scalars: WireResult['scalars'];
}

const ZEROS = new Uint8Array(ALIGN);

/**
 * Throws a TypeError naming `field` unless `a` is an array type unpackResult reads back for it: a
 * plain array (or another typed array) would be packed as bytes it is not, and every client would
 * fail to read the result.
 */
function checkResultArray(field: ResultArrayField, a: unknown): asserts a is WireArrayType {
  const types = allowedTypes(field);
  if (!types.some((Type) => a instanceof Type)) {
    const got = ArrayBuffer.isView(a) ? `a ${a.constructor.name}` : Array.isArray(a) ? 'a plain array' : typeof a;
    throw new TypeError(`result.${field} must be a ${types.map((t) => t.name).join(' or ')}, got ${got}`);
  }
}

/** The array types a result field may hold, by its row's element type (job-schema.ts): float64 rows, waves (16-bit bits too), or the engine's precision. */
function allowedTypes(field: ResultArrayField): readonly (typeof TYPES)[WireDtype][] {
  const element = outputDef(field)?.element;
  return element === 'f64'
    ? [Float64Array]
    : element === 'wave'
      ? [Float32Array, Float64Array, Uint16Array]
      : [Float32Array, Float64Array];
}

/** Lays out a result's arrays for the wire (no copy: see PackedResult) and splits off its scalars; a TypeError names an array of the wrong type. */
export function packResult(result: JobResult): PackedResult {
  const arrays: WireArray[] = [];
  const pieces: Uint8Array[] = [];
  let bytes = 0;
  for (const field of RESULT_ARRAY_FIELDS) {
    const a: unknown = result[field];
    if (a === undefined) continue;
    checkResultArray(field, a);
    if (bytes % ALIGN !== 0) {
      pieces.push(ZEROS.subarray(0, align(bytes) - bytes));
      bytes = align(bytes);
    }
    arrays.push({ field, dtype: dtypeOf(a), length: a.length, offset: bytes });
    pieces.push(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    bytes += a.byteLength;
  }
  // The total is padded too, as the estimate at submit counts it.
  if (bytes % ALIGN !== 0) {
    pieces.push(ZEROS.subarray(0, align(bytes) - bytes));
    bytes = align(bytes);
  }
  const scalars: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result))
    if (!(RESULT_ARRAY_FIELDS as readonly string[]).includes(key) && value !== undefined) scalars[key] = value;
  return { pieces, bytes, arrays, scalars: scalars as WireResult['scalars'] };
}

/** The pieces of a value as one buffer (for a connection that takes only whole values, and tests). */
export function joinPieces(pieces: readonly Uint8Array[]): Buffer {
  return Buffer.concat(pieces);
}

/** The result back from its scalars and packed arrays (views of `buffer` when aligned, else copies). */
export function unpackResult(scalars: WireResult['scalars'], arrays: readonly WireArray[], buffer: Buffer): JobResult {
  const result: JobResult = { ...scalars };
  for (const w of arrays) {
    const size = bytesOf(w.dtype);
    const end = w.offset + w.length * size;
    if (end > buffer.byteLength)
      throw new Error(`result: array ${w.field} ends at byte ${end}, the stored result has ${buffer.byteLength}`);
    const array = typedView(buffer, w.offset, w.length, w.dtype);
    const row = outputDef(w.field);
    if (row === undefined) throw new Error(`result: unknown array ${JSON.stringify(w.field)}`);
    if (!allowedTypes(w.field).some((Type) => array instanceof Type))
      throw new Error(
        row.element === 'f64'
          ? `result: ${w.field} must be f64`
          : `result: ${w.field} cannot be ${w.dtype === 'u16' ? '16-bit' : w.dtype}`,
      );
    // The array's type is one its row allows (checked above): JobOutputArrays' type of that field.
    (result as unknown as Record<string, unknown>)[w.field] = array;
  }
  return result;
}

/** Where one result array of a job will lie in its packed result (`resultLayout`). */
export interface ResultSlot {
  field: ResultArrayField;
  dtype: WireDtype;
  length: number;
  /** Byte offset in the packed result (a multiple of 8). */
  offset: number;
}

/**
 * Where a job's result arrays (engine/result-arrays.ts) will lie in its packed result at the
 * workers' `precision`, laid out as packResult packs them; `bytes` is the packed total (what a
 * worker measures, and so what the client checks at submit).
 */
export function resultLayout(job: NormalizedJob, precision: Precision): { slots: ResultSlot[]; bytes: number } {
  const slots: ResultSlot[] = [];
  let bytes = 0;
  for (const { field, length, element } of resultArrays(job, precision)) {
    slots.push({ field, dtype: element, length, offset: bytes });
    bytes = align(bytes + length * bytesOf(element));
  }
  return { slots, bytes };
}

/** Typed views of `buffer` (8-byte aligned, at least `bytes` long) for a job's result arrays: its `into`. */
export function layoutViews(buffer: Buffer, slots: readonly ResultSlot[]): JobOutputArrays {
  const out: Partial<Record<ResultArrayField, WireArrayType>> = {};
  for (const s of slots)
    out[s.field] = new TYPES[s.dtype](buffer.buffer as ArrayBuffer, buffer.byteOffset + s.offset, s.length);
  // resultLayout gives each field its engine type (never i16): the views are the job's `into`.
  return out as JobOutputArrays;
}
