import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runBalancedPipeline } from '../../../bench/tscuda/balanced.js';
import {
  ManagedContext,
  type ManagedMode,
  type StepDefinition,
} from '../../../src/pipeline/overlap/managed-context.js';
import { loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { Profiler } from '../../../src/orchestration/profiler.js';
import { analyzeTimeline, type TimelineRecord } from '../../../src/report/timeline.js';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';

const A = 1.5;
/** The per-step constant the compute adds, so that a result from the wrong step is caught. */
const offset = (step: number): number => 0.25 * step + 1;

describe.skipIf(!gpu.available)(
  `ManagedContext and the triple-buffered pipeline${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let k!: BasicKernels;
    beforeAll(() => {
      k = loadBasicKernels();
    });

    /** telemetry = A * config + offset(step), after a spin long enough for stages to overlap. */
    function definition(n: number, spinNs: bigint): StepDefinition<'f32', 'f32'> {
      return {
        config: { dtype: 'f32', length: n },
        telemetry: { dtype: 'f32', length: n },
        compute: ({ config, telemetry, stream, step }) => {
          k.spin_ns({ grid: 1, block: 1, stream }, spinNs);
          k.fill_f32({ grid: 512, block: 256, stream }, telemetry, offset(step), n);
          k.saxpy_f32({ grid: 512, block: 256, stream }, n, A, config, telemetry);
        },
      };
    }

    async function runSteps(mode: ManagedMode, configs: Float32Array[], n: number): Promise<Float32Array[]> {
      using ctx = new ManagedContext<'f32', 'f32'>({ mode, step: definition(n, 200_000n), label: `managed ${mode}` });
      expect(ctx.hasStreamManagement).toBe(mode === 'triple');
      // Copy the telemetry out, then poison the staging: a step whose download did not land reads NaN.
      const read = (t: Float32Array): Float32Array => {
        const copy = t.slice();
        t.fill(Number.NaN);
        return copy;
      };
      if (mode === 'sync') {
        const out: Float32Array[] = [];
        for (const c of configs) out.push(await ctx.tripleBufferedStep(c, read));
        return out;
      }
      // All steps at once: they queue for the three slots and overlap.
      const out = await Promise.all(configs.map((c) => ctx.tripleBufferedStep(c, read)));
      await ctx.done();
      return out;
    }

    it('triple-buffered results equal a sequential run on fresh random data', async () => {
      const n = 1 << 20;
      const steps = 12;
      const configs = Array.from({ length: steps }, () => randomF32(n));
      const sequential = await runSteps('sync', configs, n);
      const triple = await runSteps('triple', configs, n);
      for (let s = 0; s < steps; s++) {
        const seq = sequential[s]!;
        const tri = triple[s]!;
        const x = configs[s]!;
        let worst = 0;
        for (let i = 0; i < n; i++) {
          if (!(tri[i] === seq[i])) throw new Error(`step ${s} element ${i}: triple ${tri[i]} != sequential ${seq[i]}`);
          worst = Math.max(worst, Math.abs(seq[i]! - (A * x[i]! + offset(s))));
        }
        expect(worst).toBeLessThan(1e-5);
      }
    });

    it('returns the default copy of the telemetry, and rejects a config of the wrong size without disturbing later steps', async () => {
      const n = 4096;
      using ctx = new ManagedContext<'f32', 'f32'>({ mode: 'triple', step: definition(n, 0n) });
      const x = randomF32(n);
      const bad = ctx.tripleBufferedStep(new Float32Array(n + 1));
      const good = ctx.tripleBufferedStep(x);
      await expect(bad).rejects.toThrow(/4097 values, expected 4096/);
      const got = await good;
      expect(got).toBeInstanceOf(Float32Array);
      // The failed call still took step number 0; the good one is step 1.
      for (let i = 0; i < n; i++) expect(Math.abs(got[i]! - (A * x[i]! + offset(1)))).toBeLessThan(1e-5);
      await ctx.synchronize();
    });

    it('gives each purpose a stream in triple mode and one shared stream in sync mode', async () => {
      using triple = new ManagedContext({ mode: 'triple' });
      const purposes = ['ConfigUpload', 'KernelExecution', 'TelemetryDownload', 'P2PTransfer', 'AuxCompute'] as const;
      expect(new Set(purposes.map((p) => triple.getStream(p))).size).toBe(5);
      expect(triple.getStream('KernelExecution')).toBe(triple.coordinator.computeStream);
      using sync = new ManagedContext({ mode: 'sync' });
      expect(sync.hasStreamManagement).toBe(false);
      expect(new Set(purposes.map((p) => sync.getStream(p))).size).toBe(1);
      using tb = triple.createTripleBuffer('f32', 16);
      expect(tb.size).toBe(3);
      using sm = triple.createStageManager();
      expect(sm.coordinator).toBe(triple.coordinator);
      await expect(triple.tripleBufferedStep(new Float32Array(1))).rejects.toThrow(/no step definition/);
    });

    it('runs an upload, a compute and a download at once in every interior step (profiler timeline), and beats the sequential mode', async () => {
      const bytesPerStep = 32 << 20;
      // Enough steps that one step a noisy host delays moves the share below by a few percent, not ten.
      const steps = 26;
      const profiler = new Profiler({ label: 'triple-buffered pipeline' });
      const triple = await runBalancedPipeline({ steps, bytesPerStep, mode: 'triple', profiler });
      const sequential = await runBalancedPipeline({ steps, bytesPerStep, mode: 'sequential' });
      const records = await profiler.collect();
      const svg = await profiler.svg(
        `triple-buffered pipeline: ${steps} steps of ${bytesPerStep >> 20} MiB up and down`,
      );
      const dir = process.env.TSCUDA_ARTIFACTS_DIR;
      if (dir) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'triple-buffer-timeline.svg'), svg);
      }
      await profiler.reset();
      profiler.dispose();
      console.log(
        `balanced ${bytesPerStep >> 20} MiB/step, stages up ${triple.perStageMs.upload.toFixed(3)} / compute ${triple.perStageMs.compute.toFixed(3)} / down ${triple.perStageMs.download.toFixed(3)} ms: ` +
          `triple ${triple.msPerStep.toFixed(3)} ms/step (efficiency ${(100 * triple.overlapEfficiency).toFixed(1)}%), ` +
          `sequential ${sequential.msPerStep.toFixed(3)} ms/step (efficiency ${(100 * sequential.overlapEfficiency).toFixed(1)}%), speedup ${(sequential.totalMs / triple.totalMs).toFixed(2)}x`,
      );

      const byStage = new Map<string, TimelineRecord>();
      for (const r of records) byStage.set(r.name, r);
      const steppedNames = records
        .map((r) => /^(upload|compute|download) #(\d+)$/.exec(r.name))
        .filter((m) => m !== null);
      const stepNumbers = [...new Set(steppedNames.map((m) => Number(m[2])))].sort((a, b) => a - b);
      expect(stepNumbers.length).toBe(steps);
      const first = stepNumbers[0]!;
      const last = stepNumbers[stepNumbers.length - 1]!;
      const stage = (kind: string) => records.filter((r) => r.name.startsWith(`${kind} #`));
      const uploads = stage('upload');
      const computes = stage('compute');
      // Each interior download must run at an instant when some upload and some compute run too. Which
      // steps those are depends on the stages' lengths: when one stage is slower (a host whose PCIe
      // downloads are slower than its uploads), the faster ones run ahead by up to the ring's depth,
      // so upload #i+1 / compute #i / download #i-1 need not line up even though all three overlap.
      let overlapping = 0;
      const interior: number[] = [];
      for (let i = first + 1; i < last; i++) {
        interior.push(i);
        const down = byStage.get(`download #${i - 1}`);
        expect(down, `download #${i - 1} in the timeline`).toBeDefined();
        const threeAtOnce = uploads.some((up) =>
          computes.some(
            (compute) =>
              Math.min(up.endMs, compute.endMs, down!.endMs) > Math.max(up.startMs, compute.startMs, down!.startMs),
          ),
        );
        if (threeAtOnce) overlapping++;
      }
      // Every interior step should show all three at once; a little slack for a noisy machine.
      expect(
        overlapping,
        `${overlapping} of ${interior.length} interior downloads ran while an upload and a compute ran`,
      ).toBeGreaterThanOrEqual(Math.ceil(0.8 * interior.length));
      expect(analyzeTimeline(records).transferComputeOverlapPercent).toBeGreaterThan(50);
      // The three-way overlap above is the property; wall-clock efficiency also carries the host's
      // reaction to each completed download (0.6-0.9 seen on an H100), so it is bounded loosely
      // here and measured against the issue's goals in bench/ (pipeline_overlap_efficiency).
      expect(triple.overlapEfficiency).toBeGreaterThan(0.5);
      expect(sequential.overlapEfficiency).toBeLessThan(0.5);
      expect(sequential.totalMs / triple.totalMs).toBeGreaterThan(1.6);
    });
  },
);
