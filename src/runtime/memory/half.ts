/**
 * Conversions between JavaScript numbers and the 16-bit float formats of the f16 (`__half`) and
 * bf16 (`__nv_bfloat16`) dtypes. Encoding rounds to nearest, ties to even, directly from the
 * float64 value (no double rounding through float32); overflow gives ±Infinity, NaN a quiet NaN.
 */
import { DTYPES, Float16ArrayConstructor, type Float16ArrayLike, type HostArray } from './dtype.js';
import { typeName } from '../article.js';

interface Format {
  /** Exponent bias. */
  readonly bias: number;
  /** Mantissa bits. */
  readonly mantissa: number;
  /** Bit pattern of +Infinity and of the quiet NaN. */
  readonly inf: number;
  readonly nan: number;
}

const F16: Format = { bias: 15, mantissa: 10, inf: 0x7c00, nan: 0x7e00 };
const BF16: Format = { bias: 127, mantissa: 7, inf: 0x7f80, nan: 0x7fc0 };

function roundHalfEven(v: number): number {
  const f = Math.floor(v);
  const d = v - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

function encode(value: number, fmt: Format): number {
  // As a Float32Array stores it: a value that is not a number becomes one first (undefined, 'abc': NaN).
  const x = Number(value);
  if (Number.isNaN(x)) return fmt.nan;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  const minExp = 1 - fmt.bias;
  const one = 1 << fmt.mantissa;
  if (a < 2 ** minExp) return sign | roundHalfEven(a / 2 ** (minExp - fmt.mantissa)); // subnormal; rounding up to `one` is the smallest normal, bit-exact
  if (a === Infinity) return sign | fmt.inf;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  let m = roundHalfEven((a / 2 ** e - 1) * one);
  if (m === one) {
    m = 0;
    e++;
  }
  if (e > fmt.bias) return sign | fmt.inf;
  return sign | ((e + fmt.bias) << fmt.mantissa) | m;
}

function decode(bits: number, fmt: Format): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const expBits = (bits & 0x7fff) >> fmt.mantissa;
  const m = bits & ((1 << fmt.mantissa) - 1);
  const maxExp = 0x7fff >> fmt.mantissa;
  if (expBits === maxExp) return m ? Number.NaN : sign * Infinity;
  if (expBits === 0) return sign * m * 2 ** (1 - fmt.bias - fmt.mantissa);
  return sign * (1 + m / (1 << fmt.mantissa)) * 2 ** (expBits - fmt.bias);
}

/** The IEEE binary16 bit pattern of `x` (round to nearest even). */
export function f16Bits(x: number): number {
  return encode(x, F16);
}

/** The value of an IEEE binary16 bit pattern. */
export function f16Value(bits: number): number {
  return decode(bits & 0xffff, F16);
}

/** The bfloat16 bit pattern of `x` (round to nearest even). */
export function bf16Bits(x: number): number {
  return encode(x, BF16);
}

/** The value of a bfloat16 bit pattern. */
export function bf16Value(bits: number): number {
  return decode(bits & 0xffff, BF16);
}

/**
 * Numbers to an f16 host array, the type a `'f16'` buffer reads and writes: a Float16Array where
 * the runtime has it, else a Uint16Array of raw bits.
 */
export function toF16(values: ArrayLike<number>): HostArray<'f16'> {
  if (Float16ArrayConstructor) return Float16ArrayConstructor.from(values);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = encode(values[i]!, F16);
  return out;
}

/** Numbers to raw binary16 bits in a Uint16Array, whatever the runtime (also accepted by `'f16'` buffers). */
export function toF16Bits(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = encode(values[i]!, F16);
  return out;
}

/** An f16 host array (Float16Array, or a Uint16Array of raw bits) to float32 numbers. */
export function fromF16(array: HostArray<'f16'>): Float32Array {
  if (
    !(array instanceof Uint16Array) &&
    !(Float16ArrayConstructor !== undefined && array instanceof Float16ArrayConstructor)
  )
    throw new TypeError(`fromF16: expects a Uint16Array of f16 bits or a Float16Array, got ${typeName(array)}`);
  if (array instanceof Uint16Array) {
    const out = new Float32Array(array.length);
    for (let i = 0; i < array.length; i++) out[i] = decode(array[i]!, F16);
    return out;
  }
  return Float32Array.from(array as Float16ArrayLike);
}

/** Numbers to bfloat16 raw bits, the host array of `'bf16'` buffers. */
export function toBf16(values: ArrayLike<number>): Uint16Array {
  const out = new DTYPES.bf16.array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = encode(values[i]!, BF16);
  return out;
}

/** bfloat16 raw bits to float32 numbers (exact: every bfloat16 is a float32). */
export function fromBf16(bits: Uint16Array): Float32Array {
  if (!(bits instanceof Uint16Array))
    throw new TypeError(`fromBf16: expects a Uint16Array of bfloat16 bits, got ${typeName(bits)}`);
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = decode(bits[i]!, BF16);
  return out;
}
