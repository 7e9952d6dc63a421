/**
 * JobEngine across GPUs (`devices: 'all'`): every single-GPU guarantee checked on two GPUs.
 * Results are compared with a one-GPU engine run on the same inputs (the same cuFFT plans on the
 * same GPU model: they agree to rounding), under load; the sticky-error case runs in a child
 * process (test/gpu/engine/fixtures/engine-sticky-two-devices.ts). Skipped by name with fewer
 * than two GPUs.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobEngine, type JobResult, type JobSpec } from '../../../src/engine/index.js';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { loadBasicKernels } from '../../kernels/launchers.generated.js';
import { within } from '../exact.js';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';
import { testSeries } from './reference.js';

const count = gpu.available ? Device.count() : 0;
const two = { ok: count >= 2, reason: gpu.available ? `needs 2 GPUs, this machine has ${count}` : gpu.reason };
const title = (name: string): string => (two.ok ? name : `${name} (skipped: ${two.reason})`);

const engines: JobEngine[] = [];
function engine(options: ConstructorParameters<typeof JobEngine>[0]): JobEngine {
  const e = new JobEngine(options);
  engines.push(e);
  return e;
}
afterAll(async () => {
  for (const e of engines) await within(e.close(), 30_000, `close() of engine "${e.label}"`);
});

/** The largest |a - b| over the largest |b| of every output array two results share (0 when identical). */
function relativeDifference(a: JobResult, b: JobResult): number {
  let worst = 0;
  for (const key of ['filtered', 'spectrum', 'bandPowers', 'bandWaves'] as const) {
    const x = a[key];
    const y = b[key];
    expect(x === undefined, `${key} present in one result only`).toBe(y === undefined);
    if (!x || !y) continue;
    expect(x.length, key).toBe(y.length);
    let scale = 0;
    let diff = 0;
    for (let i = 0; i < y.length; i++) {
      scale = Math.max(scale, Math.abs(y[i]!));
      const d = Math.abs(x[i]! - y[i]!);
      if (!(d <= diff)) diff = Number.isNaN(d) ? Infinity : d;
    }
    worst = Math.max(worst, scale > 0 ? diff / scale : diff);
  }
  expect(a.dominant?.map((d) => d.bin)).toEqual(b.dominant?.map((d) => d.bin));
  return worst;
}

/** 64 jobs of mixed sizes and flags: 1..8 series of 1 Ki..32 Ki samples, stft and cycles. */
function mixedJobs(n = 64): JobSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const length = 1024 << (i % 6);
    const batch = 1 + (i % 8);
    const cycles = i % 3 !== 0;
    return {
      data: testSeries(batch, length, 20 + (i % 7)) as Float32Array,
      batch,
      fs: length,
      flags: cycles ? ['stft', 'cycles'] : ['stft'],
      passBand: [5, length / 4] as const,
      ...(cycles ? { bands: [[1, 30] as const, [30, length / 8] as const] } : {}),
      label: `job ${i}`,
    };
  });
}

