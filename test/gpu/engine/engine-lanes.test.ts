import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { JobEngine, type JobSpec } from '../../../src/engine/index.js';
import { loadBasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { BANDS, engineFactory } from './engines.js';
import { testSeries } from './reference.js';
import { skip, referenceOf, expectMatches } from './engine-fixture.js';

const engine = engineFactory('test');

describe.skipIf(!gpu.available)(`JobEngine on the GPU: lanes${skip}`, () => {
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
