import { beforeAll, describe, expect, it } from 'vitest';
import { StageManager } from '../../../src/pipeline/stages/stage-manager.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { BASIC_SIGNATURES, loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { totalLength, unionIntervals, type Interval } from '../../../src/report/timeline.js';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';

const SPIN_NS = 2_000_000n;

describe.skipIf(!gpu.available)(`StageManager${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let k!: BasicKernels;
  beforeAll(() => {
    k = loadBasicKernels();
  });

  it('runs independent stages in parallel, orders dependent ones, and its stats agree with the profiler timeline', async () => {
    const n = 1 << 16;
    const data = randomF32(n);
    using x = DeviceBuffer.from('f32', data);
    using a = DeviceBuffer.alloc('f32', n);
    using b = DeviceBuffer.alloc('f32', n);
    using out = DeviceBuffer.alloc('f32', n);
    using sm = new StageManager({ label: 'stages' });
    const [bx, ba, bb, bout] = [x, a, b, out].map((buf) => sm.addBuffer(buf)) as [number, number, number, number];
    const double = sm.addStage({
      name: 'double',
      inputs: [bx],
      outputs: [ba],
      run: ({ stream, inputs, outputs }) => {
        k.spin_ns({ grid: 1, block: 1, stream }, SPIN_NS);
        k.scale_f32(
          { grid: 64, block: 256, stream },
          outputs[0] as DeviceBuffer<'f32'>,
          inputs[0] as DeviceBuffer<'f32'>,
          2,
          n,
        );
      },
    });
    const triple = sm.addStage({
      name: 'triple',
      inputs: [bx],
      outputs: [bb],
      run: ({ stream, inputs, outputs }) => {
        k.spin_ns({ grid: 1, block: 1, stream }, SPIN_NS);
        k.scale_f32(
          { grid: 64, block: 256, stream },
          outputs[0] as DeviceBuffer<'f32'>,
          inputs[0] as DeviceBuffer<'f32'>,
          3,
          n,
        );
      },
    });
    const sum = sm.addStage({
      name: 'sum',
      inputs: [ba, bb],
      outputs: [bout],
      kernel: k.module.kernel('add_f32', BASIC_SIGNATURES.add_f32),
      launch: { grid: 64, block: 256 },
      args: ({ inputs, outputs }) => [outputs[0]!, inputs[0]!, inputs[1]!, n],
    });
    sm.setOrder([double, triple, sum]);
    expect(sm.order).toEqual([0, 1, 2]);

    const iterations = 10;
    // Not awaited one by one: iterations are enqueued back to back and overlap where buffers allow.
    const results = await Promise.all(Array.from({ length: iterations }, () => sm.executeIteration()));
    expect(results.map((r) => r.iteration)).toEqual([...Array(iterations).keys()]);
    const got = out.read();
    for (let i = 0; i < n; i++) {
      if (Math.abs(got[i]! - 5 * data[i]!) > 1e-5) throw new Error(`element ${i}: got ${got[i]}, want ${5 * data[i]!}`);
    }

    const stats = await sm.stats();
    const records = await sm.profiler.collect();
    const byName = new Map(records.map((r) => [r.name, r]));
    const spans: number[] = [];
    const all: Interval[] = [];
    let parallel = 0;
    for (let it = 0; it < iterations; it++) {
      const rs = ['double', 'triple', 'sum'].map((s) => byName.get(`${s} #${it}`)!);
      expect(rs.every((r) => r !== undefined)).toBe(true);
      const [d, t, s] = rs as [(typeof records)[number], (typeof records)[number], (typeof records)[number]];
      if (Math.min(d.endMs, t.endMs) > Math.max(d.startMs, t.startMs)) parallel++;
      expect(s.startMs).toBeGreaterThanOrEqual(Math.max(d.endMs, t.endMs) - 1e-3);
      spans.push(Math.max(...rs.map((r) => r.endMs)) - Math.min(...rs.map((r) => r.startMs)));
      for (const r of rs) all.push([r.startMs, r.endMs]);
    }
    const merged = unionIntervals(all);
    const spanMs = merged[merged.length - 1]![1] - merged[0]![0];
    const busyMs = totalLength(merged);
    const mean = spans.reduce((p, q) => p + q, 0) / spans.length;
    console.log(
      `stage manager: ${stats.iterations} iterations, ${stats.avgIterationMs.toFixed(3)} ms each, ${stats.throughput.toFixed(0)}/s, GPU utilization ${(100 * stats.gpuUtilization).toFixed(1)}%`,
    );

    // The first iteration's branches can start apart while the streams warm up.
    expect(parallel).toBeGreaterThanOrEqual(iterations - 1);
    expect(stats.iterations).toBe(iterations);
    expect(stats.avgIterationMs).toBeCloseTo(mean, 6);
    expect(stats.spanMs).toBeCloseTo(spanMs, 6);
    expect(stats.busyMs).toBeCloseTo(busyMs, 6);
    expect(stats.gpuUtilization).toBeCloseTo(busyMs / spanMs, 6);
    expect(stats.throughput).toBeCloseTo((iterations * 1000) / spanMs, 3);
    // Each iteration costs one spin (the branches overlap), not two.
    const spinMs = Number(SPIN_NS) / 1e6;
    expect(stats.avgIterationMs).toBeGreaterThan(spinMs);
    expect(stats.avgIterationMs).toBeLessThan(1.8 * spinMs);
    expect(stats.gpuUtilization).toBeGreaterThan(0.8);
    expect(stats.gpuUtilization).toBeLessThanOrEqual(1);

    await sm.resetStats();
    expect((await sm.stats()).iterations).toBe(0);
    await sm.executeIteration();
    const one = await sm.stats();
    expect(one.iterations).toBe(1);
    expect(one.avgIterationMs).toBeGreaterThan(spinMs);
  });

  it('rejects malformed stages and orders', async () => {
    using sm = new StageManager({ label: 'bad' });
    expect(() => sm.addStage({ name: 'nothing' })).toThrow(/exactly one of kernel or run/);
    expect(() => sm.addStage({ name: 'ghost', inputs: [3], run: () => undefined })).toThrow(/no buffer 3/);
    expect(() => sm.setOrder([0])).toThrow(/no stage 0/);
    await expect(sm.executeIteration()).rejects.toThrow(/no stages/);
  });
});
