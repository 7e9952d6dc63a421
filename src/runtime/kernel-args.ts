/**
 * Kernel parameter encoding, CUDA-free: the layout of a parameter block and the checked writes
 * of scalar arguments into it. Every integer is range-checked against its C type and never
 * wraps; a wrong type is a TypeError, a value outside the type (or NaN, or a fraction) a
 * RangeError naming the argument.
 */

/** The C types a kernel parameter can have here: a device pointer or a scalar. */
export type KernelParamType = 'ptr' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64';

/** Bytes of each parameter type (its alignment too). */
export const PARAM_BYTES: Readonly<Record<KernelParamType, number>> = Object.freeze({
  ptr: 8,
  i8: 1,
  u8: 1,
  i16: 2,
  u16: 2,
  i32: 4,
  u32: 4,
  i64: 8,
  u64: 8,
  f32: 4,
  f64: 8,
});

/** True for the names above, as own keys (`'toString'` is not a parameter type). */
export function isKernelParamType(p: unknown): p is KernelParamType {
  return typeof p === 'string' && Object.hasOwn(PARAM_BYTES, p);
}

/** The offset of each parameter (C layout: each aligned to its size) and the block's total size. */
export function paramLayout(params: readonly unknown[], kernel: string): { offsets: Int32Array; size: number } {
  if (!Array.isArray(params))
    throw new TypeError(
      `kernel "${kernel}": params must be an array of parameter types (${Object.keys(PARAM_BYTES).join(', ')})`,
    );
  const offsets = new Int32Array(params.length);
  let size = 0;
  params.forEach((p, i) => {
    if (!isKernelParamType(p))
      throw new TypeError(
        `kernel "${kernel}": unknown parameter type ${JSON.stringify(p) ?? String(p)} at ${i}; expected one of ${Object.keys(PARAM_BYTES).join(', ')}`,
      );
    const bytes = PARAM_BYTES[p];
    size = Math.ceil(size / bytes) * bytes;
    offsets[i] = size;
    size += bytes;
  });
  return { offsets, size };
}

const INT_RANGE = {
  i8: [-(2 ** 7), 2 ** 7 - 1],
  u8: [0, 2 ** 8 - 1],
  i16: [-(2 ** 15), 2 ** 15 - 1],
  u16: [0, 2 ** 16 - 1],
  i32: [-(2 ** 31), 2 ** 31 - 1],
  u32: [0, 2 ** 32 - 1],
} as const;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;
const F32_MAX = 3.4028234663852886e38;
const TWO32 = 2 ** 32;

function show(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object')
    return value === null
      ? 'null'
      : `an object (${(value as { constructor?: { name?: string | undefined } | undefined }).constructor?.name ?? 'Object'})`;
  return String(value);
}

/**
 * Writes scalar `value` of `type` at `offset` of `view` (little-endian), after checking it: `where`
 * names the argument in messages (`kernel "saxpy" argument 0 (i32)`).
 */
export function writeScalar(
  view: DataView,
  offset: number,
  type: Exclude<KernelParamType, 'ptr'>,
  value: unknown,
  where: string,
): void {
  switch (type) {
    case 'f32':
    case 'f64': {
      if (typeof value !== 'number') throw new TypeError(`${where}: expected a number, got ${show(value)}`);
      if (type === 'f32') {
        if (Number.isFinite(value) && Math.abs(value) > F32_MAX)
          throw new RangeError(`${where}: ${value} is outside the f32 range (±${F32_MAX}); it would become Infinity`);
        view.setFloat32(offset, value, true);
      } else view.setFloat64(offset, value, true);
      return;
    }
    case 'i64':
    case 'u64': {
      let v: bigint;
      if (typeof value === 'bigint') v = value;
      else if (typeof value === 'number') {
        if (!Number.isInteger(value)) throw new RangeError(`${where}: ${show(value)} is not an integer`);
        if (!Number.isSafeInteger(value))
          throw new RangeError(`${where}: ${value} is beyond 2^53 and has lost precision as a number; pass a bigint`);
        if (type === 'u64' && value < 0)
          throw new RangeError(`${where}: ${value} is negative; u64 holds 0..${U64_MAX}`);
        if (value >= 0) {
          view.setUint32(offset, value % TWO32, true);
          view.setUint32(offset + 4, Math.floor(value / TWO32), true);
          return;
        }
        v = BigInt(value);
      } else throw new TypeError(`${where}: expected an integer or a bigint, got ${show(value)}`);
      if (type === 'i64') {
        if (v < I64_MIN || v > I64_MAX)
          throw new RangeError(`${where}: ${v}n is outside the i64 range ${I64_MIN}..${I64_MAX}`);
        view.setBigInt64(offset, v, true);
      } else {
        if (v < 0n || v > U64_MAX) throw new RangeError(`${where}: ${v}n is outside the u64 range 0..${U64_MAX}`);
        view.setBigUint64(offset, v, true);
      }
      return;
    }
    default: {
      const range = INT_RANGE[type];
      if (range === undefined) throw new TypeError(`${where}: unknown parameter type ${String(type)}`);
      if (typeof value !== 'number')
        throw new TypeError(`${where}: expected an integer (a number), got ${show(value)}`);
      if (!Number.isInteger(value)) throw new RangeError(`${where}: ${show(value)} is not an integer`);
      if (value < range[0] || value > range[1])
        throw new RangeError(`${where}: ${value} is outside the ${type} range ${range[0]}..${range[1]}`);
      switch (type) {
        case 'i8':
          view.setInt8(offset, value);
          return;
        case 'u8':
          view.setUint8(offset, value);
          return;
        case 'i16':
          view.setInt16(offset, value, true);
          return;
        case 'u16':
          view.setUint16(offset, value, true);
          return;
        case 'i32':
          view.setInt32(offset, value, true);
          return;
        case 'u32':
          view.setUint32(offset, value, true);
          return;
      }
    }
  }
}

/**
 * Checks a raw device address (a number standing for a pointer argument, or given to
 * DeviceBuffer.wrap): a non-negative safe integer; `allowZero` admits the null pointer.
 */
export function checkAddress(value: unknown, where: string, allowZero: boolean): number {
  if (typeof value !== 'number')
    throw new TypeError(`${where}: expected a device address (a number), got ${show(value)}`);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${where}: ${show(value)} is not a device address (a non-negative integer below 2^53)`);
  if (value === 0 && !allowZero) throw new RangeError(`${where}: address 0 is the null pointer`);
  return value;
}

/** Writes a 64-bit device address at `offset`. */
export function writeAddress(view: DataView, offset: number, address: number): void {
  view.setUint32(offset, address % TWO32, true);
  view.setUint32(offset + 4, Math.floor(address / TWO32), true);
}
