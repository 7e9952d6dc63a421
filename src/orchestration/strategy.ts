/**
 * How a StreamPool picks streams for work that asks for one (acquire(), the Coordinator's
 * operations without a stream): pure functions, so the rules are testable without a GPU. A lane's
 * streams are fixed (its compute stream and its device's copy streams), so the job engine never
 * asks a strategy.
 */

export type StreamPurpose = 'ConfigUpload' | 'KernelExecution' | 'TelemetryDownload' | 'P2PTransfer' | 'AuxCompute';
/** The kind of work a piece of work is, for the Workload strategy. */
export type WorkloadType = 'Compute' | 'Memory' | 'Mixed' | 'Coordination';
/** How a StreamPool picks a stream for the next piece of work. */
export type PoolStrategy = 'RoundRobin' | 'LoadBalanced' | 'Priority' | 'Workload';
/** A stream's priority, mapped onto the context's priority range. */
export type PriorityLevel = 'high' | 'normal' | 'low';

/** What a strategy knows of one stream when it chooses. */
export interface StreamLoad {
  index: number;
  /** Submissions not yet completed on the stream. */
  outstanding: number;
  priority: PriorityLevel;
  purpose: StreamPurpose;
}

/** What the work asks for when it acquires a stream. */
export interface StreamRequest {
  purpose?: StreamPurpose | undefined;
  workload?: WorkloadType | undefined;
  priority?: PriorityLevel | undefined;
}

/** Stream indices reserved for a workload by optimize(); a workload without an entry uses the purposes that suit it. */
export type WorkloadAssignments = Partial<Record<WorkloadType, readonly number[]>>;

/** Streams whose purpose suits a workload. */
export const WORKLOAD_PURPOSES: Readonly<Record<WorkloadType, readonly StreamPurpose[]>> = {
  Compute: ['KernelExecution', 'AuxCompute'],
  Memory: ['ConfigUpload', 'TelemetryDownload', 'P2PTransfer'],
  Mixed: ['KernelExecution', 'AuxCompute', 'ConfigUpload', 'TelemetryDownload', 'P2PTransfer'],
  Coordination: ['AuxCompute'],
};

/** Every PoolStrategy, in the order messages list them. */
export const POOL_STRATEGIES: readonly PoolStrategy[] = ['RoundRobin', 'LoadBalanced', 'Priority', 'Workload'];
/** Every StreamPurpose. */
export const STREAM_PURPOSES: readonly StreamPurpose[] = [
  'ConfigUpload',
  'KernelExecution',
  'TelemetryDownload',
  'P2PTransfer',
  'AuxCompute',
];
/** Every WorkloadType. */
export const WORKLOAD_TYPES: readonly WorkloadType[] = ['Compute', 'Memory', 'Mixed', 'Coordination'];
/** Every PriorityLevel. */
export const PRIORITY_LEVELS: readonly PriorityLevel[] = ['high', 'normal', 'low'];

/**
 * Returns `value` when it is one of `allowed`, else throws TypeError naming `what` and the
 * valid values: a strategy or purpose the switch does not know would otherwise choose no
 * stream at all (acquire() returned undefined).
 */
export function checkChoice<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const shown =
    typeof value === 'string'
      ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)
      : value === null
        ? 'null'
        : typeof value;
  throw new TypeError(`${what} must be one of ${allowed.join(', ')}; got ${shown}`);
}

/**
 * A pool's stream specs, their shape checked (objects; priorities and purposes from the lists
 * above) before the pool asks the driver for anything: a mistake in them is named on any machine.
 */
export function checkStreamSpecs<S extends { priority?: unknown; purpose?: unknown }>(
  specs: unknown,
  label: string,
): { spec: S; priority: PriorityLevel; purpose: StreamPurpose }[] {
  // A string was told it had no streams: named as what it is.
  if (!Array.isArray(specs))
    throw new TypeError(
      `${label}: streams must be an array of stream specs { priority?, purpose?, ... }, got ${specs === null ? 'null' : typeof specs}`,
    );
  if (specs.length === 0) throw new RangeError(`${label}: a StreamPool needs at least one stream`);
  return specs.map((spec: unknown, i) => {
    if (typeof spec !== 'object' || spec === null)
      throw new TypeError(`${label}: streams[${i}] must be an object { priority?, purpose?, stream?, label? }`);
    const s = spec as S;
    const priority = checkChoice(s.priority ?? 'normal', PRIORITY_LEVELS, `${label}: streams[${i}].priority`);
    const purpose = checkChoice(s.purpose ?? 'KernelExecution', STREAM_PURPOSES, `${label}: streams[${i}].purpose`);
    return { spec: s, priority, purpose };
  });
}

/** Least outstanding work; ties go to the candidate the round-robin tick points at, then to list order. */
function leastLoaded(candidates: readonly StreamLoad[], tick: number): number {
  const n = candidates.length;
  let best = candidates[tick % n]!;
  for (let k = 1; k < n; k++) {
    const c = candidates[(tick + k) % n]!;
    if (c.outstanding < best.outstanding) best = c;
  }
  return best.index;
}

