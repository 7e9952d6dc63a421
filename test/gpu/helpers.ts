import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '../../src/runtime/index.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BASIC_FATBIN = join(ROOT, 'test', 'kernels', 'build', 'basic.fatbin');

export function loadBasicModule(): Module {
  if (!existsSync(BASIC_FATBIN)) throw new Error(`${BASIC_FATBIN} is missing: run npm run build:kernels first`);
  return Module.load({ path: BASIC_FATBIN, label: 'basic.fatbin' });
}

/** Fresh random values in [-1, 1) (never all zeros): a new seed each run. */
export function randomF32(n: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.random() * 2 - 1;
  return a;
}

export function randomF64(n: number): Float64Array {
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.random() * 2 - 1;
  return a;
}

/** NaN everywhere, so an output the GPU did not write is caught. */
export function poison<T extends Float32Array | Float64Array>(a: T): T {
  a.fill(Number.NaN);
  return a;
}

export function maxRelativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i]!;
    const err = Math.abs(actual[i]! - e) / Math.max(1e-30, Math.abs(e));
    if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
  }
  return worst;
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
