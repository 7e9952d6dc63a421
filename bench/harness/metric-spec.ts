/** What the harness knows of one metric (pure data): bench/harness/metrics.ts lists them; row modules (bench/signal-ops/rows/) declare their own. */
import type { Goal } from '../report/types.js';

/**
 * Where a metric's value for tscuda comes from, and whether C and the peers measure it too:
 * 'native': C and the Python peers; 'peers': the Python peers only (bench/peers/stft_job_peer.py,
 * issue 11's job metrics); 'signal-ops': the Python peers of the signal operations only
 * (bench/peers/signal_ops_peer.py, issue 41's rows in bench/signal-ops/); 'tscuda-only': nobody else.
 */
export type MetricGroup = 'native' | 'peers' | 'signal-ops' | 'tscuda-only';

/** One metric: name, unit, which direction is better, the goal, and how the harness schedules it. */
export interface MetricSpec {
  name: string;
  unit: string;
  better: 'lower' | 'higher';
  goal: Goal;
  /** 'issue': the goal as issue 6 states it; 'derived': the issue names the metric but no goal, so it takes its nearest sibling's. */
  goalSource: 'issue' | 'derived';
  /** What the goal compares with, in words (shown in the notes where it is not obvious). */
  goalNote?: string;
  group: MetricGroup;
  /**
   * Host-timed metrics (launch loops, per-iteration round trips) drift with clocks and load:
   * C and tscuda run them twice, interleaved (C, tscuda, C, tscuda), and each side's value
   * is the median of its passes. GPU-timed ones (bandwidth, FFT) run once.
   */
  interleave: boolean;
}
