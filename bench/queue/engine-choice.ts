/** The engine the queue bench's in-process runs (and, by the same choice, its workers) use. */
import type { JobEngineLike } from '../../src/engine/index.js';

/** What the queue bench runs its jobs on: a simulated GPU (`simNs` ns per sample), the FakeEngine (`fakeMs` ms a job), else the GPU. */
export interface BenchEngineChoice {
  simNs: number | undefined;
  simPoll: 'timer' | 'spin';
  fakeMs: number | undefined;
  /** Lanes of the simulated or real engine. */
  lanes: number;
}

/** The in-process engine of the queue bench, its name in the results, and the devices the workers may spread over. */
export async function makeBenchEngine(
  choice: BenchEngineChoice,
): Promise<{ engine: JobEngineLike; gpu: string; devices: number }> {
  const { simNs, simPoll, fakeMs, lanes } = choice;
  if (simNs !== undefined) {
    const { SimEngine } = await import('./sim-engine.js');
    // Each worker process simulates a GPU of its own, as two GPUs would be.
    return {
      engine: new SimEngine({ nsPerSample: simNs, lanes: lanes, label: 'in-process', poll: simPoll }),
      gpu: `cpu-sim-${simNs}ns`,
      devices: 2,
    };
  }
  if (fakeMs !== undefined) {
    const { FakeEngine } = await import('../../test/unit/server/fake-engine.js');
    return { engine: new FakeEngine({ delayMs: fakeMs, maxQueued: 1 << 20 }), gpu: `cpu-fake-${fakeMs}ms`, devices: 1 };
  }
  const [{ JobEngine }, { Device }] = await Promise.all([
    import('../../src/engine/index.js'),
    import('../../src/runtime/index.js'),
  ]);
  return {
    engine: new JobEngine({ device: 0, lanes: lanes, label: 'in-process' }),
    gpu: Device.get(0).name,
    devices: Device.count(),
  };
}
