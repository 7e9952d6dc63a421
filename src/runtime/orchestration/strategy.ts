/** How a StreamPool picks streams: pure functions, so the rules are testable without a GPU. */

export type StreamPurpose = 'ConfigUpload' | 'KernelExecution' | 'TelemetryDownload' | 'P2PTransfer' | 'AuxCompute';
export type WorkloadType = 'Compute' | 'Memory' | 'Mixed' | 'Coordination';
export type PoolStrategy = 'RoundRobin' | 'LoadBalanced' | 'Priority' | 'Workload';

export interface StreamLoad {
  index: number;
  outstanding: number;
  priority: 'high' | 'normal' | 'low';
  purpose: StreamPurpose;
}

/** Streams whose purpose suits a workload. */
const WORKLOAD_PURPOSES: Record<WorkloadType, readonly StreamPurpose[]> = {
  Compute: ['KernelExecution', 'AuxCompute'],
  Memory: ['ConfigUpload', 'TelemetryDownload', 'P2PTransfer'],
  Mixed: ['KernelExecution', 'AuxCompute', 'ConfigUpload', 'TelemetryDownload', 'P2PTransfer'],
  Coordination: ['AuxCompute'],
};

function leastLoaded(candidates: readonly StreamLoad[], tick: number): number {
  let best = candidates[tick % candidates.length]!;
  for (const c of candidates) if (c.outstanding < best.outstanding) best = c;
  return best.index;
}

/**
 * The stream index for a request. A requested purpose narrows the candidates first (when the
 * pool has such a stream); then RoundRobin cycles, LoadBalanced takes the least outstanding
 * work, Priority takes the requested priority level (high by default), Workload takes the
 * streams whose purpose suits the workload, least loaded first.
 */
export function chooseStream(
  strategy: PoolStrategy,
  loads: readonly StreamLoad[],
  request: { purpose?: StreamPurpose; workload?: WorkloadType; priority?: 'high' | 'normal' | 'low' },
  tick: number,
): number {
  let candidates = loads;
  if (request.purpose) {
    const matching = loads.filter((l) => l.purpose === request.purpose);
    if (matching.length) candidates = matching;
  }
  switch (strategy) {
    case 'RoundRobin':
      return candidates[tick % candidates.length]!.index;
    case 'LoadBalanced':
      return leastLoaded(candidates, tick);
    case 'Priority': {
      const level = request.priority ?? 'high';
      const matching = candidates.filter((l) => l.priority === level);
      return leastLoaded(matching.length ? matching : candidates, tick);
    }
    case 'Workload': {
      const suits = WORKLOAD_PURPOSES[request.workload ?? 'Mixed'];
      const matching = candidates.filter((l) => suits.includes(l.purpose));
      return leastLoaded(matching.length ? matching : candidates, tick);
    }
  }
}

/**
 * optimize()'s rules, in order: several workload types recorded with average times differing
 * by more than 2x -> Workload (keep slow kinds off the fast kinds' streams); outstanding work
 * uneven across streams (max > 2 x mean + 1) -> LoadBalanced; otherwise RoundRobin.
 */
export function recommendStrategy(averages: ReadonlyMap<WorkloadType, number>, loads: readonly StreamLoad[]): PoolStrategy {
  const times = [...averages.values()].filter((t) => t > 0);
  if (times.length >= 2 && Math.max(...times) > 2 * Math.min(...times)) return 'Workload';
  const outstanding = loads.map((l) => l.outstanding);
  const mean = outstanding.reduce((a, b) => a + b, 0) / Math.max(1, outstanding.length);
  if (Math.max(...outstanding) > 2 * mean + 1) return 'LoadBalanced';
  return 'RoundRobin';
}
