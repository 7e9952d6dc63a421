import { describe, expect, it } from 'vitest';
import { foldEnginePeer } from '../../../bench/harness/engine-peers.js';
import type { PeerOutcome } from '../../../bench/harness/peers.js';
import { describeGoal, meetsGoal, peerRatio, type MetricResult } from '../../../bench/report/types.js';
import { cwtFrequencies, CWT_FMAX, CWT_FMIN, CWT_FREQS, jobData } from '../../../bench/tscuda/engine-jobs.js';
import { referenceCycles, referenceFiltered, relativeL2 } from '../../../bench/tscuda/engine-reference.js';

const ok = (peer: 'cupy' | 'torch', metrics: Record<string, number>): PeerOutcome => ({
  peer,
  status: 'ok',
  version: `${peer} 1`,
  passes: [Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, { median: v, spread: 0.01, samples: 5 }]))],
  errors: {},
});

describe('engine peers', () => {
  const names = ['stft_job_gsamples_per_s', 'cwt_job_gsamples_per_s'];

  it("adds the engine peer's metrics to the peer's own run as another pass", () => {
    const folded = foldEnginePeer(
      ok('cupy', { fft_c2c_4096x8192_ms: 1.2 }),
      ok('cupy', { stft_job_gsamples_per_s: 5 }),
      names,
    );
    expect(folded.status).toBe('ok');
    expect(folded.passes).toHaveLength(2);
    expect(folded.passes[1]!.stft_job_gsamples_per_s!.median).toBe(5);
  });

  it('takes the engine peer alone when the main program was skipped, and keeps either failure', () => {
    const skipped: PeerOutcome = {
      peer: 'torch',
      status: 'skipped',
      reason: 'no selected metric has peers',
      passes: [],
      errors: {},
    };
    expect(foldEnginePeer(skipped, ok('torch', { stft_job_gsamples_per_s: 3 }), names).status).toBe('ok');
    const absent: PeerOutcome = {
      peer: 'torch',
      status: 'absent',
      reason: 'ModuleNotFoundError: torch',
      passes: [],
      errors: {},
    };
    const kept = foldEnginePeer(ok('torch', { launch_empty_us: 5 }), absent, names);
    expect(kept.status).toBe('ok');
    expect(kept.errors.stft_job_gsamples_per_s).toMatch(/stft_job_peer\.py absent: ModuleNotFoundError/);
    const failedMain: PeerOutcome = {
      peer: 'torch',
      status: 'failed',
      reason: 'crashed\nstack',
      passes: [],
      errors: {},
    };
    expect(
      foldEnginePeer(failedMain, ok('torch', { stft_job_gsamples_per_s: 3 }), names).errors['(main program)'],
    ).toBe('failed: crashed');
    expect(foldEnginePeer(failedMain, absent, names)).toBe(failedMain);
    expect(foldEnginePeer(undefined, absent, names)).toBe(absent);
  });
});

describe('the peers-min goal', () => {
  const row = (
    tscuda: number | null,
    cupy: number | null,
    torch: number | null,
    better: 'higher' | 'lower' = 'higher',
  ): MetricResult => ({
    name: 'stft_job_gsamples_per_s',
    unit: 'Gsamples/s',
    better,
    tscuda,
    c: null,
    cupy,
    torch,
    cudaPython: null,
    goal: { kind: 'peers-min', value: 1 },
  });

  it('compares with the best of CuPy and PyTorch', () => {
    expect(peerRatio(row(10, 8, 5))).toBeCloseTo(1.25, 12);
    expect(meetsGoal(row(10, 8, 5))).toBe(true);
    expect(meetsGoal(row(7, 8, 5))).toBe(false);
    expect(meetsGoal(row(7, null, 5))).toBe(true);
    expect(meetsGoal(row(7, null, null))).toBeNull();
    expect(meetsGoal(row(null, 1, 1))).toBeNull();
    // lower-is-better: the best peer is the smallest, and tscuda must be at most it.
    expect(peerRatio(row(2, 4, 3, 'lower'))).toBeCloseTo(1.5, 12);
    expect(describeGoal({ kind: 'peers-min', value: 1 })).toBe('≥ 1× best peer');
  });
});

describe('engine bench references', () => {
  it('log-spaces the CWT frequencies as numpy.geomspace', () => {
    const f = cwtFrequencies();
    expect(f).toHaveLength(CWT_FREQS);
    expect(f[0]).toBeCloseTo(CWT_FMIN, 12);
    expect(f.at(-1)).toBeCloseTo(CWT_FMAX, 9);
    expect(f[1]! / f[0]!).toBeCloseTo(f[100]! / f[99]!, 12);
  });

  it('filters and measures bands consistently (Parseval over every bin, an all-pass filter keeps the windowed signal)', () => {
    const n = 4096;
    const x = jobData(1, n, 3);
    const fs = 1000;
    const all = referenceCycles(x, fs, [[0, fs / 2]]);
    // Parseval: the windowed, detrended signal's mean square.
    const passed = referenceFiltered(x, fs, [0, fs / 2]);
    let ms = 0;
    for (const v of passed) ms += v * v;
    expect(all.bandPowers[0]! / (ms / n)).toBeCloseTo(1, 10);
    // The 10 Hz tone of jobData dominates.
    expect(Math.abs(all.dominant.frequency - 10)).toBeLessThan(fs / n);
    const narrow = referenceFiltered(x, fs, [9, 11]);
    expect(relativeL2(narrow, passed)).toBeGreaterThan(0.1);
    expect(relativeL2(passed, passed)).toBe(0);
  });
});
