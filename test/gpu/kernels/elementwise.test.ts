import { describe, expect, it } from 'vitest';
import { elementwise } from '../../../src/kernels/elementwise.js';
import { reduction } from '../../../src/kernels/reduction.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { DTYPES, type DType } from '../../../src/runtime/memory/dtype.js';
import {
  bf16Bits,
  bf16Value,
  f16Bits,
  f16Value,
  fromBf16,
  fromF16,
  toBf16,
  toF16,
} from '../../../src/runtime/memory/half.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { maxRelativeError, randomF64 } from '../helpers.js';

const REAL: readonly DType[] = ['f32', 'f64', 'f16', 'bf16'];
const INTEGER: readonly DType[] = ['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64'];

/** What a value becomes when stored as `dtype` (the float64 reference rounds like the GPU's storage). */
function quantize(dtype: DType, v: number): number {
  switch (dtype) {
    case 'f32':
      return Math.fround(v);
    case 'f16':
      return f16Value(f16Bits(v));
    case 'bf16':
      return bf16Value(bf16Bits(v));
    default:
      return v;
  }
}

/** Host array of `dtype` holding `values` (f16/bf16 converted, integers truncated). */
function hostArray(dtype: DType, values: readonly number[]): ArrayBufferView {
  if (dtype === 'f16') return toF16(values);
  if (dtype === 'bf16') return toBf16(values);
  if (dtype === 'i64' || dtype === 'u64')
    return (dtype === 'i64' ? BigInt64Array : BigUint64Array).from(values.map((v) => BigInt(Math.trunc(v))));
  const Ctor = DTYPES[dtype].array as unknown as { from(v: readonly number[]): ArrayBufferView };
  return Ctor.from(values);
}

function numbers(dtype: DType, array: ArrayBufferView): number[] {
  if (dtype === 'f16') return Array.from(fromF16(array as Uint16Array));
  if (dtype === 'bf16') return Array.from(fromBf16(array as Uint16Array));
  return Array.from(array as unknown as ArrayLike<number | bigint>, Number);
}

/** Random values for a dtype: reals in [-1, 1), integers small enough that a*x + y stays in range. */
function randomValues(dtype: DType, n: number): number[] {
  if (REAL.includes(dtype)) return Array.from(randomF64(n), (v) => quantize(dtype, v));
  const signed = dtype.startsWith('i');
  return Array.from({ length: n }, () => Math.floor(Math.random() * 40) - (signed ? 20 : 0) + (signed ? 0 : 1));
}

function upload<T extends DType>(dtype: T, values: readonly number[], stream: Stream): DeviceBuffer<T> {
  const buffer = DeviceBuffer.alloc(dtype, values.length, { stream });
  buffer.write(hostArray(dtype, values) as never, { stream });
  return buffer;
}

function poisoned<T extends DType>(dtype: T, n: number, stream: Stream): DeviceBuffer<T> {
  return DeviceBuffer.alloc(dtype, n, { stream }).memset(0x7f, { stream, width: 8 }) as DeviceBuffer<T>;
}

