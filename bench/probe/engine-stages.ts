/**
 * Where the STFT job's time goes (issue 11's PCIe fraction): not a benchmark with goals, a probe
 * whose JSON answers "what bounds stft_job_gsamples_per_s?". Run on a GPU host:
 *   tsx bench/probe/engine-stages.ts [out.json]
 * 1. per stage of one 64 x 65536 float32 job on one stream (CUDA events around each stage, median of 30);
 * 2. the compute alone (no copies) back to back, on 1 and 4 streams: the compute bound in Gsamples/s;
 * 3. the copies alone (16 MiB in, 16 MiB out per job) on 4 and 8 streams with every job enqueued at
 *    once: the bidirectional copy bound for this job's traffic;
 * 4. the whole job enqueued at once on 4 and 8 streams (no host waits): what the kernels allow with
 *    a perfect host;
 * 5. the engine's closed loop at several lane counts and depths.
 */
import { percentile } from '../harness/stats.js';
import { writeFileSync } from 'node:fs';
import { Device, DeviceBuffer, HostBuffer, Event, Stream } from '../../src/runtime/index.js';
import {
  bandMask,
  bandPowers,
  detrendWindow,
  dominantCycleDevice,
  halfBins,
  irfft,
  rfft,
  spectrumMagnitude,
  type ComplexBuffer,
  type RealBuffer,
} from '../../src/signal/index.js';
import { JobEngine } from '../../src/engine/index.js';
import { BANDS, FS, jobData, PASS_BAND, PREVIEW_BINS, STFT_B, STFT_N, stftSpec } from '../tscuda/engine-jobs.js';

const B = STFT_B;
const N = STFT_N;
const K = halfBins(N);
const SAMPLES = B * N;
const ctx = Device.get(0).context;

interface Set {
  stream: Stream;
  hostIn: HostBuffer<'f32'>;
  hostOut: HostBuffer<'f32'>;
  hostPreview: HostBuffer<'f32'>;
  hostSmall: HostBuffer<'f64'>;
  x: DeviceBuffer<'f32'>;
  xw: DeviceBuffer<'f32'>;
  spec: DeviceBuffer<'c64'>;
  masked: DeviceBuffer<'c64'>;
  filtered: DeviceBuffer<'f32'>;
  preview: DeviceBuffer<'f32'>;
  powers: DeviceBuffer<'f64'>;
  dominant: DeviceBuffer<'f64'>;
}

function makeSet(i: number): Set {
  const stream = new Stream({ label: `probe ${i}` });
  const o = { stream, label: `probe ${i}` };
  const hostIn = HostBuffer.alloc('f32', SAMPLES, { label: 'in' });
  hostIn.array.set(jobData(B, N, 7 + i));
  return {
    stream,
    hostIn,
    hostOut: HostBuffer.alloc('f32', SAMPLES, { label: 'out' }),
    hostPreview: HostBuffer.alloc('f32', B * PREVIEW_BINS, { label: 'prev' }),
    hostSmall: HostBuffer.alloc('f64', B * 8, { label: 'small' }),
    x: DeviceBuffer.alloc('f32', SAMPLES, o),
    xw: DeviceBuffer.alloc('f32', SAMPLES, o),
    spec: DeviceBuffer.alloc('c64', B * K, o),
    masked: DeviceBuffer.alloc('c64', B * K, o),
    filtered: DeviceBuffer.alloc('f32', SAMPLES, o),
    preview: DeviceBuffer.alloc('f32', B * PREVIEW_BINS, o),
    powers: DeviceBuffer.alloc('f64', B * BANDS.length, o),
    dominant: DeviceBuffer.alloc('f64', B * 4, o),
  };
}

type Step = (s: Set, stream: Stream) => void;
const series = (_: Set, stream: Stream) => ({ batch: B, length: N, stream });
const STEPS: [string, Step][] = [
  ['h2d', (s, st) => s.x.write(s.hostIn, { stream: st })],
  [
    'detrend_window',
    (s, st) =>
      detrendWindow(s.x as RealBuffer, s.xw as RealBuffer, { ...series(s, st), detrend: 'linear', window: 'hann' }),
  ],
  ['rfft', (s, st) => rfft(s.xw as RealBuffer, s.spec as ComplexBuffer, series(s, st))],
  [
    'band_mask',
    (s, st) =>
      bandMask(s.spec as ComplexBuffer, {
        ...series(s, st),
        fs: FS,
        band: PASS_BAND,
        output: s.masked as ComplexBuffer,
        scale: 1 / N,
      }),
  ],
  [
    'irfft',
    (s, st) => irfft(s.masked as ComplexBuffer, s.filtered as RealBuffer, { ...series(s, st), normalize: false }),
  ],
  [
    'magnitude',
    (s, st) =>
      spectrumMagnitude(s.spec as ComplexBuffer, s.preview as RealBuffer, {
        ...series(s, st),
        bins: PREVIEW_BINS,
        scale: 1 / N,
      }),
  ],
  ['band_powers', (s, st) => bandPowers(s.spec as ComplexBuffer, s.powers, { ...series(s, st), fs: FS, bands: BANDS })],
  ['dominant', (s, st) => dominantCycleDevice(s.spec as ComplexBuffer, s.dominant, { ...series(s, st), fs: FS })],
  ['d2h_filtered', (s, st) => s.filtered.read(s.hostOut, { stream: st })],
  [
    'd2h_small',
    (s, st) => {
      s.preview.read(s.hostPreview, { stream: st });
      s.powers.read(s.hostSmall, { stream: st, length: B * BANDS.length });
      s.dominant.read(s.hostSmall, { stream: st, length: B * 4, otherOffset: B * BANDS.length });
    },
  ],
];
const COMPUTE = STEPS.filter(([n]) => !n.startsWith('h2d') && !n.startsWith('d2h'));
const COPIES = STEPS.filter(([n]) => n === 'h2d' || n === 'd2h_filtered');

