/**
 * The host array type of f16 where the runtime has one: `Float16Array` (Node 24+, or Node 22 with
 * --js-float16array) holds real numbers; elsewhere f16 values travel as raw IEEE binary16 bits in a
 * Uint16Array. Declared here because TypeScript's ES2023 lib does not have it.
 */
import { withArticle } from '../article.js';
export interface Float16ArrayLike extends ArrayBufferView {
  readonly length: number;
  readonly BYTES_PER_ELEMENT: 2;
  [index: number]: number;
  /** A copy of elements start..end. */
  slice(start?: number, end?: number): Float16ArrayLike;
  /** A view of elements begin..end. */
  subarray(begin?: number, end?: number): Float16ArrayLike;
  /** Copies `array` in at `offset`. */
  set(array: ArrayLike<number>, offset?: number): void;
  /** Sets elements start..end to `value`. */
  fill(value: number, start?: number, end?: number): this;
  /** The values, in order. */
  [Symbol.iterator](): IterableIterator<number>;
}

interface Float16ArrayConstructorLike {
  new (length: number): Float16ArrayLike;
  new (buffer: ArrayBufferLike, byteOffset?: number, length?: number): Float16ArrayLike;
  from(values: ArrayLike<number>): Float16ArrayLike;
  readonly name: string;
}

/** `Float16Array` when this JavaScript runtime has it, else undefined. */
export const Float16ArrayConstructor: Float16ArrayConstructorLike | undefined = (
  globalThis as { Float16Array?: Float16ArrayConstructorLike | undefined }
).Float16Array;

/**
 * Element types of buffers, each with its size and the TypedArray that holds it on the host.
 *
 * | dtype | CUDA C type | host array |
 * | --- | --- | --- |
 * | f16 | `__half` | Float16Array where the runtime has it (Node 24+), else Uint16Array of raw bits; a Uint16Array of raw bits is accepted either way |
 * | bf16 | `__nv_bfloat16` | Uint16Array of raw bits (no JavaScript bfloat16 array exists) |
 *
 * Convert with `toF16`/`fromF16` and `toBf16`/`fromBf16`.
 */
export const DTYPES = {
  f32: { bytes: 4, array: Float32Array, components: 1 },
  f64: { bytes: 8, array: Float64Array, components: 1 },
  i8: { bytes: 1, array: Int8Array, components: 1 },
  i16: { bytes: 2, array: Int16Array, components: 1 },
  i32: { bytes: 4, array: Int32Array, components: 1 },
  i64: { bytes: 8, array: BigInt64Array, components: 1 },
  u8: { bytes: 1, array: Uint8Array, components: 1 },
  u16: { bytes: 2, array: Uint16Array, components: 1 },
  u32: { bytes: 4, array: Uint32Array, components: 1 },
  u64: { bytes: 8, array: BigUint64Array, components: 1 },
  /** Interleaved (re, im) float32 pairs: cuFFT's cufftComplex. */
  c64: { bytes: 8, array: Float32Array, components: 2 },
  /** Interleaved (re, im) float64 pairs: cuFFT's cufftDoubleComplex. */
  c128: { bytes: 16, array: Float64Array, components: 2 },
  /** IEEE binary16 (`__half`): Float16Array where the runtime has it, else Uint16Array raw bits. */
  f16: { bytes: 2, array: (Float16ArrayConstructor ?? Uint16Array) as Uint16ArrayConstructor, components: 1 },
  /** bfloat16 (`__nv_bfloat16`): Uint16Array of raw bits. */
  bf16: { bytes: 2, array: Uint16Array, components: 1 },
} as const;

/** An element type: 'f32', 'f64', 'f16', 'bf16', 'i8' ... 'u64', 'c64', 'c128' (see DTYPES). */
export type DType = keyof typeof DTYPES;

interface HostArrays {
  f32: Float32Array;
  f64: Float64Array;
  i8: Int8Array;
  i16: Int16Array;
  i32: Int32Array;
  i64: BigInt64Array;
  u8: Uint8Array;
  u16: Uint16Array;
  u32: Uint32Array;
  u64: BigUint64Array;
  c64: Float32Array;
  c128: Float64Array;
  f16: Uint16Array | Float16ArrayLike;
  bf16: Uint16Array;
}

/** The host array type of a dtype: Float32Array for f32 and c64 (two floats per element), ... */
export type HostArray<T extends DType> = HostArrays[T];

/** The size, host array constructor and components of a dtype; throws TypeError naming the valid ones. */
export function dtypeInfo(dtype: DType): (typeof DTYPES)[DType] {
  const info = DTYPES[dtype];
  if (!info) throw new TypeError(`unknown dtype ${String(dtype)}; expected one of ${Object.keys(DTYPES).join(', ')}`);
  return info;
}

/** Throws RangeError unless `offset` is a non-negative safe integer. */
export function checkOffset(offset: number, what: string): void {
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new RangeError(`${what} must be a non-negative integer, got ${offset}`);
}

/** Checks that a host array holds elements of `dtype` and returns how many elements it holds. */
export function hostElements(dtype: DType, array: ArrayBufferView, what: string): number {
  const info = dtypeInfo(dtype);
  // f16 also takes raw bits in a Uint16Array where the runtime has Float16Array.
  if (!(array instanceof info.array) && !(dtype === 'f16' && array instanceof Uint16Array)) {
    throw new TypeError(
      `${what}: a ${dtype} buffer needs ${withArticle(info.array.name)}, got ${array.constructor.name}`,
    );
  }
  return (array as unknown as { length: number }).length / info.components;
}
