/** The metric specs every signal-ops row shares the shape of (issue 41): its time against the peers, its HBM fraction. */
import type { MetricSpec } from '../harness/metric-spec.js';

/** Issue 41's goal for every row: ahead of the best of cupyx.scipy.signal and PyTorch on the same job and GPU. */
export const PEERS_GOAL_NOTE =
  'issue 41: ahead of the best of cupyx.scipy.signal and PyTorch doing the same job on the same GPU in the same run (device-resident data, CUDA events, median after warm-up)';

/** `signal_<id>_ms`: the GPU time of one call, lower is better, ahead of the best peer. */
export function timeMetric(id: string): MetricSpec {
  return {
    name: `signal_${id}_ms`,
    unit: 'ms',
    better: 'lower',
    goal: { kind: 'peers-min', value: 1 },
    goalSource: 'issue',
    goalNote: PEERS_GOAL_NOTE,
    group: 'signal-ops',
    interleave: false,
  };
}

/** `signal_<id>_hbm_fraction`: the row's compulsory bytes per second over the measured HBM bandwidth, >= 0.8. */
export function fractionMetric(id: string): MetricSpec {
  return {
    name: `signal_${id}_hbm_fraction`,
    unit: 'fraction',
    better: 'higher',
    goal: { kind: 'abs-min', value: 0.8 },
    goalSource: 'issue',
    goalNote: `issue 41: signal_${id}_ms's compulsory bytes (input read once, output written once) per second over the HBM bandwidth a device-to-device copy measured in the same run`,
    group: 'tscuda-only',
    interleave: false,
  };
}