const median = (xs: number[]): number => percentile(xs, 0.5);

function perStage(set: Set): Record<string, number> {
  const events = STEPS.map(() => new Event({ timing: true, label: 'e' }));
  const start = new Event({ timing: true, label: 's' });
  const times: Record<string, number[]> = {};
  for (let r = 0; r < 31; r++) {
    start.record(set.stream);
    STEPS.forEach(([, step], i) => {
      step(set, set.stream);
      events[i]!.record(set.stream);
    });
    events.at(-1)!.synchronize();
    if (r === 0) continue;
    STEPS.forEach(([name], i) =>
      (times[name] ??= []).push(1000 * Event.elapsedMs(i === 0 ? start : events[i - 1]!, events[i]!)),
    );
  }
  const out: Record<string, number> = {};
  for (const [name, xs] of Object.entries(times)) out[`${name}_us`] = +median(xs).toFixed(1);
  out.total_us = +Object.values(out)
    .reduce((a, b) => a + b, 0)
    .toFixed(1);
  return out;
}

/** Enqueues `jobs` jobs of `steps` round-robin over `sets` with no host wait; Gsamples/s (median of 5). */
function enqueued(sets: Set[], steps: [string, Step][], jobs: number): number {
  const t0 = new Event({ timing: true, label: 't0' });
  const t1 = new Event({ timing: true, label: 't1' });
  const done = sets.map(() => new Event({ label: 'd' }));
  const rates: number[] = [];
  for (let r = 0; r < 6; r++) {
    ctx.synchronize();
    t0.record(sets[0]!.stream);
    for (const s of sets.slice(1)) s.stream.waitEvent(t0);
    for (let j = 0; j < jobs; j++) {
      const s = sets[j % sets.length]!;
      for (const [, step] of steps) step(s, s.stream);
    }
    sets.forEach((s, i) => {
      done[i]!.record(s.stream);
      sets[0]!.stream.waitEvent(done[i]!);
    });
    t1.record(sets[0]!.stream);
    t1.synchronize();
    if (r > 0) rates.push((jobs * SAMPLES) / (Event.elapsedMs(t0, t1) / 1000) / 1e9);
  }
  return +median(rates).toFixed(3);
}

/**
 * The three-stream pipeline: every H2D on one copy-in stream, compute on `computeStreams`
 * streams, every D2H on one copy-out stream, joined by events; each job uses a buffer set of
 * `sets` in turn (reused once its previous job's D2H is done). Copies queue FIFO per direction.
 */
function pipelined(sets: Set[], computeStreams: number, jobs: number): number {
  const copyIn = new Stream({ label: 'copy in' });
  const copyOut = new Stream({ label: 'copy out' });
  const computes = Array.from({ length: computeStreams }, (_, i) => new Stream({ label: `compute ${i}` }));
  const loaded = sets.map(() => new Event({ label: 'loaded' }));
  const computed = sets.map(() => new Event({ label: 'computed' }));
  const drained = sets.map(() => new Event({ label: 'drained' }));
  const t0 = new Event({ timing: true, label: 't0' });
  const t1 = new Event({ timing: true, label: 't1' });
  const h2d = STEPS.filter(([n]) => n === 'h2d');
  const d2h = STEPS.filter(([n]) => n.startsWith('d2h'));
  const rates: number[] = [];
  for (let r = 0; r < 6; r++) {
    ctx.synchronize();
    t0.record(copyIn);
    for (const c of [copyOut, ...computes]) c.waitEvent(t0);
    for (let j = 0; j < jobs; j++) {
      const i = j % sets.length;
      const set = sets[i]!;
      const compute = computes[j % computes.length]!;
      if (j >= sets.length) copyIn.waitEvent(drained[i]!);
      for (const [, step] of h2d) step(set, copyIn);
      loaded[i]!.record(copyIn);
      compute.waitEvent(loaded[i]!);
      for (const [, step] of COMPUTE) step(set, compute);
      computed[i]!.record(compute);
      copyOut.waitEvent(computed[i]!);
      for (const [, step] of d2h) step(set, copyOut);
      drained[i]!.record(copyOut);
    }
    t1.record(copyOut);
    t1.synchronize();
    if (r > 0) rates.push((jobs * SAMPLES) / (Event.elapsedMs(t0, t1) / 1000) / 1e9);
  }
  return +median(rates).toFixed(3);
}

