/**
 * findNonFinite on the GPU: the first NaN or infinity of f32, f64, f16 and bf16 device buffers,
 * equal to the CPU rule (engine/finite-samples.ts firstNonFinite) on fresh random samples with bad
 * ones at random places (the first, the last, several), or ALL_FINITE; the index cell is poisoned
 * (0, an index that would look found) before each search, so the reset is checked too. Large inputs
 * (grid-stride loops over more samples than threads); bad arguments refused before the driver.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { firstNonFinite } from '../../../src/engine/finite-samples.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { bf16Bits, f16Bits } from '../../../src/runtime/memory/half.js';
import { Stream } from '../../../src/runtime/stream.js';
import { ALL_FINITE, clearSignalCaches, findNonFinite, type SignalInput } from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';

const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;

type Float = 'f32' | 'f64' | 'f16' | 'bf16';

function samples(dtype: Float, n: number): Float32Array | Float64Array | Uint16Array {
  const v = (): number => (Math.random() * 2 - 1) * 10 ** Math.floor(Math.random() * 8 - 4);
  if (dtype === 'f32') return Float32Array.from({ length: n }, v);
  if (dtype === 'f64') return Float64Array.from({ length: n }, v);
  return Uint16Array.from({ length: n }, () => (dtype === 'f16' ? f16Bits(v()) : bf16Bits(v())));
}

function poison(dtype: Float, kind: number): number {
  if (dtype === 'f32' || dtype === 'f64') return [Number.NaN, Infinity, -Infinity][kind % 3]!;
  const e = dtype === 'f16' ? 0x7c00 : 0x7f80;
  return [e | 0x8001, e, e | 0x8000][kind % 3]!;
}

function upload(dtype: Float, x: Float32Array | Float64Array | Uint16Array): SignalInput {
  if (dtype === 'f32') return DeviceBuffer.from('f32', x as Float32Array);
  if (dtype === 'f64') return DeviceBuffer.from('f64', x as Float64Array);
  return dtype === 'f16' ? DeviceBuffer.from('f16', x as Uint16Array) : DeviceBuffer.from('bf16', x as Uint16Array);
}

describe.skipIf(!gpu.available)(`findNonFinite on the GPU${skip}`, () => {
  afterAll(() => clearSignalCaches());

  it('each float type: the first bad sample at random places, the first and the last, several; none found leaves ALL_FINITE', async () => {
    using s = new Stream({ label: 'non-finite' });
    using cell = DeviceBuffer.alloc('u64', 1);
    const host = new BigUint64Array(1);
    for (const dtype of ['f32', 'f64', 'f16', 'bf16'] as const)
      for (let trial = 0; trial < 12; trial++) {
        const batch = 1 + (trial % 3);
        const n = trial < 6 ? 1 + Math.floor(Math.random() * 5000) : 1_000_000 + Math.floor(Math.random() * 100_000);
        const x = samples(dtype, batch * n);
        if (trial % 4 !== 3) {
          for (let k = 0; k <= trial % 3; k++) x[Math.floor(Math.random() * x.length)] = poison(dtype, trial + k);
          if (trial % 4 === 0) x[0] = poison(dtype, trial);
          if (trial % 4 === 1) x[x.length - 1] = poison(dtype, trial + 1);
        }
        using d = upload(dtype, x);
        cell.write(BigUint64Array.of(0n));
        findNonFinite(d, cell, { batch, stream: s });
        await s.done();
        cell.read(host);
        const expected = firstNonFinite(x, dtype);
        expect(host[0], `${dtype} trial ${trial}: ${batch} x ${n}`).toBe(expected < 0 ? ALL_FINITE : BigInt(expected));
      }
  }, 120_000);

  it('refuses i16 input, an index cell of another type and a batch that does not split the input, before the driver', () => {
    using cell = DeviceBuffer.alloc('u64', 1);
    using wrongCell = DeviceBuffer.alloc('u32', 2);
    using i16 = DeviceBuffer.from('i16', Int16Array.of(1, 2, 3, 4));
    using f32 = DeviceBuffer.from('f32', Float32Array.of(1, 2, 3, 4, 5));
    expect(() => findNonFinite(i16, cell)).toThrow(
      /must hold f32, f64, f16 or bf16 samples, not i16 \(i16 samples are always finite\)/,
    );
    expect(() => findNonFinite(f32, wrongCell as never)).toThrow(/must hold u64, not u32/);
    expect(() => findNonFinite(f32, cell, { batch: 2 })).toThrow(/5 samples does not split into 2 series/);
  });
});
