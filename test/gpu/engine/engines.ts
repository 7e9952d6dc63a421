/**
 * Engines a GPU test file makes, closed after its tests (afterAll), and the bands the engine tests
 * share.
 */
import { afterAll } from 'vitest';
import { JobEngine, type JobEngineOptions } from '../../../src/engine/index.js';

/** A factory of engines labelled `label`, each closed (drained) once the file's tests are done. */
export function engineFactory(label: string): (options?: JobEngineOptions) => JobEngine {
  const engines: JobEngine[] = [];
  afterAll(async () => {
    for (const e of engines) await e.close();
  });
  return (options = {}) => {
    const e = new JobEngine({ label, ...options });
    engines.push(e);
    return e;
  };
}

/** Three bands over 0..250 Hz (fs 500). */
export const BANDS = [
  [0, 40],
  [40, 130],
  [130, 250],
] as const;