async function engineLoop(
  lanes: number,
  depth: number,
  ms: number,
  laneDepth?: number,
): Promise<{ gsamples: number; busy: string }> {
  const engine = new JobEngine({ lanes, laneDepth, precision: 'f32', maxQueued: 8 * lanes * depth, label: 'probe' });
  try {
    const base = jobData(B, N, 11);
    const specs = Array.from({ length: lanes * depth }, () => {
      const data = engine.hostBuffer('f32', SAMPLES);
      data.set(base);
      return {
        ...stftSpec(data),
        into: {
          filtered: engine.hostBuffer('f32', SAMPLES),
          spectrum: engine.hostBuffer('f32', B * PREVIEW_BINS),
          bandPowers: engine.hostBuffer('f64', B * BANDS.length),
        },
      };
    });
    const run = async (duration: number): Promise<number> => {
      const t0 = performance.now();
      let samples = 0;
      await Promise.all(
        specs.map(async (s) => {
          while (performance.now() < t0 + duration) {
            await engine.submit(s).result;
            samples += SAMPLES;
          }
        }),
      );
      return samples / ((performance.now() - t0) / 1000) / 1e9;
    };
    await run(300);
    const gsamples = await run(ms);
    const busy = engine
      .stats()
      .lanes.map((l) => (100 * l.gpuBusyFraction).toFixed(0))
      .join('/');
    return { gsamples: +gsamples.toFixed(3), busy };
  } finally {
    await engine.close();
  }
}

/** Engine closed loops: [lanes, jobs in flight per lane, laneDepth]. */
const ENGINE_LOOPS = [
  [4, 2, 2],
  [4, 3, 2],
  [4, 3, 3],
  [4, 4, 4],
  [6, 3, 2],
  [3, 4, 3],
] as const;
const report: Record<string, unknown> = { device: Device.get(0).name };
const engineOnly = process.argv.indexOf('--engine');
const skipKernels = process.argv.includes('--engine-loops');
if (engineOnly >= 0) {
  // --engine LANES DEPTH MS: only the engine's closed loop (for node --cpu-prof).
  const [lanes, depth, ms] = process.argv.slice(engineOnly + 1, engineOnly + 4).map(Number);
  console.log(JSON.stringify(await engineLoop(lanes ?? 8, depth ?? 2, ms ?? 2000)));
  process.exit(0);
}
if (skipKernels) {
  // --engine-loops: only the engine's closed loops below.
  for (const [lanes, inFlight, laneDepth] of ENGINE_LOOPS)
    report[`engine_${lanes}_lanes_${inFlight}_in_flight_depth_${laneDepth}`] = await engineLoop(
      lanes,
      inFlight,
      1500,
      laneDepth,
    );
  console.log(JSON.stringify(report, null, 1));
  process.exit(0);
}
const sets = Array.from({ length: 8 }, (_, i) => makeSet(i));
for (const s of sets) for (const [, step] of STEPS) step(s, s.stream); // warm plans, tables, kernels
ctx.synchronize();
report.stages = perStage(sets[0]!);
report.compute_only_1_stream = enqueued(sets.slice(0, 1), COMPUTE, 40);
report.compute_only_4_streams = enqueued(sets.slice(0, 4), COMPUTE, 40);
report.copies_only_2_streams = enqueued(sets.slice(0, 2), COPIES, 40);
report.copies_only_4_streams = enqueued(sets.slice(0, 4), COPIES, 40);
report.copies_only_8_streams = enqueued(sets, COPIES, 40);
report.whole_job_1_stream = enqueued(sets.slice(0, 1), STEPS, 40);
report.whole_job_4_streams = enqueued(sets.slice(0, 4), STEPS, 40);
report.whole_job_8_streams = enqueued(sets, STEPS, 40);
report.pipelined_4_sets_1_compute = pipelined(sets.slice(0, 4), 1, 40);
report.pipelined_4_sets_2_compute = pipelined(sets.slice(0, 4), 2, 40);
report.pipelined_8_sets_2_compute = pipelined(sets, 2, 40);
report.pipelined_3_sets_1_compute = pipelined(sets.slice(0, 3), 1, 40);
console.log(JSON.stringify(report));
for (const [lanes, inFlight, laneDepth] of ENGINE_LOOPS)
  report[`engine_${lanes}_lanes_${inFlight}_in_flight_depth_${laneDepth}`] = await engineLoop(
    lanes,
    inFlight,
    1500,
    laneDepth,
  );
console.log(JSON.stringify(report, null, 1));
if (process.argv[2] && !process.argv[2].startsWith('-'))
  writeFileSync(process.argv[2], JSON.stringify(report, null, 1));
process.exit(0);
