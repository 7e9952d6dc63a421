import { describe, expect, it } from 'vitest';
import {
  BATCHER_BENCH,
  exactNamesPattern,
  METRIC_NAMES,
  METRICS,
  selectMetrics,
} from '../../../bench/harness/metrics.js';
import { producedMetricNames } from '../../../bench/tscuda/runner.js';

/** Issue 6's fixed metric names, in its order. */
const ISSUE_NAMES = [
  'launch_empty_us',
  'launch_4args_us',
  'launch_sync_roundtrip_us',
  'await_completion_us',
  'event_record_us',
  'event_query_us',
  'h2d_pinned_gbps',
  'd2h_pinned_gbps',
  'bidir_pinned_gbps',
  'h2d_pageable_gbps',
  'small_copy_roundtrip_us',
  'alloc_free_async_us',
  'graph_replay_per_kernel_us',
  'coordinator_edge_us',
  'fft_c2c_4096x8192_ms',
  'fft_z2z_4096x8192_ms',
  'pipeline_overlap_efficiency',
  'pipeline_speedup_vs_sequential',
  'batcher_items_per_s',
  'batcher_p99_ms',
  'event_loop_lag_p99_ms',
  // issue 10: NVRTC off the event loop
  'compile_event_loop_lag_p99_ms',
  // issue 11: the job engine
  'stft_job_gsamples_per_s',
  'stft_job_pcie_fraction',
  'stft_job_pageable_gsamples_per_s',
  'cwt_job_gsamples_per_s',
  'engine_event_loop_lag_p99_ms',
  // issue 26: 16-bit samples
  'stft_job_i16_gsamples_per_s',
  'stft_job_i16_bound_fraction',
  // issue 41: the signal operations (bench/signal-ops/rows/)
  'signal_fftconvolve_ms',
  'signal_sosfilt_ms',
  'signal_resample_poly_ms',
  'signal_resample_poly_hbm_fraction',
  'signal_hilbert_ms',
  // issue 41: two-sided spectrograms of complex IQ (bench/signal-ops/rows/iq-spectrogram.ts)
  'signal_iq_spectrogram_ms',
  'signal_iq16_spectrogram_ms',
];

/** bench/native/bench.cu's kMetrics table. */
const NATIVE_NAMES = ISSUE_NAMES.slice(0, 16);

