/**
 * Which block length the FFT convolution should use on this GPU (src/signal/convolve-blocks.ts:
 * SINGLE_PASS_POINTS, the longest transform cuFFT runs from shared memory). For each candidate
 * length, a batched R2C then C2R over about 90 MB of rows (the bench row's blocks), in float32 and
 * float64, as GB/s counting each transform's input and output once: a length that runs in one
 * kernel stays near the copy rate, one past it drops by its extra passes. Beside them, the
 * whole-length transform of the bench row (16 × 1,053,696 points), and fftconvolve on the bench
 * row's shape (16 × 1M float32, 4,097 taps) with the plan it took. Medians of 20 after 3 warm-ups.
 *   tsx bench/probe/fft-blocks.ts
 */
import { DeviceBuffer, Event, Stream, type Context } from '../../src/runtime/index.js';
import {
  convolutionWindow,
  fastLength,
  fftConvolutionPlan,
  fftconvolve,
  firwin,
  signalWorkspace,
} from '../../src/signal/index.js';

const BYTES = 90e6;
const REPS = 20;

/** Median milliseconds of `run` on `stream` (events around each call). */
function time(stream: Stream, run: () => void): number {
  for (let i = 0; i < 3; i++) run();
  const ms: number[] = [];
  const start = new Event({ context: stream.context, timing: true });
  const end = new Event({ context: stream.context, timing: true });
  for (let i = 0; i < REPS; i++) {
    start.record(stream);
    run();
    end.record(stream);
    end.synchronize();
    ms.push(Event.elapsedMs(start, end));
  }
  start.dispose();
  end.dispose();
  return ms.sort((a, b) => a - b)[REPS >> 1]!;
}

/** R2C and C2R of `rows` rows of n points each, timed apart; GB/s counts input and output once per transform. */
function transforms(ctx: Context, stream: Stream, p: 'f32' | 'f64', n: number, rows: number): string {
  const bins = Math.floor(n / 2) + 1;
  const real = DeviceBuffer.alloc(p, rows * n, { context: ctx, label: 'probe rows' });
  const spectra = DeviceBuffer.alloc(p === 'f32' ? 'c64' : 'c128', rows * bins, { context: ctx, label: 'probe bins' });
  real.memset(0);
  const bytes = (p === 'f32' ? 4 : 8) * rows * (n + 2 * bins);
  const fwd = time(stream, () => signalWorkspace.realForward(ctx, p, n, rows, real, spectra, stream));
  const inv = time(stream, () => signalWorkspace.realInverse(ctx, p, n, rows, spectra, real, stream));
  real.dispose();
  spectra.dispose();
  signalWorkspace.plans.clear();
  const rate = (ms: number): string => `${(bytes / ms / 1e6).toFixed(0)} GB/s`;
  return `${p} ${String(n).padStart(7)} × ${String(rows).padStart(5)}: R2C ${fwd.toFixed(4)} ms (${rate(fwd)}), C2R ${inv.toFixed(4)} ms (${rate(inv)})`;
}

const stream = new Stream({ label: 'fft-blocks probe' });
const ctx = stream.context;
for (const p of ['f32', 'f64'] as const)
  for (const n of [2048, 4096, 8192, 12288, 16384, 24576, 32768, 65536]) {
    const rows = Math.max(1, Math.round(BYTES / ((p === 'f32' ? 4 : 8) * n)));
    console.log(transforms(ctx, stream, p, n, rows));
  }
console.log(transforms(ctx, stream, 'f32', 1_053_696, 16));

const batch = 16;
const length = 2 ** 20;
const taps = firwin(4097, 0.1);
const w = convolutionWindow(length, taps.length, 'full');
const x = DeviceBuffer.alloc('f32', batch * length, { context: ctx, label: 'probe x' });
x.memset(0);
const output = DeviceBuffer.alloc('f32', batch * w.outLength, { context: ctx, label: 'probe y' });
const plan = fftConvolutionPlan(length, taps.length, w, 'f32', batch, fastLength(w.fullLength));
const ms = time(stream, () => void fftconvolve(x, taps, { batch, stream, output }));
console.log(`fftconvolve 16 × 1M f32, 4097 taps: ${ms.toFixed(4)} ms, plan ${JSON.stringify(plan)}`);
x.dispose();
output.dispose();
signalWorkspace.clear();
stream.dispose();
