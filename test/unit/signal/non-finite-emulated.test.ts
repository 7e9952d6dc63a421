/**
 * first_non_finite_<f32|f64|f16|bf16> of src/kernels/signal.cu compiled for the CPU (the emulation
 * of emulation/, three emulated blocks of one thread: every grid-stride path and the atomicMin
 * across them) against the doors' CPU rule (engine/finite-samples.ts firstNonFinite) on fresh
 * random samples: the index cell, reset to all ones as findNonFinite resets it, ends at the first
 * NaN or infinity, or stays all ones. Needs g++ only; skipped with the reason without it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { firstNonFinite } from '../../../src/engine/finite-samples.js';
import { bf16Bits, f16Bits } from '../../../src/runtime/memory/half.js';
import { emu, launch, loadEmulatedKernels } from './emulation/emulator.js';

type Float = 'f32' | 'f64' | 'f16' | 'bf16';
const ALL_ONES = 0xffff_ffff_ffff_ffffn;

function samples(dtype: Float, n: number): Float32Array | Float64Array | Uint16Array {
  const v = (): number => (Math.random() * 2 - 1) * 10 ** Math.floor(Math.random() * 8 - 4);
  if (dtype === 'f32') return Float32Array.from({ length: n }, v);
  if (dtype === 'f64') return Float64Array.from({ length: n }, v);
  return Uint16Array.from({ length: n }, () => (dtype === 'f16' ? f16Bits(v()) : bf16Bits(v())));
}

function poison(dtype: Float, kind: number): number {
  if (dtype === 'f32' || dtype === 'f64')
    return [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY][kind]!;
  const e = dtype === 'f16' ? 0x7c00 : 0x7f80;
  return [e | 0x8000 | 1, e, e | 0x8000][kind]!;
}

/** The kernel's answer for `x` as `batch` series: the index, or -1 for all ones. */
function kernelFirst(dtype: Float, x: ArrayBufferView & { length: number }, batch: number): number {
  const cell = new BigUint64Array(1).fill(ALL_ONES);
  launch(`first_non_finite_${dtype}`, x, cell, batch, x.length / batch);
  return cell[0] === ALL_ONES ? -1 : Number(cell[0]);
}

describe.skipIf(!emu.so)(
  `first_non_finite kernels, emulated on the CPU${emu.so ? '' : ` (skipped: ${emu.reason})`}`,
  { timeout: 120_000 },
  () => {
    beforeAll(loadEmulatedKernels);

    it('each float type: the first bad sample of random data at random places (the first, the last, several), or none', () => {
      for (const dtype of ['f32', 'f64', 'f16', 'bf16'] as const)
        for (let trial = 0; trial < 60; trial++) {
          const batch = 1 + (trial % 4);
          const n = 1 + Math.floor(Math.random() * 200);
          const x = samples(dtype, batch * n);
          expect(kernelFirst(dtype, x, batch), `${dtype} all finite`).toBe(-1);
          const bad = 1 + (trial % 3);
          for (let k = 0; k < bad; k++) x[Math.floor(Math.random() * x.length)] = poison(dtype, (trial + k) % 3);
          if (trial % 10 === 0) x[0] = poison(dtype, 2);
          if (trial % 10 === 5) x[x.length - 1] = poison(dtype, 0);
          const expected = firstNonFinite(x, dtype);
          expect(expected).toBeGreaterThanOrEqual(0);
          expect(kernelFirst(dtype, x, batch), `${dtype} batch ${batch} n ${n}`).toBe(expected);
        }
    });

    it('lets the finite extremes through: -0, the largest values, subnormals, every finite 16-bit pattern', () => {
      expect(kernelFirst('f32', Float32Array.of(-0, 3.4028234663852886e38, -1e-45, 1), 1)).toBe(-1);
      expect(kernelFirst('f64', Float64Array.of(-0, Number.MAX_VALUE, -Number.MIN_VALUE, 1), 1)).toBe(-1);
      for (const [dtype, e] of [
        ['f16', 0x7c00],
        ['bf16', 0x7f80],
      ] as const) {
        const finite = Uint16Array.from({ length: 65536 }, (_, i) => i).filter((b) => (b & e) !== e);
        expect(kernelFirst(dtype, finite, 1), dtype).toBe(-1);
      }
    });
  },
);