describe.skipIf(!gpu.available)(
  `elementwise() and reduction()${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    const axpy = elementwise({
      name: 'axpy_t',
      inputs: 'const T x, const T y',
      params: 'T a',
      outputs: 'T z',
      operation: 'z = a * x + y',
    });

    it.each([...REAL, ...INTEGER])('axpy on %s matches a float64 reference', async (dtype) => {
      using stream = new Stream({ label: `axpy ${dtype}` });
      const n = 100_003; // not a multiple of the block
      const xs = randomValues(dtype, n);
      const ys = randomValues(dtype, n);
      const a = REAL.includes(dtype) ? quantize(dtype, 1.5 + Math.random()) : 3;
      using x = upload(dtype, xs, stream);
      using y = upload(dtype, ys, stream);
      using z = poisoned(dtype, n, stream);
      axpy(x, y, a, z, { stream });
      const out = numbers(dtype, z.read(undefined as never, { stream }) as ArrayBufferView);
      await stream.done();
      const expected = xs.map((v, i) => quantize(dtype, a * v + ys[i]!));
      const tolerance = { f32: 1e-6, f64: 1e-15, f16: 2e-3, bf16: 1.6e-2 }[dtype as 'f32'] ?? 0;
      if (tolerance === 0) expect(out).toEqual(expected);
      else {
        // Relative to the magnitude of the terms: a*x + y may cancel.
        const worst = Math.max(
          ...out.map((v, i) => Math.abs(v - expected[i]!) / (Math.abs(a * xs[i]!) + Math.abs(ys[i]!) + 1e-30)),
        );
        expect(worst).toBeLessThan(tolerance);
      }
    });

    it('typed literal declarations: saxpy on f32 with the README call shape', async () => {
      using stream = new Stream();
      const saxpy = elementwise({
        name: 'saxpy',
        inputs: 'const float x, const float y',
        params: 'float a',
        outputs: 'float z',
        operation: 'z = a * x + y',
      });
      const xs = Array.from(randomF64(4097));
      const ys = Array.from(randomF64(4097));
      using x = DeviceBuffer.alloc('f32', xs.length, { stream }).write(Float32Array.from(xs), { stream });
      using y = DeviceBuffer.alloc('f32', ys.length, { stream }).write(Float32Array.from(ys), { stream });
      using z = poisoned('f32', xs.length, stream);
      saxpy(x, y, -0.75, z, { stream });
      const out = z.read(new Float32Array(xs.length), { stream });
      await stream.done();
      expect(
        maxRelativeError(
          out,
          xs.map((v, i) => Math.fround(-0.75 * Math.fround(v) + Math.fround(ys[i]!))),
        ),
      ).toBeLessThan(1e-6);
      expect(() => saxpy(x, y, 1, z.view(0, 10) as never, { stream })).toThrow(/same length/);
    });

    const sumSquares = reduction({
      name: 'sumsq_t',
      inputs: 'const T x',
      output: 'T y',
      params: 'float scale',
      map: 'x * x',
      reduce: 'a + b',
      identity: '0',
      post: 'y = a * scale',
    });

    it.each([
      ['f64', 1, 1 << 22],
      ['f32', 1, 1 << 20],
      ['f32', 1000, 777],
      ['f32', 3, 5],
      ['f16', 4, 10_000],
      ['bf16', 2, 30_001],
    ] as const)('sum of squares on %s, %i row(s) of %i, matches float64', async (dtype, rows, k) => {
      using stream = new Stream();
      const xs = randomValues(dtype, rows * k);
      using x = upload(dtype, xs, stream);
      using y = poisoned(dtype, rows, stream);
      const scale = 0.5 + Math.random();
      sumSquares(x, scale, y, { stream });
      const out = numbers(dtype, y.read(undefined as never, { stream }) as ArrayBufferView);
      await stream.done();
      const expected = Array.from({ length: rows }, (_, r) => {
        let s = 0;
        for (let i = 0; i < k; i++) s += xs[r * k + i]! ** 2;
        return s * Math.fround(scale);
      });
      const tolerance = { f64: 1e-12, f32: 1e-5, f16: 2e-3, bf16: 1.6e-2 }[dtype];
      expect(maxRelativeError(out, expected)).toBeLessThan(tolerance);
    });

    it('max reduction on integers with a wider accumulator and a C type output', async () => {
      using stream = new Stream();
      const maxAbs = reduction({
        name: 'maxabs',
        inputs: 'const int x',
        output: 'long long y',
        map: 'x < 0 ? -(long long)x : (long long)x',
        reduce: 'a > b ? a : b',
        identity: '0',
      });
      const xs = Array.from({ length: 1 << 21 }, () => Math.floor((Math.random() - 0.5) * 2 ** 31));
      using x = DeviceBuffer.alloc('i32', xs.length, { stream }).write(Int32Array.from(xs), { stream });
      using y = DeviceBuffer.alloc('i64', 1, { stream }).memset(0x7f, { stream, width: 8 });
      maxAbs(x, y, { stream });
      const out = y.read(new BigInt64Array(1), { stream });
      await stream.done();
      expect(Number(out[0])).toBe(xs.reduce((m, v) => Math.max(m, Math.abs(v)), 0));
    });

    it('rejects mismatched dtypes, rows that do not divide, and wrong argument counts before launching', () => {
      using stream = new Stream();
      using f = DeviceBuffer.alloc('f32', 10, { stream });
      using d = DeviceBuffer.alloc('f64', 10, { stream });
      using three = DeviceBuffer.alloc('f32', 3, { stream });
      expect(() => axpy(f, d as never, 1, f, { stream })).toThrow(/T, which is f32 .* but got a f64 buffer/);
      expect(() => sumSquares(f, 1, three, { stream })).toThrow(/do not split into the output's 3 rows/);
      expect(() => (axpy as unknown as (...a: unknown[]) => void)(f, f, f)).toThrow(/takes 4 argument/);
    });
  },
);
