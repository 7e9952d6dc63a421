/** Element types of buffers, each with its size and the TypedArray that holds it on the host. */
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
} as const;

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
}

/** The host array type of a dtype: Float32Array for f32 and c64 (two floats per element), ... */
export type HostArray<T extends DType> = HostArrays[T];

export function dtypeInfo(dtype: DType): (typeof DTYPES)[DType] {
  const info = DTYPES[dtype];
  if (!info) throw new TypeError(`unknown dtype ${String(dtype)}; expected one of ${Object.keys(DTYPES).join(', ')}`);
  return info;
}

export function checkLength(length: number, what: string): void {
  if (!Number.isSafeInteger(length) || length <= 0) throw new RangeError(`${what} must be a positive integer, got ${length}`);
}

export function checkOffset(offset: number, what: string): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`${what} must be a non-negative integer, got ${offset}`);
}

/** Checks that a host array holds elements of `dtype` and returns how many elements it holds. */
export function hostElements(dtype: DType, array: ArrayBufferView, what: string): number {
  const info = dtypeInfo(dtype);
  if (!(array instanceof info.array)) {
    throw new TypeError(`${what}: a ${dtype} buffer needs a ${info.array.name}, got ${array.constructor.name}`);
  }
  return (array as unknown as { length: number }).length / info.components;
}
