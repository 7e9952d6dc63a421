/**
 * The GPU work of a server as a plugin: its engine (null: no GPU), whether work can run now
 * (readiness), the loss of its context, and the waits that close() and a lost context end: the
 * handlers of GPU work (close() lets them finish) and the results they wait for (a lost context
 * answers them 503 at once). The job service of `/v1/jobs` is made here, over `require()`.
 * Decorates `gpu` and `jobs`.
 */
import type { JobEngineLike, EngineStats } from '../../engine/types.js';
import type { Precision } from '../../runtime/fft/precision.js';
import { HttpError, toHttpError } from '../errors.js';
import { localJobService, type JobService } from '../job-service.js';
import type { ServerMetrics } from '../metrics.js';
import type { CreateServerOptions, ServerLimits } from '../options.js';
import { sharedPlugin } from './shared-plugin.js';

/** The engine as `/v1/info` shows it. */
export interface EngineDescription {
  readonly label: string;
  readonly precision: Precision;
  readonly lanes: number;
  readonly devices: readonly number[];
}

/** What routes and the job runner ask of the GPU. */
export interface Gpu {
  /** The engine's precision (f32 without an engine): what a request's samples default to. */
  readonly precision: Precision;
  /** Set once close() is called: GPU work answers 503 `shutting_down`. */
  readonly closing: boolean;
  /** Set once the engine's context is lost: GPU work answers 503 `gpu_lost`. */
  readonly lost: boolean;
  /** The engine refuses non-finite samples itself (JobEngineLike.checksSamples): the door need not scan them. */
  readonly checksSamples: boolean;
  /** Why GPU work cannot run now, or null. */
  notReadyReason(): string | null;
  /** The engine, or a 503 saying why there is none to use. */
  require(): JobEngineLike;
  /** Runs a handler of GPU work so that close() waits for it; its errors go to the error handler. */
  track<T>(work: () => Promise<T>): Promise<T>;
  /** Waits for `result`, or the loss of the context (503) if that comes first; `onLost` is told of the loss. */
  untilLost<T>(result: Promise<T>, onLost?: (error: HttpError) => void): Promise<T>;
  /** The engine's label, precision, lanes and devices; null without an engine. */
  describe(): EngineDescription | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The GPU work of the server (plugins/gpu.ts). */
    readonly gpu: Gpu;
    /** Where `/v1/jobs` keeps its jobs (a JobService: in process, or a queue's). */
    readonly jobs: JobService;
  }
}

/** A wait that the loss of the GPU context ends at once (a synchronous job, a batch request). */
interface InFlight {
  reject(error: HttpError): void;
}

/** What the GPU work of a server is built from. */
export interface GpuParts {
  /** The engine (the server's fusing one); null: no GPU (GPU work answers 503). */
  readonly engine: JobEngineLike | null;
  readonly options: CreateServerOptions;
  readonly limits: ServerLimits;
  /** Where the job service counts finished jobs and registers its own series. */
  readonly metrics: ServerMetrics;
}

/** The GPU work of one server. */
export class GpuWork implements Gpu {
  readonly jobs: JobService;
  readonly #engine: JobEngineLike | null;
  readonly #options: CreateServerOptions;
  readonly #inFlight = new Set<InFlight>();
  /** Handlers running GPU work: close() waits for them. */
  readonly #handlers = new Set<Promise<unknown>>();
  /** Set once the context is lost. */
  #lostError: unknown = null;
  #closing = false;

