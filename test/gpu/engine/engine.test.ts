import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import type { DType } from '../../../src/runtime/memory/dtype.js';
import { Program } from '../../../src/runtime/program.js';
import { Stream } from '../../../src/runtime/stream.js';
import { cwt } from '../../../src/signal/cwt.js';
import { finishDominantCycles } from '../../../src/signal/cycles.js';
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
} from '../../../src/signal/primitives.js';
import { getWindow } from '../../../src/signal/window.js';
import {
  EngineClosedError,
  EngineFullError,
  JobCancelledError,
  JobEngine,
  JobError,
  JobValidationError,
  type JobResult,
  type JobSpec,
} from '../../../src/engine/index.js';
import { loadBasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { BANDS, engineFactory } from './engines.js';
import {
  framedReference,
  hannPeriodic,
  referenceRow,
  relL2,
  rows,
  testSeries,
  type ReferenceRow,
} from './reference.js';

const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;
const engine = engineFactory('test');

function referenceOf(spec: JobSpec & { data: Float32Array | Float64Array }, window?: Float64Array): ReferenceRow[] {
  const batch = spec.batch ?? 1;
  const n = spec.data.length / batch;
  const fs = spec.fs ?? 1;
  const w = window ?? hannPeriodic(n);
  const out: ReferenceRow[] = [];
  for (let b = 0; b < batch; b++) {
    out.push(
      referenceRow(spec.data.subarray(b * n, (b + 1) * n), {
        fs,
        detrend: spec.detrend ?? 'linear',
        window: w,
        passBand: spec.passBand ?? [0, fs / 2],
        previewBins: spec.previewBins ?? Math.min(256, Math.floor(n / 2) + 1),
        bands: spec.bands ?? [],
      }),
    );
  }
  return out;
}

/** Checks every stft/cycles field of `r` against the float64 reference, row by row. */
function expectMatches(r: JobResult, ref: ReferenceRow[], tol: number, what: string): void {
  const n = r.length;
  const nb = ref[0]!.bandPowers.length;
  const p = ref[0]!.spectrum.length;
  for (let b = 0; b < ref.length; b++) {
    const e = ref[b]!;
    if (r.filtered) expect(relL2(rows(r.filtered, n, b, 1), e.filtered), `${what} filtered row ${b}`).toBeLessThan(tol);
    if (r.spectrum) expect(relL2(rows(r.spectrum, p, b, 1), e.spectrum), `${what} spectrum row ${b}`).toBeLessThan(tol);
    if (r.bandPowers)
      expect(relL2(rows(r.bandPowers, nb, b, 1), e.bandPowers), `${what} band powers row ${b}`).toBeLessThan(tol);
    if (r.bandWaves)
      expect(relL2(rows(r.bandWaves, nb * n, b, 1), e.bandWaves), `${what} band waves row ${b}`).toBeLessThan(tol);
    if (r.dominant) {
      const d = r.dominant[b]!;
      expect(d.bin, `${what} dominant bin row ${b}`).toBe(e.dominant.bin);
      expect(d.frequency).toBeCloseTo(e.dominant.frequency, 9);
      expect(
        Math.abs(d.amplitude - e.dominant.amplitude) / e.dominant.amplitude,
        `${what} dominant amplitude row ${b}`,
      ).toBeLessThan(tol * 10);
      expect(
        Math.abs(Math.atan2(Math.sin(d.phase - e.dominant.phase), Math.cos(d.phase - e.dominant.phase))),
        `${what} dominant phase row ${b}`,
      ).toBeLessThan(tol * 100);
    }
  }
}

describe.skipIf(!gpu.available)(`JobEngine on the GPU${skip}`, () => {
  it('stft + cycles equal an independent float64 DFT reference (f32 and f64, even and odd N)', async () => {
    for (const precision of ['f32', 'f64'] as const) {
      const e = engine({ precision, lanes: 2 });
      for (const n of [1000, 777]) {
        const spec = {
          data: testSeries(3, n, 37, precision === 'f32' ? Float32Array : Float64Array),
          batch: 3,
          fs: 500,
          flags: ['stft', 'cycles'],
          passBand: [20, 120] as const,
          bands: BANDS,
          previewBins: 64,
        };
        const r = await e.submit(spec).result;
        expect(r).toMatchObject({ batch: 3, length: n, fs: 500 });
        expect(r.filtered).toBeInstanceOf(precision === 'f32' ? Float32Array : Float64Array);
        expect(r.dominant!.map((d) => d.bin)).toEqual([37, 38, 39]);
        expectMatches(r, referenceOf(spec), precision === 'f32' ? 5e-5 : 1e-10, `${precision} N=${n}`);
        expect(r.timings.gpuMs).toBeGreaterThan(0);
      }
    }
  });

  it('other windows and detrend modes match the reference too', async () => {
    const e = engine({ lanes: 1, precision: 'f64' });
    const n = 640;
    for (const [window, detrend] of [
      [['kaiser', 8], 'constant'],
      ['blackmanharris', false],
      [['tukey', 0.3], 'linear'],
    ] as const) {
      const spec = {
        data: testSeries(2, n, 50, Float64Array),
        batch: 2,
        fs: 640,
        flags: ['stft', 'cycles'],
        window,
        detrend,
        bands: [[10, 100]] as const,
        passBand: [5, 200] as const,
      };
      const r = await e.submit(spec).result;
      expectMatches(r, referenceOf(spec, getWindow(window, n)), 1e-10, `${JSON.stringify(window)} ${String(detrend)}`);
    }
  });

  it('engine results equal the signal operations run one by one on a stream', async () => {
    const n = 2048;
    const batch = 4;
    const fs = 1000;
    const spec = {
      data: testSeries(batch, n, 100) as Float32Array,
      batch,
      fs,
      flags: ['stft', 'cycles'],
      passBand: [50, 300] as const,
      bands: BANDS,
      previewBins: 100,
    };
    const r = await engine({ lanes: 2 }).submit(spec).result;
    using s = new Stream({ label: 'one by one' });
    const k = halfBins(n);
    const series = { batch, length: n, stream: s };
    const alloc = <T extends DType>(dtype: T, len: number): DeviceBuffer<T> =>
      DeviceBuffer.alloc(dtype, len, { stream: s });
    using x = alloc('f32', batch * n).write(spec.data, { stream: s });
    using xw = alloc('f32', batch * n);
    using X = alloc('c64', batch * k);
    using masked = alloc('c64', batch * k);
    using y = alloc('f32', batch * n);
    using preview = alloc('f32', batch * 100);
    using powers = alloc('f64', batch * BANDS.length);
    using dom = alloc('f64', batch * 4);
    detrendWindow(x, xw, { ...series, detrend: 'linear', window: 'hann' });
    rfft(xw, X, series);
    bandMask(X, { ...series, fs, band: [50, 300], output: masked, scale: 1 / n });
    irfft(masked, y, { ...series, normalize: false });
    spectrumMagnitude(X, preview, { ...series, bins: 100, scale: 1 / n });
    bandPowers(X, powers, { ...series, fs, bands: BANDS });
    dominantCycleDevice(X, dom, series);
    const waves: Float32Array[] = [];
    for (const band of BANDS) {
      using m = alloc('c64', batch * k);
      using wv = alloc('f32', batch * n);
      bandMask(X, { ...series, fs, band, output: m, scale: 1 / n });
      irfft(m, wv, { ...series, normalize: false });
      await s.done();
      waves.push(wv.read());
    }
    await s.done();
    expect(relL2(r.filtered!, y.read())).toBeLessThan(1e-6);
    expect(relL2(r.spectrum!, preview.read())).toBeLessThan(1e-6);
    expect(relL2(r.bandPowers!, powers.read())).toBeLessThan(1e-6);
    const cycles = finishDominantCycles(dom.read(), {
      batch,
      length: n,
      fs,
      windowSum: getWindow('hann', n).reduce((a, b) => a + b, 0),
    });
    expect(r.dominant!.map((d) => d.bin)).toEqual(cycles.map((c) => c.bin));
    for (let b = 0; b < batch; b++) {
      expect(r.dominant![b]!.amplitude).toBeCloseTo(cycles[b]!.amplitude, 4);
      for (let q = 0; q < BANDS.length; q++)
        expect(
          relL2(rows(r.bandWaves!, n, b * BANDS.length + q, 1), rows(waves[q]!, n, b, 1)),
          `band ${q} row ${b}`,
        ).toBeLessThan(1e-6);
    }
  });

  it('wavelet power equals the signal cwt, per frequency and reduced to bands on the GPU', async () => {
    const n = 3000;
    const batch = 2;
    const fs = 1000;
    const freqs = [5, 12, 30, 45, 80, 120, 200, 333, 450];
    const data = testSeries(batch, n, 90) as Float32Array;
    const e = engine({ lanes: 2 });
    const [perFreq, banded] = await Promise.all([
      e.submit({ data, batch, fs, flags: ['wavelet'], freqs, nCycles: 5 }).result,
      e.submit({ data, batch, fs, flags: ['wavelet'], freqs, nCycles: 5, bands: BANDS, waveletBands: true }).result,
    ]);
    expect(perFreq.waveletPower).toHaveLength(batch * freqs.length * n);
    expect(banded.waveletPower).toHaveLength(batch * BANDS.length * n);
    using s = new Stream();
    using x = DeviceBuffer.alloc('f32', batch * n).write(data, { stream: s });
    using a = cwt(x, { fs, freqs, nCycles: 5, output: 'power', batch, stream: s }) as DeviceBuffer<'f32'>;
    using c = cwt(x, { fs, freqs, nCycles: 5, output: 'power', batch, bands: BANDS, stream: s }) as DeviceBuffer<'f32'>;
    await s.done();
    const refA = a.read();
    const refC = c.read();
    expect(relL2(perFreq.waveletPower!, refA)).toBeLessThan(1e-6);
    expect(relL2(banded.waveletPower!, refC)).toBeLessThan(1e-6);
    // The band reduction is the sum of the per-frequency powers in each band.
    const summed = new Float64Array(batch * BANDS.length * n);
    for (let b = 0; b < batch; b++)
      BANDS.forEach(([lo, hi], q) =>
        freqs.forEach((f, j) => {
          if (f < lo || f > hi) return;
          for (let t = 0; t < n; t++) {
            const i = (b * BANDS.length + q) * n + t;
            summed[i] = summed[i]! + perFreq.waveletPower![(b * freqs.length + j) * n + t]!;
          }
        }),
      );
    expect(relL2(banded.waveletPower!, summed)).toBeLessThan(1e-5);
  });

  it('laneDepth 3 on one lane: jobs in flight together (lent and plain arrays, growing sizes) each get their own results; a bad laneDepth is refused', async () => {
    expect(() => new JobEngine({ laneDepth: 0 })).toThrow(/laneDepth must be an integer in 1\.\.8, got 0/);
    expect(() => new JobEngine({ laneDepth: 2.5 })).toThrow(/laneDepth/);
    const e = engine({ lanes: 1, laneDepth: 3 });
    const specs: (JobSpec & { data: Float32Array })[] = [];
    for (let i = 0; i < 12; i++) {
      const batch = 2 + (i % 3);
      const n = 2048 * (1 + Math.floor(i / 4)); // buffers grow while earlier jobs are in flight
      const plain = testSeries(batch, n, 20 + i) as Float32Array;
      let data = plain;
      if (i % 2 === 0) {
        data = e.hostBuffer('f32', plain.length);
        data.set(plain);
      }
      specs.push({ data, batch, fs: 1000, flags: ['stft', 'cycles'], passBand: [10 + i, 300], bands: BANDS });
    }
    const results = await Promise.all(specs.map((spec) => e.submit(spec).result));
    results.forEach((r, i) => expectMatches(r, referenceOf(specs[i]!), 5e-5, `depth-3 job ${i}`));
  });

  it('64 jobs over 4 lanes: fresh random data per job, every result correct, all lanes used', async () => {
    const e = engine({ lanes: 4 });
    const specs: (JobSpec & { data: Float32Array })[] = [];
    for (let i = 0; i < 64; i++) {
      const batch = 1 + (i % 4);
      const n = [256, 384, 500, 1024][(i * 7) % 4]!;
      const lo = Math.floor(Math.random() * 100);
      specs.push({
        data: testSeries(batch, n, 10 + (i % 20)) as Float32Array,
        batch,
        fs: 1000,
        flags: ['stft', 'cycles'],
        passBand: [lo, lo + 150 + Math.floor(Math.random() * 200)],
        bands: BANDS,
      });
    }
    const jobs = specs.map((spec) => e.submit(spec));
    const results = await Promise.all(jobs.map((j) => j.result));
    results.forEach((r, i) => {
      expect(r.id).toBe(jobs[i]!.id);
      expect(jobs[i]!.status).toBe('ready');
      expectMatches(r, referenceOf(specs[i]!), 5e-5, `job ${i}`);
    });
    expect(new Set(results.map((r) => r.lane))).toEqual(new Set([0, 1, 2, 3]));
    const stats = e.stats();
    expect(stats.jobs).toBe(64);
    expect(stats.errors).toBe(0);
    expect(stats.lanes).toHaveLength(4);
    expect(stats.samplesPerSecond).toBeGreaterThan(0);
    expect(stats.gpuBusyFraction).toBeGreaterThan(0);
    expect(stats.gpuBusyFraction).toBeLessThanOrEqual(1);
    expect(stats.p99JobMs).toBeGreaterThanOrEqual(stats.avgJobMs * 0.5);
    const samples = specs.reduce((a, s) => a + s.data.length, 0);
    // Each job moves its input in and filtered + preview + powers + dominant + band waves out.
    expect(stats.bytesMoved).toBeGreaterThan(samples * 4 * (2 + BANDS.length));
  });

  it('jobs on different lanes overlap: four 200 ms GPU stages on four lanes take about 200 ms', async () => {
    const kernels = loadBasicKernels();
    const e = engine({ lanes: 4 });
    try {
      e.registerStage('spin', {
        after: 'fft',
        run: (ctx) => kernels.spin_ns({ grid: 1, block: 1, stream: ctx.stream }, 200_000_000n),
      });
      const data = testSeries(1, 1024, 20) as Float32Array;
      await e.submit({ data, flags: ['stft'] }).result; // warm plans and tables
      const t0 = performance.now();
      const results = await Promise.all(
        Array.from({ length: 4 }, () => e.submit({ data, flags: ['stft', 'spin'] }).result),
      );
      const wall = performance.now() - t0;
      for (const r of results) expect(r.timings.gpuMs).toBeGreaterThan(190);
      expect(new Set(results.map((r) => r.lane)).size).toBe(4);
      expect(wall).toBeLessThan(600);
      console.log(`4 jobs with a 200 ms GPU stage on 4 lanes: ${wall.toFixed(0)} ms wall`);
    } finally {
      await e.idle();
      kernels.module.dispose();
    }
  });

  it('zero-copy: arrays lent by hostBuffer() and subarrays of them give the reference results; f64 data in an f32 engine is copied', async () => {
    const e = engine({ lanes: 2 });
    const n = 1500;
    const batch = 5;
    const lent = e.hostBuffer('f32', batch * n);
    lent.set(testSeries(batch, n, 33));
    const spec = {
      data: lent,
      batch,
      fs: 300,
      flags: ['stft', 'cycles'],
      bands: [
        [0, 30],
        [30, 150],
      ] as const,
      passBand: [1, 40] as const,
    };
    const ref = referenceOf(spec);
    expectMatches(await e.submit(spec).result, ref, 5e-5, 'lent');
    const part = { ...spec, data: lent.subarray(2 * n, 4 * n), batch: 2 };
    expectMatches(await e.submit(part).result, ref.slice(2, 4), 5e-5, 'lent rows 2..3');
    const f64 = Float64Array.from(lent);
    expectMatches(await e.submit({ ...spec, data: f64 }).result, ref, 5e-5, 'f64 copied');
    expect(e.releaseHostBuffer(lent)).toBe(true);
    expect(e.releaseHostBuffer(new Float32Array(4))).toBe(false);
  });

  it('zero-copy outputs: results land in lent arrays (into), also chunked, and equal the reference', async () => {
    const n = 2000;
    const batch = 7;
    const bands = [
      [0, 100],
      [100, 300],
      [300, 500],
    ] as const;
    const freqs = [20, 60, 200];
    const spec = {
      data: testSeries(batch, n, 120) as Float32Array,
      batch,
      fs: 1000,
      flags: ['stft', 'cycles', 'wavelet'],
      bands,
      freqs,
      previewBins: 40,
      passBand: [50, 250] as const,
    };
    const big = engine({ lanes: 2 });
    const perRow = Math.ceil((1 << 30) / big.chunkRows(spec));
    for (const e of [big, engine({ lanes: 2, laneMemoryBytes: Math.floor(2.5 * perRow) })]) {
      const into = {
        filtered: e.hostBuffer('f32', batch * n),
        spectrum: e.hostBuffer('f32', batch * 40),
        bandPowers: e.hostBuffer('f64', batch * bands.length),
        bandWaves: e.hostBuffer('f32', batch * bands.length * n),
        waveletPower: e.hostBuffer('f32', batch * freqs.length * n),
      };
      for (const a of Object.values(into)) a.fill(Number.NaN);
      const r = await e.submit({ ...spec, into }).result;
      for (const [key, a] of Object.entries(into)) expect(r[key as keyof typeof into], key).toBe(a);
      expectMatches(r, referenceOf(spec), 5e-5, `into, ${e.chunkRows(spec)} rows per chunk`);
      const plain = await e.submit(spec).result;
      expect(relL2(r.waveletPower!, plain.waveletPower!)).toBeLessThan(1e-6);
      for (const a of Object.values(into)) e.releaseHostBuffer(a);
    }
  });

  it('a job bigger than a lane can hold runs in chunks of whole series and equals the one-shot result', async () => {
    const n = 4096;
    const batch = 11;
    const spec = {
      data: testSeries(batch, n, 200) as Float32Array,
      batch,
      fs: 4096,
      flags: ['stft', 'cycles', 'wavelet'],
      bands: [
        [0, 500],
        [500, 2048],
      ] as const,
      freqs: [100, 300, 900],
      passBand: [150, 400] as const,
    };
    const big = engine({ lanes: 1 });
    expect(big.chunkRows(spec)).toBeGreaterThanOrEqual(batch);
    const perRow = Math.ceil((1 << 30) / big.chunkRows(spec));
    const small = engine({ lanes: 1, laneMemoryBytes: Math.floor(3.5 * perRow) });
    const chunkRows = small.chunkRows(spec);
    expect(chunkRows).toBeGreaterThanOrEqual(2);
    expect(chunkRows).toBeLessThan(batch);
    const [one, chunked] = await Promise.all([big.submit(spec).result, small.submit(spec).result]);
    for (const field of ['filtered', 'spectrum', 'bandPowers', 'bandWaves', 'waveletPower'] as const)
      expect(relL2(chunked[field]!, one[field]!), field).toBeLessThan(1e-6);
    expect(chunked.dominant!.map((d) => d.bin)).toEqual(one.dominant!.map((d) => d.bin));
    expectMatches(chunked, referenceOf(spec), 5e-5, 'chunked');
  });

  it('framed stft (nperseg): equals scipy stft -> mask -> istft computed in float64, and all-pass gives the input back', async () => {
    const e = engine({ lanes: 2, precision: 'f64' });
    const n = 3001;
    const batch = 2;
    const data = testSeries(batch, n, 300, Float64Array) as Float64Array;
    const allPass = await e.submit({ data, batch, fs: 1000, flags: ['stft'], nperseg: 256, detrend: false }).result;
    expect(relL2(allPass.filtered!, data)).toBeLessThan(1e-12);
    for (const [nperseg, noverlap, window, detrend] of [
      [256, 128, 'hann', 'linear'],
      [201, 150, ['kaiser', 6], 'constant'],
      [64, 0, 'boxcar', false],
    ] as const) {
      const spec = {
        data,
        batch,
        fs: 1000,
        flags: ['stft'],
        nperseg,
        noverlap,
        window,
        detrend,
        passBand: [40, 160] as const,
        previewBins: 20,
      };
      const r = await e.submit(spec).result;
      for (let b = 0; b < batch; b++) {
        const ref = framedReference(data.subarray(b * n, (b + 1) * n), {
          fs: 1000,
          nperseg,
          noverlap,
          window: getWindow(window, nperseg),
          detrend,
          passBand: [40, 160],
          previewBins: 20,
        });
        expect(r.frames).toBe(ref.frames);
        expect(
          relL2(rows(r.filtered!, n, b, 1), ref.filtered),
          `filtered ${nperseg}/${noverlap} row ${b}`,
        ).toBeLessThan(1e-10);
        expect(
          relL2(rows(r.spectrum!, 20 * ref.frames, b, 1), ref.spectrum),
          `spectrum ${nperseg}/${noverlap} row ${b}`,
        ).toBeLessThan(1e-10);
      }
    }
  });

  it('framed stft streams a long series through a small lane in chunks of whole frames: equal to one pass and to the reference', async () => {
    const n = 200_000;
    const batch = 2;
    const data = testSeries(batch, n, 5000) as Float32Array;
    const spec = {
      data,
      batch,
      fs: 48_000,
      flags: ['stft'],
      nperseg: 256,
      noverlap: 192,
      passBand: [500, 3000] as const,
      previewBins: 32,
    };
    const big = engine({ lanes: 1 });
    const small = engine({ lanes: 2, laneMemoryBytes: 1 << 19 });
    const frames = big.chunkFrames(spec);
    const perChunk = small.chunkFrames(spec);
    expect(perChunk).toBeGreaterThanOrEqual(4);
    expect(perChunk * 10).toBeLessThan(frames);
    const [one, chunked] = await Promise.all([big.submit(spec).result, small.submit(spec).result]);
    expect(relL2(chunked.filtered!, one.filtered!)).toBeLessThan(1e-6);
    expect(relL2(chunked.spectrum!, one.spectrum!)).toBeLessThan(1e-6);
    const ref = framedReference(data.subarray(0, n), {
      fs: 48_000,
      nperseg: 256,
      noverlap: 192,
      window: hannPeriodic(256),
      detrend: 'linear',
      passBand: [500, 3000],
      previewBins: 32,
    });
    expect(relL2(rows(chunked.filtered!, n, 0, 1), ref.filtered)).toBeLessThan(5e-5);
    expect(relL2(rows(chunked.spectrum!, 32 * ref.frames, 0, 1), ref.spectrum)).toBeLessThan(5e-5);
    console.log(`framed stft: ${frames} frames per series in chunks of ${perChunk}`);
  });

  it('registered stages: an NVRTC kernel after the FFT reads the spectrum; one after the inverse changes the filtered wave', async () => {
    const program = new Program({
      name: 'engine-stages.cu',
      source: `
        extern "C" __global__ void energy(const float2* X, double* out, int batch, int bins) {
          int b = blockIdx.x;
          if (b >= batch) return;
          __shared__ double part[256];
          double acc = 0.0;
          for (int k = threadIdx.x; k < bins; k += blockDim.x) { float2 v = X[(long long)b * bins + k]; acc += (double)v.x * v.x + (double)v.y * v.y; }
          part[threadIdx.x] = acc;
          __syncthreads();
          for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s]; __syncthreads(); }
          if (threadIdx.x == 0) out[b] = part[0];
        }
        extern "C" __global__ void gain(float* y, float k, int n) {
          for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] *= k;
        }`,
    });
    const module = program.compile().load();
    const energy = module.kernel('energy', ['ptr', 'ptr', 'i32', 'i32']);
    const gain = module.kernel('gain', ['ptr', 'f32', 'i32']);
    const e = engine({ lanes: 2 });
    e.registerStage('energy', {
      after: 'fft',
      run(ctx) {
        const out = DeviceBuffer.alloc('f64', ctx.batch, { stream: ctx.stream });
        energy.launch({ grid: ctx.batch, block: 256, stream: ctx.stream }, ctx.spectrum, out, ctx.batch, ctx.bins);
        const host = HostBuffer.alloc('f64', ctx.batch);
        out.read(host, { stream: ctx.stream });
        return ctx.stream.done().then(() => {
          const values = Float64Array.from(host.array);
          host.dispose();
          out.dispose();
          return values;
        });
      },
    });
    e.registerStage('gain', {
      after: 'inverse',
      run(ctx) {
        const k = (ctx.params as { k: number }).k;
        gain.launch({ grid: 64, block: 256, stream: ctx.stream }, ctx.output!, k, ctx.batch * ctx.length);
        return { scaled: k, lane: ctx.lane };
      },
    });
    expect(() => e.registerStage('gain', { after: 'fft', run: () => 0 })).toThrow(/already registered/);
    expect(() => e.registerStage('stft', { after: 'fft', run: () => 0 })).toThrow(/built-in/);
    const spec = {
      data: testSeries(3, 900, 44) as Float32Array,
      batch: 3,
      fs: 900,
      flags: ['stft', 'energy', 'gain'],
      stageParams: { gain: { k: -2.5 } },
      passBand: [10, 200] as const,
    };
    const r = await e.submit(spec).result;
    const ref = referenceOf(spec);
    const energies = r.stages!.energy as Float64Array;
    ref.forEach((row, b) => {
      expect(Math.abs(energies[b]! - row.energy) / row.energy).toBeLessThan(1e-5);
      expect(
        relL2(
          rows(r.filtered!, 900, b, 1),
          row.filtered.map((v) => -2.5 * v),
        ),
      ).toBeLessThan(5e-5);
    });
    expect(r.stages!.gain).toEqual({ scaled: -2.5, lane: r.lane });
    module.dispose();
  });

  it('a bad job is refused at submit; a stage that throws fails only its own job', async () => {
    const e = engine({ lanes: 2 });
    e.registerStage('broken', {
      after: 'fft',
      run() {
        throw new Error('stage bug');
      },
    });
    const data = testSeries(2, 512, 10) as Float32Array;
    expect(() => e.submit({ data, batch: 3, flags: ['stft'] })).toThrow(JobValidationError);
    expect(() => e.submit({ data, batch: 2, flags: ['stft'], bands: [[0, 0.7]] })).toThrow(/bands\[0\]\[1\]/);
    expect(e.stats()).toMatchObject({ queued: 0, running: 0 });
    const bad = e.submit({ data, batch: 2, flags: ['stft', 'broken'] });
    const good = e.submit({ data, batch: 2, flags: ['stft'] });
    const error = await bad.result.catch((x: unknown) => x);
    expect(error).toBeInstanceOf(JobError);
    expect(error).toMatchObject({ jobId: bad.id, stage: 'broken', sticky: false });
    expect((error as JobError).message).toMatch(/stage bug/);
    expect((await good.result).filtered).toHaveLength(1024);
    // The lane that failed is healthy: later jobs on every lane run.
    const after = await Promise.all(
      [0, 1, 2, 3].map(() => e.submit({ data, batch: 2, flags: ['cycles'], bands: [[0, 0.2]] }).result),
    );
    expect(new Set(after.map((r) => r.lane)).size).toBe(2);
  });

  it('timeoutMs, cancel() and AbortSignal with real jobs: a running job times out, queued ones cancel, the lane goes on', async () => {
    const kernels = loadBasicKernels();
    const e = engine({ lanes: 1 });
    try {
      e.registerStage('slow', {
        after: 'fft',
        run: (ctx) => kernels.spin_ns({ grid: 1, block: 1, stream: ctx.stream }, 300_000_000n),
      });
      const data = testSeries(2, 2048, 40) as Float32Array;
      const slow = e.submit({ data, batch: 2, flags: ['stft', 'slow'], timeoutMs: 50 });
      const cancelled = e.submit({ data, batch: 2, flags: ['stft'] });
      const ac = new AbortController();
      const aborted = e.submit({ data, batch: 2, flags: ['stft'], signal: ac.signal });
      const later = e.submit({ data, batch: 2, flags: ['stft'] });
      expect(slow.status).toBe('running');
      expect(cancelled.cancel()).toBe(true);
      ac.abort();
      await expect(slow.result).rejects.toThrow(/did not finish within 50 ms \(it was running\)/);
      await expect(cancelled.result).rejects.toBeInstanceOf(JobCancelledError);
      await expect(aborted.result).rejects.toBeInstanceOf(JobCancelledError);
      expect(aborted.status).toBe('cancelled');
      const r = await later.result;
      expect(r.timings.queuedMs).toBeGreaterThan(250); // it waited for the slow job's GPU work
      expectMatches(r, referenceOf({ data, batch: 2, flags: ['stft'] }), 5e-5, 'after a timeout');
      expect(e.stats()).toMatchObject({ jobs: 1, errors: 1 });
    } finally {
      await e.idle();
      kernels.module.dispose();
    }
  });

  it('backpressure and close() draining with real jobs', async () => {
    const e = new JobEngine({ lanes: 2, maxQueued: 3, label: 'drain' });
    const data = testSeries(8, 1 << 16, 1000) as Float32Array;
    const accepted = [];
    let full: unknown;
    for (let i = 0; i < 20 && !full; i++) {
      try {
        accepted.push(e.submit({ data, batch: 8, fs: 65536, flags: ['stft', 'cycles'], bands: [[0, 1000]] }));
      } catch (x) {
        full = x;
      }
    }
    expect(full).toBeInstanceOf(EngineFullError);
    expect(accepted.length).toBeGreaterThanOrEqual(5); // 2 running + 3 queued
    const waited = await e.submit({ data, batch: 8, fs: 65536, flags: ['stft'] }, { wait: true });
    accepted.push(waited);
    const closing = e.close();
    expect(() => e.submit({ data, batch: 8, flags: ['stft'] })).toThrow(EngineClosedError);
    await closing;
    for (const j of accepted) expect(j.status).toBe('ready');
    const results = await Promise.all(accepted.map((j) => j.result));
    expect(results.every((r) => r.filtered!.length === data.length)).toBe(true);
  });

  it.skipIf(!gpu.available || Device.count() < 2)('spreads lanes over every device', async () => {
    const e = engine({ devices: 'all', lanes: 2 });
    expect(e.devices.length).toBe(Device.count());
    const specs = Array.from({ length: 4 * e.laneCount }, () => ({
      data: testSeries(2, 1024, 30) as Float32Array,
      batch: 2,
      fs: 1024,
      flags: ['stft', 'cycles'],
      bands: BANDS.map(([a, b]) => [a, Math.min(b, 512)] as const),
    }));
    const results = await Promise.all(specs.map((s) => e.submit(s).result));
    expect(new Set(results.map((r) => r.device)).size).toBe(Device.count());
    results.forEach((r, i) => expectMatches(r, referenceOf(specs[i]!), 5e-5, `job ${i} on device ${r.device}`));
  });
});