describe('metric catalogue', () => {
  it('has exactly the names issue 6 fixes, in its order', () => {
    expect(METRIC_NAMES).toEqual(ISSUE_NAMES);
  });

  it('gives every metric a goal, a unit and a direction', () => {
    for (const m of METRICS) {
      expect(m.goal, m.name).not.toBeNull();
      expect(m.unit.length, m.name).toBeGreaterThan(0);
      expect(['lower', 'higher'], m.name).toContain(m.better);
      expect(Number.isFinite(m.goal.value), m.name).toBe(true);
      // A goal bounds in the direction that is better: lower-is-better metrics have maxima.
      const isMax = m.goal.kind === 'ratio-max' || m.goal.kind === 'abs-max' || m.goal.kind === 'floor-max';
      // peers-min is oriented by the metric itself (peerRatio: best peer / tscuda where lower is better).
      if (m.goal.kind !== 'peers-min') expect(isMax, m.name).toBe(m.better === 'lower');
      if (m.goalSource === 'derived') expect(m.goalNote, m.name).toBeTruthy();
    }
  });

  it('states the goals of issue 6', () => {
    const goal = (name: string): string => {
      const g = METRICS.find((m) => m.name === name)!.goal;
      return `${g.kind} ${g.value}`;
    };
    expect(goal('launch_empty_us')).toBe('floor-max 1.1');
    expect(goal('launch_4args_us')).toBe('floor-max 1.1');
    expect(goal('launch_sync_roundtrip_us')).toBe('floor-max 1.1');
    expect(goal('small_copy_roundtrip_us')).toBe('floor-max 1.1');
    expect(goal('event_record_us')).toBe('floor-max 1.1');
    expect(goal('event_query_us')).toBe('floor-max 1.1');
    expect(goal('await_completion_us')).toBe('floor-max 1.1');
    expect(goal('h2d_pinned_gbps')).toBe('ratio-min 0.97');
    expect(goal('d2h_pinned_gbps')).toBe('ratio-min 0.97');
    expect(goal('bidir_pinned_gbps')).toBe('ratio-min 0.95');
    expect(goal('alloc_free_async_us')).toBe('floor-max 1.1');
    expect(goal('graph_replay_per_kernel_us')).toBe('ratio-max 1.2');
    expect(goal('coordinator_edge_us')).toBe('floor-max 1.1');
    expect(goal('fft_c2c_4096x8192_ms')).toBe('ratio-max 1.05');
    expect(goal('fft_z2z_4096x8192_ms')).toBe('ratio-max 1.05');
    expect(goal('pipeline_overlap_efficiency')).toBe('abs-min 0.9');
    expect(goal('pipeline_speedup_vs_sequential')).toBe('abs-min 2.5');
    expect(goal('batcher_items_per_s')).toBe('abs-min 2000000');
    expect(goal('batcher_p99_ms')).toBe(`abs-max ${BATCHER_BENCH.maxWaitMs + 1}`);
    expect(goal('event_loop_lag_p99_ms')).toBe('abs-max 5');
    expect(goal('stft_job_gsamples_per_s')).toBe('peers-min 1');
    expect(goal('stft_job_pcie_fraction')).toBe('abs-min 0.8');
    expect(goal('cwt_job_gsamples_per_s')).toBe('peers-min 1');
    expect(goal('stft_job_i16_gsamples_per_s')).toBe('peers-min 1');
    expect(goal('stft_job_i16_bound_fraction')).toBe('abs-min 0.8');
    expect(goal('engine_event_loop_lag_p99_ms')).toBe('abs-max 5');
    for (const op of ['fftconvolve', 'sosfilt', 'resample_poly', 'hilbert'])
      expect(goal(`signal_${op}_ms`)).toBe('peers-min 1');
    expect(goal('signal_resample_poly_hbm_fraction')).toBe('abs-min 0.8');
    const derived = METRICS.filter((m) => m.goalSource === 'derived').map((m) => m.name);
    expect(derived).toEqual(['h2d_pageable_gbps', 'stft_job_pageable_gsamples_per_s']);
  });

  it('compares with C exactly the metrics bench.cu measures', () => {
    expect(METRICS.filter((m) => m.group === 'native').map((m) => m.name)).toEqual(NATIVE_NAMES);
    for (const m of METRICS) {
      // Native metrics are judged against C, or (per-call ones, issue 26) against koffi's floor with C's ratio beside it.
      const cGoal = m.goal.kind === 'ratio-max' || m.goal.kind === 'ratio-min' || m.goal.kind === 'floor-max';
      expect(cGoal, m.name).toBe(m.group === 'native');
    }
  });

  it('interleaves only host-timed metrics', () => {
    const interleaved = METRICS.filter((m) => m.interleave).map((m) => m.name);
    expect(interleaved).not.toContain('h2d_pinned_gbps');
    expect(interleaved).not.toContain('fft_c2c_4096x8192_ms');
    expect(interleaved).toContain('launch_empty_us');
    expect(interleaved).toContain('await_completion_us');
  });

  it('has a tscuda benchmark for every metric', () => {
    expect(new Set(producedMetricNames())).toEqual(new Set(ISSUE_NAMES));
  });

  it("runs the signal-ops rows' times against their own peer program, and selects them by one pattern", () => {
    expect(METRICS.filter((m) => m.group === 'signal-ops').map((m) => m.name)).toEqual([
      'signal_fftconvolve_ms',
      'signal_sosfilt_ms',
      'signal_resample_poly_ms',
      'signal_hilbert_ms',
      'signal_iq_spectrogram_ms',
      'signal_iq16_spectrogram_ms',
    ]);
    expect(selectMetrics(/^signal_/)).toHaveLength(7);
    expect(selectMetrics(/^signal_resample_poly/).map((m) => m.name)).toEqual([
      'signal_resample_poly_ms',
      'signal_resample_poly_hbm_fraction',
    ]);
  });

  it('selects with an unanchored pattern and hands children exact names', () => {
    expect(selectMetrics(/launch_/).map((m) => m.name)).toEqual([
      'launch_empty_us',
      'launch_4args_us',
      'launch_sync_roundtrip_us',
    ]);
    expect(selectMetrics(null)).toHaveLength(ISSUE_NAMES.length);
    const pattern = exactNamesPattern(['launch_empty_us', 'event_query_us']);
    expect(pattern).toBe('^(launch_empty_us|event_query_us)$');
    const re = new RegExp(pattern);
    expect(ISSUE_NAMES.filter((n) => re.test(n))).toEqual(['launch_empty_us', 'event_query_us']);
    expect(() => exactNamesPattern(['a|b'])).toThrow();
  });
});