function suited(loads: readonly StreamLoad[], workload: WorkloadType): StreamLoad[] {
  const purposes = WORKLOAD_PURPOSES[workload];
  return loads.filter((l) => purposes.includes(l.purpose));
}

/**
 * The stream index for a request. A requested purpose narrows the candidates first (when the
 * pool has such a stream); then RoundRobin cycles, LoadBalanced takes the least outstanding
 * work, Priority takes the requested level (high by default), Workload takes the streams
 * assigned to the workload (or whose purpose suits it), least loaded first. A filter that
 * leaves nothing falls back to the candidates before it.
 */
export function chooseStream(
  strategy: PoolStrategy,
  loads: readonly StreamLoad[],
  request: StreamRequest,
  tick: number,
  assignments: WorkloadAssignments = {},
): number {
  // Exported, so checked: an unknown strategy returned undefined, and a bad tick, request or
  // workload crashed reading 'index' or 'includes' of undefined.
  checkChoice(strategy, POOL_STRATEGIES, 'chooseStream: strategy');
  if (!Array.isArray(loads))
    throw new TypeError(`chooseStream: loads must be an array, got ${loads === null ? 'null' : typeof loads}`);
  if (!Number.isSafeInteger(tick) || tick < 0)
    throw new RangeError(`chooseStream: tick must be an integer >= 0, got ${tick}`);
  if (typeof request !== 'object' || request === null)
    throw new TypeError(
      `chooseStream: request must be an object { purpose?, workload?, priority? }, got ${request === null ? 'null' : typeof request}`,
    );
  if (request.workload !== undefined) checkChoice(request.workload, WORKLOAD_TYPES, 'chooseStream: request.workload');
  return pickStream(strategy, loads, request, tick, assignments);
}

/** chooseStream without its checks, for a caller that made them once (StreamPool: the strategy when set, the request in acquire()): every acquire() runs it. */
export function pickStream(
  strategy: PoolStrategy,
  loads: readonly StreamLoad[],
  request: StreamRequest,
  tick: number,
  assignments: WorkloadAssignments = {},
): number {
  if (loads.length === 0) throw new RangeError('no streams to choose from');
  let candidates = loads;
  if (request.purpose !== undefined) {
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
      const workload = request.workload ?? 'Mixed';
      const assigned = assignments[workload];
      let matching = assigned ? candidates.filter((l) => assigned.includes(l.index)) : [];
      if (!matching.length) matching = suited(candidates, workload);
      return leastLoaded(matching.length ? matching : candidates, tick);
    }
  }
}

/**
 * optimize()'s strategy rule, in order: several workload types recorded whose average times
 * differ by more than 2x -> Workload (keep slow kinds off the fast kinds' streams); outstanding
 * work uneven across streams (max > 2 x mean + 1) -> LoadBalanced; otherwise RoundRobin.
 */
export function recommendStrategy(
  averages: ReadonlyMap<WorkloadType, number>,
  loads: readonly StreamLoad[],
): PoolStrategy {
  const times = [...averages.values()].filter((t) => t > 0);
  if (times.length >= 2 && Math.max(...times) > 2 * Math.min(...times)) return 'Workload';
  const outstanding = loads.map((l) => l.outstanding);
  const mean = outstanding.reduce((a, b) => a + b, 0) / Math.max(1, outstanding.length);
  if (outstanding.length && Math.max(...outstanding) > 2 * mean + 1) return 'LoadBalanced';
  return 'RoundRobin';
}

/**
 * optimize()'s assignment rule: the slowest recorded workload, if its average is more than 2x
 * the fastest's, gets the first half (rounded up) of the streams that suit it; every other
 * recorded workload keeps the streams that suit it minus that half, unless that would leave it
 * none. So short work is not queued behind long work on a shared stream. Nothing else is
 * assigned (those workloads keep the purpose rule). Deterministic: ties by workload name.
 */
export function assignWorkloads(
  averages: ReadonlyMap<WorkloadType, number>,
  loads: readonly StreamLoad[],
): WorkloadAssignments {
  const recorded = [...averages.entries()]
    .filter(([, t]) => t > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (recorded.length < 2) return {};
  const [slowest, slowTime] = recorded[0]!;
  const fastTime = recorded[recorded.length - 1]![1];
  if (!(slowTime > 2 * fastTime)) return {};
  const slowStreams = suited(loads, slowest).map((l) => l.index);
  if (slowStreams.length < 2) return {};
  const reserved = slowStreams.slice(0, Math.ceil(slowStreams.length / 2));
  const out: WorkloadAssignments = { [slowest]: reserved };
  for (const [workload] of recorded.slice(1)) {
    const rest = suited(loads, workload)
      .map((l) => l.index)
      .filter((i) => !reserved.includes(i));
    if (rest.length) out[workload] = rest;
  }
  return out;
}
