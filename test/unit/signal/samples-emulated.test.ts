/**
 * The 16-bit kernels of src/kernels/signal.cu compiled for the CPU (g++, with the stand-in CUDA
 * headers of emulation/include) and run one emulated thread per block: detrend_window, series_stats
 * and frame reading i16/f16/bf16 give what their f32 variants give on the same values, and narrow
 * rounds as the host encoders do. Needs g++ only (no scipy); skipped with the reason without it.
 */
import { execaSync } from 'execa';
import koffi from 'koffi';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_SIGNATURES } from '../../../src/kernels/launchers.generated.js';
import { bf16Bits, bf16Value, f16Bits, f16Value } from '../../../src/runtime/memory/half.js';
import { getWindow } from '../../../src/signal/window.js';

const HERE = join(import.meta.dirname, 'emulation');

function build(): { so: string; reason: string } {
  try {
    const so = join(mkdtempSync(join(tmpdir(), 'tscuda-emu16-')), 'signal_emu.so');
    const r = execaSync(
      'g++',
      ['-O1', '-shared', '-fPIC', `-I${join(HERE, 'include')}`, '-o', so, join(HERE, 'harness.cpp')],
      { reject: false },
    );
    return r.exitCode === 0 ? { so, reason: '' } : { so: '', reason: `g++ failed: ${String(r.stderr).slice(0, 300)}` };
  } catch (e) {
    return { so: '', reason: `g++ not runnable: ${(e as Error).message.split('\n')[0]}` };
  }
}

const emu = build();
const C_TYPES: Record<string, string> = {
  ptr: 'void *',
  i32: 'int',
  f64: 'double',
  f32: 'float',
  u32: 'unsigned int',
  i64: 'int64_t',
};
let kernels: Record<string, (...args: unknown[]) => void> = {};
let setBlock: (block: number, grid: number) => void = () => {};

function launch(name: string, ...args: unknown[]): void {
  const grid = 3;
  for (let b = 0; b < grid; b++) {
    setBlock(b, grid);
    kernels[name]!(...args);
  }
}

type In = 'i16' | 'f16' | 'bf16';

/** Fresh random samples of `dtype` and the float32 values they stand for (times `scale`). */
function samples(dtype: In, n: number, scale: number): { bits: Int16Array | Uint16Array; values: Float32Array } {
  const values = new Float32Array(n);
  const bits = dtype === 'i16' ? new Int16Array(n) : new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const x = 0.4 * Math.sin(i * 0.37) + 0.3 * (Math.random() * 2 - 1) + (0.2 * i) / n;
    if (dtype === 'i16') bits[i] = Math.round(x * 32767);
    else bits[i] = dtype === 'f16' ? f16Bits(x) : bf16Bits(x);
    const v = dtype === 'i16' ? bits[i]! : dtype === 'f16' ? f16Value(bits[i]!) : bf16Value(bits[i]!);
    values[i] = v * scale;
  }
  return { bits, values };
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++)
    m = Math.max(m, Number.isNaN(a[i]!) || Number.isNaN(b[i]!) ? Infinity : Math.abs(a[i]! - b[i]!));
  return m;
}

describe.skipIf(!emu.so)(
  `16-bit signal kernels, emulated on the CPU${emu.so ? '' : ` (skipped: ${emu.reason})`}`,
  () => {
    beforeAll(() => {
      const lib = koffi.load(emu.so);
      setBlock = lib.func('void emu_block(unsigned int block, unsigned int grid)') as (b: number, g: number) => void;
      kernels = {};
      for (const [name, params] of Object.entries(SIGNAL_SIGNATURES))
        kernels[name] = lib.func(`void ${name}(${params.map((t, i) => `${C_TYPES[t]} a${i}`).join(', ')})`) as (
          ...args: unknown[]
        ) => void;
    });

    it('series_stats and detrend_window read i16/f16/bf16 as the f32 variants read their values', () => {
      const batch = 2;
      const n = 300;
      const w = Float32Array.from(getWindow('hann', n));
      for (const dtype of ['i16', 'f16', 'bf16'] as const) {
        const scale = dtype === 'i16' ? 2 ** -15 : 0.5;
        const { bits, values } = samples(dtype, batch * n, scale);
        for (const detrend of [0, 1, 2]) {
          const s16 = new Float64Array(2 * batch);
          const s32 = new Float64Array(2 * batch);
          if (detrend) {
            launch(`series_stats_${dtype}`, bits, s16, n, batch, 128, scale);
            launch('series_stats_f32', values, s32, n, batch, 128);
            expect(maxAbsDiff(s16, s32), `${dtype} stats`).toBeLessThan(1e-9);
          }
          const a = new Float32Array(batch * n).fill(Number.NaN);
          const b = new Float32Array(batch * n).fill(Number.NaN);
          launch(`detrend_window_${dtype}_f32`, bits, a, s16, w, n, batch, detrend, 1, 64, scale);
          launch('detrend_window_f32', values, b, s32, w, n, batch, detrend, 1, 64);
          expect(maxAbsDiff(a, b), `${dtype} detrend ${detrend}`).toBe(0);
        }
      }
    });

    it('frame reads 16-bit samples (with boundary extension) as frame_f32 reads their values', () => {
      const batch = 2;
      const n = 200;
      const nperseg = 32;
      const step = 24;
      const ext = 16;
      const frames = Math.floor((n + 2 * ext - nperseg) / step) + 1;
      const w = Float32Array.from(getWindow('hann', nperseg));
      for (const dtype of ['i16', 'f16', 'bf16'] as const) {
        const { bits, values } = samples(dtype, batch * n, dtype === 'i16' ? 2 ** -15 : 1);
        for (const boundary of [1, 2, 3, 4]) {
          const a = new Float32Array(batch * frames * nperseg).fill(Number.NaN);
          const b = new Float32Array(batch * frames * nperseg).fill(Number.NaN);
          launch(
            `frame_${dtype}_f32`,
            bits,
            a,
            w,
            n,
            batch,
            nperseg,
            nperseg,
            step,
            frames,
            ext,
            boundary,
            2,
            dtype === 'i16' ? 2 ** -15 : 1,
          );
          launch('frame_f32', values, b, w, n, batch, nperseg, nperseg, step, frames, ext, boundary, 2);
          expect(maxAbsDiff(a, b), `${dtype} boundary ${boundary}`).toBe(0);
        }
      }
    });

    it('narrow rounds f32 to f16/bf16 as the host encoders do', () => {
      const x = Float32Array.from(
        { length: 5000 },
        () => (Math.random() < 0.5 ? -1 : 1) * 2 ** (Math.random() * 40 - 26),
      );
      x.set([0, 65504, 65520, 1 + 2 ** -11, 2 ** -25, 1 + 2 ** -8]);
      const h = new Uint16Array(x.length);
      const b = new Uint16Array(x.length);
      launch('narrow_f32_f16', x, h, x.length);
      launch('narrow_f32_bf16', x, b, x.length);
      for (let i = 0; i < x.length; i++) {
        expect(h[i], `f16 of ${x[i]}`).toBe(f16Bits(x[i]!));
        expect(b[i], `bf16 of ${x[i]}`).toBe(bf16Bits(x[i]!));
      }
    });
  },
);
