/**
 * The shared setup of the EngineCore tests (engine-core-*.test.ts): random jobs and an engine over
 * fake lanes that knows one registered stage, 'supdem'.
 */
import { EngineCore } from '../../../src/engine/engine-core.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { FakeLane } from './fake-lane.js';

/** `n` fresh random samples in [-1, 1). */
export const rand = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
/** A valid stft job of two series of 32 samples, with `extra` fields. */
export const spec = (extra: Partial<JobSpec> = {}): JobSpec => ({
  data: rand(64),
  batch: 2,
  flags: ['stft'],
  ...extra,
});

/** An EngineCore that knows one registered stage, 'supdem'. */
class StagedCore extends EngineCore {
  protected override stageNames(): ReadonlySet<string> {
    return new Set(['supdem']);
  }
}

/** An engine over `lanes`, refusing past `maxQueued` queued jobs. */
export function engine(lanes: FakeLane[], maxQueued = 8): EngineCore {
  return new StagedCore({ runners: lanes, maxQueued, label: 'test' });
}
