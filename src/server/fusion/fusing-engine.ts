/**
 * The server's hook for fusing: an engine that is the server's engine with a JobFuser in front of
 * its submit(). Every route that submits jobs (the synchronous `/v1/<flag>` of each built-in
 * flag and the in-process `/v1/jobs`) goes through it with no change of its own; the
 * rest (statistics, pinned host memory, the lost context, close) is the engine's. CUDA-free.
 */
import type { EngineStats, Job, JobEngineLike, JobSpec } from '../../engine/types.js';
import { JobFuser, type JobFuserOptions } from './job-fuser.js';

/** `engine` with small requests fused (`maxBatchDelayMs` > 0), or `engine` itself when fusing is off (0) or there is no engine. */
export function fusingEngine<E extends JobEngineLike | null>(engine: E, options: JobFuserOptions): JobEngineLike | E {
  if (engine === null || options.maxBatchDelayMs === 0) return engine;
  return new FusingEngine(engine, options);
}

/** A JobEngineLike whose submit() fuses small requests of one shape; the rest is the wrapped engine's. */
class FusingEngine implements JobEngineLike {
  readonly #engine: JobEngineLike;
  readonly #fuser: JobFuser;
  readonly hostBuffer: JobEngineLike['hostBuffer'];
  readonly releaseHostBuffer: JobEngineLike['releaseHostBuffer'];

  constructor(engine: JobEngineLike, options: JobFuserOptions) {
    this.#engine = engine;
    this.#fuser = new JobFuser(engine, options);
    // Present exactly when the engine has them: the server pins its bodies only where the engine lends memory.
    this.hostBuffer = engine.hostBuffer?.bind(engine) as JobEngineLike['hostBuffer'];
    this.releaseHostBuffer = engine.releaseHostBuffer?.bind(engine);
  }

  get label(): string {
    return this.#engine.label;
  }
  get precision(): JobEngineLike['precision'] {
    return this.#engine.precision;
  }
  get laneCount(): number {
    return this.#engine.laneCount;
  }
  get devices(): readonly number[] {
    return this.#engine.devices;
  }
  get queued(): number | undefined {
    return this.#engine.queued;
  }
  get maxQueued(): number | undefined {
    return this.#engine.maxQueued;
  }
  /** The engine's: the fuser scans the requests it fuses, the engine every job it runs. */
  get checksSamples(): boolean {
    return this.#engine.checksSamples === true;
  }
  get lost(): Promise<never> {
    return this.#engine.lost;
  }

  submit(spec: JobSpec): Job;
  submit(spec: JobSpec, options: { wait: true; signal?: AbortSignal | undefined }): Promise<Job>;
  submit(spec: JobSpec, options?: { wait: true; signal?: AbortSignal | undefined }): Job | Promise<Job> {
    // A caller that waits for room in the engine's queue is not held in a window on top of it.
    if (options !== undefined) return this.#engine.submit(spec, options);
    return this.#fuser.submit(spec);
  }

  stats(): EngineStats {
    return this.#engine.stats();
  }

  async close(): Promise<void> {
    this.#fuser.close();
    await this.#engine.close();
  }
}