describe.skipIf(!two.ok)(title('JobEngine across two GPUs'), () => {
  it("64 concurrent jobs of mixed sizes: results equal the one-GPU engine's, both devices work, stats() per device and lane add up", async () => {
    const specs = mixedJobs();
    const single = engine({ device: 0, lanes: 2, label: 'one GPU' });
    const reference = await within(
      Promise.all(specs.map((s) => single.submit(s).result)),
      60_000,
      '64 jobs on one GPU',
    );
    const multi = engine({ devices: 'all', lanes: 2, label: 'all GPUs' });
    expect(multi.devices).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(multi.laneCount).toBe(2 * count);
    const results = await within(Promise.all(specs.map((s) => multi.submit(s).result)), 60_000, '64 jobs on every GPU');
    let worst = 0;
    results.forEach((r, i) => (worst = Math.max(worst, relativeDifference(r, reference[i]!))));
    console.log(`64 mixed jobs on ${count} GPUs vs one: largest relative difference ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(1e-5);
    const stats = multi.stats();
    expect(stats.jobs).toBe(64);
    expect(stats.devices.map((d) => d.device)).toEqual(multi.devices);
    for (const d of stats.devices) {
      expect(d.lanes).toBe(2);
      expect(d.jobs, `jobs on device ${d.device}`).toBeGreaterThan(0);
      expect(d.samplesPerSecond).toBeGreaterThan(0);
    }
    expect(stats.devices.reduce((s, d) => s + d.jobs, 0)).toBe(64);
    expect(new Set(results.map((r) => r.device)).size).toBe(count);
    for (const l of stats.lanes) expect(stats.devices.some((d) => d.device === l.device)).toBe(true);
  }, 180_000);

  it('close() right after 64 submits drains: every job settles (resolved), then close() resolves', async () => {
    const e = new JobEngine({ devices: 'all', lanes: 2, label: 'drain' });
    const jobs = mixedJobs().map((s) => e.submit(s));
    const closing = e.close();
    expect(() => e.submit(mixedJobs(1)[0]!)).toThrow(/closed/);
    const outcomes = await within(Promise.allSettled(jobs.map((j) => j.result)), 60_000, 'the drained jobs');
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    await within(closing, 30_000, 'close()');
    expect(jobs.every((j) => j.status === 'ready')).toBe(true);
  }, 120_000);

  it('a long framed series (nperseg) chunked on every device equals the one-GPU result', async () => {
    const n = 1 << 21;
    const data = testSeries(2, n, 1000) as Float32Array;
    const spec: JobSpec = {
      data,
      batch: 2,
      fs: 48_000,
      flags: ['stft'],
      nperseg: 1024,
      noverlap: 768,
      passBand: [100, 4000],
      previewBins: 64,
    };
    const small = { laneMemoryBytes: 8 << 20 }; // several chunks per job
    const one = await within(
      engine({ device: 0, lanes: 1, label: 'framed one', ...small }).submit(spec).result,
      60_000,
      'framed on one GPU',
    );
    const multi = engine({ devices: 'all', lanes: 1, label: 'framed all', ...small });
    // Two at once, so each device runs one.
    const both = await within(
      Promise.all([multi.submit(spec).result, multi.submit(spec).result]),
      60_000,
      'framed on every GPU',
    );
    expect(new Set(both.map((r) => r.device)).size).toBe(Math.min(2, count));
    for (const r of both) expect(relativeDifference(r, one)).toBeLessThan(1e-5);
    expect(one.frames).toBeGreaterThan(8000);
  }, 180_000);

  it('registered stages run on the lane of each device with kernels of that device (StageContext.device)', async () => {
    const e = engine({ devices: 'all', lanes: 1, label: 'stages' });
    const kernels = Array.from({ length: count }, (_, d) => loadBasicKernels({ context: Device.get(d).context }));
    try {
      e.registerStage('scaled', {
        after: 'inverse',
        run(ctx) {
          // A kernel of the lane's own device: a module is loaded per context.
          const out = ctx.output as DeviceBuffer<'f32'>;
          kernels[ctx.device]!.scale_f32(
            { grid: 64, block: 256, stream: ctx.stream },
            out,
            out,
            -2,
            ctx.batch * ctx.length,
          );
          const host = HostBuffer.alloc('f32', 1, { device: ctx.device });
          (ctx.output as DeviceBuffer<'f32'>).read(host, { stream: ctx.stream, length: 1 });
          return ctx.stream.done().then(() => {
            const first = host.array[0]!;
            host.dispose();
            return { device: ctx.device, first };
          });
        },
      });
      const data = testSeries(2, 4096, 30) as Float32Array;
      const plain = await e.submit({ data, batch: 2, flags: ['stft'] }).result;
      const staged = await within(
        Promise.all(
          Array.from({ length: 4 * count }, () => e.submit({ data, batch: 2, flags: ['stft', 'scaled'] }).result),
        ),
        30_000,
        'staged jobs',
      );
      expect(new Set(staged.map((r) => r.device)).size).toBe(count);
      for (const r of staged) {
        const s = r.stages!.scaled as { device: number; first: number };
        expect(s.device).toBe(r.device);
        expect(s.first).toBeCloseTo(-2 * plain.filtered![0]!, 4);
        for (let i = 0; i < 4096; i += 97) expect(r.filtered![i]!).toBeCloseTo(-2 * plain.filtered![i]!, 4);
      }
    } finally {
      await e.idle();
      for (const k of kernels) k.module.dispose();
    }
  }, 120_000);

  it('a sticky error on one device loses the whole engine: every pending job on every device rejects fast (child process)', async () => {
    const child = await execa(
      'node',
      ['--import', 'tsx', join(ROOT, 'test/gpu/engine/fixtures/engine-sticky-two-devices.ts')],
      { cwd: ROOT, timeout: 90_000, reject: false },
    );
    expect(child.exitCode, child.stderr).toBe(0);
    const r = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
      outcomes: { device: number | undefined; name?: string; status?: string; sticky?: boolean; resolved?: boolean }[];
      lastMs: number;
      lost: string;
      later: string;
      closed: string;
      device0Context: string;
    };
    console.log(
      `sticky error on device 1: ${r.outcomes.length} jobs rejected by ${r.lastMs.toFixed(0)} ms; device 0's context afterwards: ${r.device0Context}`,
    );
    expect(r.outcomes).toHaveLength(12);
    for (const o of r.outcomes) {
      expect(o.resolved, 'no job may finish').toBeUndefined();
      expect(o).toMatchObject({ name: 'JobError', status: 'CUDA_ERROR_ILLEGAL_ADDRESS', sticky: true });
    }
    // Device 0's jobs (spinning for 3 s) are rejected with the fault, not waited out.
    expect(r.outcomes.some((o) => o.device === 0)).toBe(true);
    expect(r.lastMs).toBeLessThan(1500);
    expect(r.lost).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(r.later).toBe('EngineLostError');
    expect(r.closed).toBe('yes');
  }, 120_000);
});
