import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchRun } from '../../../bench/harness/merge.js';
import { metricRecord, peerStatuses, writeMultiGpuRun } from '../../../bench/tscuda/multi-gpu-results.js';

describe('several-GPU bench results (main bench shape)', () => {
  it('records judge each goal: ratio to C, to PyTorch, absolute; a missing side is null with its reason in the notes', () => {
    const p2p = metricRecord({
      name: 'p2p_copy_gbps',
      unit: 'GB/s',
      goal: { kind: 'ratio-min', value: 0.97 },
      tscuda: { median: 390, spread: 0.01, samples: [1, 2, 3] },
      c: { median: 391, spread: 0, samples: 3 },
      notes: ['n'],
    });
    expect(p2p).toMatchObject({
      tscuda: 390,
      c: 391,
      cupy: null,
      torch: null,
      met: true,
      samples: { tscuda: 3, c: 3 },
    });
    expect(p2p.ratio).toBeCloseTo(390 / 391, 12);
    const nccl = metricRecord({
      name: 'nccl_allreduce_busbw_gbps',
      unit: 'GB/s',
      goal: { kind: 'peers-min', value: 0.95 },
      tscuda: { median: 280, spread: 0, samples: 5 },
      torch: { median: 300, spread: 0, samples: 5 },
      notes: [],
    });
    expect(nccl).toMatchObject({ torch: 300, met: false });
    const stft = metricRecord({
      name: 'stft_job_multi_gpu_speedup',
      unit: 'x',
      goal: null,
      tscuda: { notMeasured: 'needs 2 GPUs, this machine has 1' },
      notes: [],
    });
    expect(stft).toMatchObject({ tscuda: null, met: null, ratio: null });
    expect(stft.notes).toContain('tscuda: not measured: needs 2 GPUs, this machine has 1');
  });

  it('writes multi-gpu-<gpu>-<date>.{json,md,svg} beside the main results without overwriting them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tscuda-multi-gpu-'));
    try {
      const run: BenchRun = {
        gpu: '2 x NVIDIA H100 80GB HBM3',
        driver: '580',
        cuda: '13.0',
        commit: 'abc',
        date: '2026-11-27T12:00:00.000Z',
        metrics: [
          metricRecord({
            name: 'stft_job_multi_gpu_pcie_fraction',
            unit: 'fraction',
            goal: { kind: 'abs-min', value: 0.8 },
            tscuda: { median: 0.85, spread: 0.02, samples: 8 },
            notes: ['x'],
          }),
        ],
        versions: { node: process.version },
        peers: peerStatuses({ notMeasured: 'nvcc not found' }, { reason: 'no torch' }),
        tscuda: { status: 'ok' },
        settings: { reps: 10, iters: 20, rounds: 1, only: null },
        durationS: 100,
      };
      const json = writeMultiGpuRun(run, dir, new Date('2026-11-27T12:00:00Z'));
      expect(json).toBe(join(dir, 'multi-gpu-2-x-nvidia-h100-80gb-hbm3-20261127.json'));
      const back = JSON.parse(readFileSync(json, 'utf8')) as BenchRun;
      expect(back.metrics[0]).toMatchObject({ name: 'stft_job_multi_gpu_pcie_fraction', tscuda: 0.85, met: true });
      expect(back.peers.c).toMatchObject({ status: 'failed', reason: 'nvcc not found' });
      expect(readFileSync(json.replace(/json$/, 'md'), 'utf8')).toMatch(/stft_job_multi_gpu_pcie_fraction/);
      expect(readFileSync(json.replace(/json$/, 'svg'), 'utf8').startsWith('<svg')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
