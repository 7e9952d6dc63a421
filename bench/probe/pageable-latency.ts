/**
 * Where a pageable job's host time goes (the serve throughput mix: 16 x 65536 float32, stft):
 *   tsx bench/probe/pageable-latency.ts
 * 1. copyHostArray of 4 MiB between plain arrays, and plain <-> pinned (thread pool memcpy);
 * 2. one job at a time on an engine: result.timings (queued, run, GPU) for plain arrays, plain
 *    arrays with a reused `into`, and engine-lent pinned arrays.
 */
import { copyHostArray } from '../../src/runtime/memory/host-copy.js'; // private-path: the thread-pool memcpy under every pageable copy, measured alone
import { HostBuffer } from '../../src/runtime/index.js';
import { JobEngine } from '../../src/engine/index.js';
import type { JobSpec } from '../../src/engine/index.js';

const B = 16;
const N = 65536;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeIt(reps: number, fn: () => Promise<unknown>): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i <= reps; i++) {
    const t = performance.now();
    await fn();
    if (i > 0) xs.push(performance.now() - t);
  }
  return +median(xs).toFixed(3);
}

const report: Record<string, unknown> = {};
const a = new Float32Array(B * N).fill(1);
const b = new Float32Array(B * N);
const pinned = HostBuffer.alloc('f32', B * N, { label: 'probe pinned' });
report.copy_plain_to_plain_ms = await timeIt(20, () => copyHostArray(b, a));
report.copy_plain_to_pinned_ms = await timeIt(20, () => copyHostArray(pinned.array, a));
report.copy_pinned_to_plain_ms = await timeIt(20, () => copyHostArray(b, pinned.array));
report.set_plain_to_pinned_ms = await timeIt(20, async () => pinned.array.set(a));

const engine = new JobEngine({ lanes: 4, label: 'probe' });
const data = new Float32Array(B * N).map((_, i) => Math.sin(i * 0.01) + 0.001 * i);
const base: JobSpec = { data, batch: B, fs: 1000, flags: ['stft'], passBand: [20, 200], previewBins: 256 };
const lentIn = engine.hostBuffer('f32', B * N);
lentIn.set(data);
const variants: Record<string, JobSpec> = {
  plain: base,
  plain_into: { ...base, into: { filtered: new Float32Array(B * N) } },
  lent: {
    ...base,
    data: lentIn,
    into: { filtered: engine.hostBuffer('f32', B * N), spectrum: engine.hostBuffer('f32', B * 256) },
  },
};
for (const [name, spec] of Object.entries(variants)) {
  await engine.submit(spec).result; // warm
  const t: { wall: number[]; run: number[]; gpu: number[]; queued: number[] } = {
    wall: [],
    run: [],
    gpu: [],
    queued: [],
  };
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    const r = await engine.submit(spec).result;
    t.wall.push(performance.now() - t0);
    t.run.push(r.timings.runMs);
    t.gpu.push(r.timings.gpuMs);
    t.queued.push(r.timings.queuedMs);
  }
  report[`job_${name}`] = Object.fromEntries(Object.entries(t).map(([k, v]) => [`${k}_ms`, +median(v).toFixed(3)]));
}
await engine.close();
console.log(JSON.stringify(report, null, 1));
process.exit(0);
