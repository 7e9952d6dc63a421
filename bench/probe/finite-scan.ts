/**
 * The CPU scan for non-finite samples that the doors run (the server's binary bodies, the
 * fuser's requests, JobQueue.submit: src/engine/finite-samples.ts), timed on one job of
 * 16 x 1M samples of each type, all finite (the scan's common case: one full pass). No GPU.
 *   tsx bench/probe/finite-scan.ts [--samples 16777216] [--reps 15]
 */
import { parseArgs } from 'node:util';
import { firstNonFinite } from '../../src/engine/index.js';
import type { JobData, JobDataType } from '../../src/engine/index.js';
import { bf16Bits, f16Bits } from '../../src/runtime/index.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: String(16 << 20) }, reps: { type: 'string', default: '15' } },
});
const n = Number(values.samples);
const reps = Number(values.reps);

function data(dtype: JobDataType): JobData {
  const value = (i: number): number => Math.sin(i * 0.001) + (i % 7) * 0.01;
  switch (dtype) {
    case 'f32':
      return Float32Array.from({ length: n }, (_, i) => value(i));
    case 'f64':
      return Float64Array.from({ length: n }, (_, i) => value(i));
    case 'i16':
      return Int16Array.from({ length: n }, (_, i) => Math.round(value(i) * 16000));
    case 'f16':
      return Uint16Array.from({ length: n }, (_, i) => f16Bits(value(i)));
    default:
      return Uint16Array.from({ length: n }, (_, i) => bf16Bits(value(i)));
  }
}

console.log(`firstNonFinite over ${n} finite samples, median of ${reps} (after 3 warm-up passes)`);
for (const dtype of ['f32', 'f64', 'f16', 'bf16'] as const) {
  const x = data(dtype);
  for (let i = 0; i < 3; i++) if (firstNonFinite(x, dtype) !== -1) throw new Error('a finite sample was refused');
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    firstNonFinite(x, dtype);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const median = ms[Math.floor(reps / 2)]!;
  console.log(`${dtype.padEnd(5)} ${median.toFixed(2).padStart(7)} ms  ${(n / median / 1e6).toFixed(2)} Gsamples/s`);
}
