/**
 * Which lane a job goes to, the engine core's one scheduling decision: a lane with room (fewer jobs
 * than its depth, none running alone; an empty one for a job that runs alone) and the least load in
 * samples, round robin among equals. CUDA-free.
 */
import { runsAlone, type LaneRunner } from './lane-runner.js';
import type { LaneStatsRecorder } from './stats.js';
import type { NormalizedJob } from './validate.js';

/** A lane as the engine core schedules it. */
export interface ScheduledLane {
  index: number;
  runner: LaneRunner;
  /** Jobs running on it (at most its runner's depth). */
  active: number;
  /** A job that runs alone (runsAlone) is on it: it takes nothing else until that one ends. */
  alone: boolean;
  /** Samples of the jobs running on it (the load measure across devices). */
  load: number;
  stats: LaneStatsRecorder;
}

/** The lane for `job` among `lanes`, the round robin starting at `cursor` (see the file's comment); undefined when none has room. */
export function pickLane(
  lanes: readonly ScheduledLane[],
  cursor: number,
  job: NormalizedJob,
): ScheduledLane | undefined {
  let best: ScheduledLane | undefined;
  const n = lanes.length;
  const alone = runsAlone(job);
  for (let k = 0; k < n; k++) {
    const lane = lanes[(cursor + k) % n]!;
    if (lane.alone || lane.active >= (alone ? 1 : (lane.runner.depth ?? 1))) continue;
    if (!best || lane.load < best.load) best = lane;
  }
  return best;
}