  constructor(parts: GpuParts) {
    const { engine, options, limits, metrics } = parts;
    this.#engine = engine;
    this.#options = options;
    this.jobs = (options.jobs ?? localJobService)({
      requireEngine: () => this.require(),
      retention: limits.jobRetention,
      retryAfterS: limits.retryAfterS,
      idPrefix: options.jobIdPrefix ?? '',
      remote: options.remoteJobs,
      observe: (result) => metrics.observeJob('/v1/jobs', result),
      registry: metrics.registry,
    });
    engine?.lost.catch((error: unknown) => {
      if (this.#lostError !== null) return;
      this.#lostError = error ?? new Error('context lost');
      const answer = toHttpError(
        Object.assign(new Error(String((error as Error | undefined)?.message ?? error)), { sticky: true }),
        limits.retryAfterS,
      );
      for (const f of [...this.#inFlight]) f.reject(answer);
      this.jobs.failAll(answer);
      options.onLost?.(error);
    });
  }

  get precision(): Precision {
    return this.#engine?.precision ?? 'f32';
  }

  get checksSamples(): boolean {
    return this.#engine?.checksSamples === true;
  }

  get closing(): boolean {
    return this.#closing;
  }

  get lost(): boolean {
    return this.#lostError !== null;
  }

  notReadyReason(): string | null {
    if (this.#closing) return 'the server is shutting down';
    const jobs = this.jobs.notReadyReason?.() ?? null;
    if (jobs !== null) return jobs;
    // A front of a job queue (no engine here) is ready while its queue is: the workers hold the GPUs.
    if (this.#engine === null)
      return this.jobs.gpuHere ? (this.#options.unavailableReason ?? 'no GPU engine (no CUDA device or driver)') : null;
    if (this.#lostError !== null)
      return `the GPU context was lost (${this.#lostError instanceof Error ? this.#lostError.message : String(this.#lostError)}); this worker is being replaced`;
    return null;
  }

  require(): JobEngineLike {
    const reason = this.notReadyReason();
    if (reason !== null || this.#engine === null) {
      const lost = this.#lostError !== null;
      const retryable = this.#closing || lost;
      const why =
        reason ??
        this.#options.unavailableReason ??
        'this server has no GPU engine (a front of a job queue: only /v1/jobs runs here)';
      // Checked first, the request is valid: said so, lest a 503 for input like `kaiser,-8` read as a refusal of it.
      const message = retryable ? why : `the request is valid, but no GPU can run it here: ${why}`;
      throw new HttpError(503, lost ? 'gpu_lost' : this.#closing ? 'shutting_down' : 'gpu_unavailable', message, {
        retryable,
        ...(retryable ? { retryAfterS: 1 } : {}),
      });
    }
    return this.#engine;
  }

  track<T>(work: () => Promise<T>): Promise<T> {
    const run = work();
    this.#handlers.add(run);
    void run.then(
      () => this.#handlers.delete(run),
      () => this.#handlers.delete(run),
    );
    return run;
  }

  untilLost<T>(result: Promise<T>, onLost?: (error: HttpError) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: InFlight = {
        reject: (error) => {
          this.#inFlight.delete(entry);
          onLost?.(error);
          reject(error);
        },
      };
      this.#inFlight.add(entry);
      result.then(
        (value) => {
          this.#inFlight.delete(entry);
          resolve(value);
        },
        (error: unknown) => {
          this.#inFlight.delete(entry);
          reject(error);
        },
      );
    });
  }

  describe(): EngineDescription | null {
    const engine = this.#engine;
    return engine === null
      ? null
      : { label: engine.label, precision: engine.precision, lanes: engine.laneCount, devices: engine.devices };
  }

  /** The engine's statistics for the metrics; null without an engine or once its context is lost. */
  stats(): EngineStats | null {
    if (this.#engine === null || this.#lostError !== null) return null;
    try {
      return this.#engine.stats();
    } catch {
      return null;
    }
  }

  /** close() was called: readiness turns false and GPU work answers 503 `shutting_down` from now on. */
  beginClosing(): void {
    this.#closing = true;
  }

  /** Resolves once no handler of GPU work is running (those that start meanwhile included). */
  async handlersDone(): Promise<void> {
    while (this.#handlers.size > 0) await Promise.allSettled([...this.#handlers]);
  }
}

/**
 * Decorates `gpu` and `jobs`; a worker whose context is lost closes its keep-alive connections.
 * On close (fastify has stopped accepting): the handlers of GPU work finish, then every admitted
 * request is answered, then the kept jobs settle and the job service closes. Registered after
 * the batchers, so this runs before they close (onClose hooks run in reverse order of registration).
 */
export const gpuPlugin = sharedPlugin<{ gpu: GpuWork }>(
  async (app, { gpu }) => {
    app.decorate('gpu', gpu);
    app.decorate('jobs', gpu.jobs);
    // Callback style, not async: every answer passes here, and an async hook costs a promise each.
    app.addHook('onSend', (_request, reply, payload, done) => {
      // A worker that lost its context moves its keep-alive clients to a healthy worker.
      if (gpu.lost) reply.header('connection', 'close');
      done(null, payload);
    });
    app.addHook('onClose', async (instance) => {
      await gpu.handlersDone();
      await instance.shedding.untilIdle();
      await gpu.jobs.settled();
      await gpu.jobs.close?.();
    });
  },
  { name: 'tscuda-gpu', dependencies: ['tscuda-shedding', 'tscuda-batchers'] },
);
