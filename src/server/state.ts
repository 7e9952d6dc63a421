/**
 * The state of one server, in one object that every part (routes, shedding, the error handler,
 * close()) is given: no part keeps its own copy, and a new route reads what it needs here.
 */
import type { FastifyRequest } from 'fastify';
import type { JobEngineLike } from '../engine/types.js';
import type { BatchKind, BatchSubmitter } from './batch.js';
import { HttpError, type FailureReason } from './errors.js';
import type { JobService } from './job-service.js';
import type { ServerMetrics } from './metrics.js';
import type { CreateServerOptions, ServerLimits } from './options.js';
import type { ParamContext } from './params.js';
import type { AdmissionController } from './shedding/admission.js';
import type { IdleTrim } from './shedding/body-pool.js';
import type { BodyBudget } from './shedding/body-budget.js';
import type { BufferPool } from '../runtime/memory/buffer-pool.js';

/** A wait that the loss of the GPU context ends at once (a synchronous job, a batch request). */
export interface InFlight {
  reject(error: HttpError): void;
}

/** Everything a server's parts share. */
export interface ServerState {
  readonly options: CreateServerOptions;
  readonly limits: ServerLimits;
  /** The engine; null: no GPU (GPU work answers 503). */
  readonly engine: JobEngineLike | null;
  /** What parameter checks need beyond a request (flags of registered stages, timeout bounds). */
  readonly paramContext: ParamContext;
  readonly metrics: ServerMetrics;
  /** Pooled memory of binary bodies and results. */
  readonly bodies: BufferPool;
  /** Trims `bodies` back after a burst; touched by every binary body read. */
  readonly bodyTrim: IdleTrim;
  /** Bytes of request bodies held at once (limits.maxBodyBytesInFlight), by request. */
  readonly bodyBudget: BodyBudget;
  /** A request's pooled body, until a job takes it or the response is sent. */
  readonly pooledBodies: WeakMap<FastifyRequest, Buffer>;
  /** Why a request failed, for the failure counter. */
  readonly failureReasons: WeakMap<FastifyRequest, FailureReason>;
  readonly inFlight: Set<InFlight>;
  /** Handlers running GPU work: close() waits for them. */
  readonly handlers: Set<Promise<unknown>>;
  /** The batchers made so far, by `kind:dim`. */
  readonly batchers: Map<string, { kind: BatchKind; dim: number; submitter: BatchSubmitter<unknown> }>;
  /** Where `/v1/jobs` keeps its jobs. */
  jobs: JobService;
  /** Adaptive admission (load shedding), or null when off. */
  admission: AdmissionController | null;
  /** Set once the context is lost. */
  lostError: unknown;
  /** Set once close() is called. */
  closing: Promise<void> | null;
  /** POSTs admitted and not yet answered. */
  pending: number;
  /** Set while close() waits for the last admitted request's response. */
  onIdle: (() => void) | undefined;
  readonly version: string;
  readonly startedAt: number;
}

/** Why GPU work cannot run now, or null. */
export function notReadyReason(state: ServerState): string | null {
  if (state.closing !== null) return 'the server is shutting down';
  const jobs = state.jobs.notReadyReason?.() ?? null;
  if (jobs !== null) return jobs;
  // A front of a job queue (no engine here) is ready while its queue is: the workers hold the GPUs.
  if (state.engine === null)
    return state.jobs.gpuHere ? (state.options.unavailableReason ?? 'no GPU engine (no CUDA device or driver)') : null;
  if (state.lostError !== null)
    return `the GPU context was lost (${state.lostError instanceof Error ? state.lostError.message : String(state.lostError)}); this worker is being replaced`;
  return null;
}

/** The engine, or a 503 saying why there is none to use. */
export function requireGpu(state: ServerState): JobEngineLike {
  const reason = notReadyReason(state);
  if (reason !== null || state.engine === null) {
    const retryable = state.closing !== null || state.lostError !== null;
    const why =
      reason ??
      state.options.unavailableReason ??
      'this server has no GPU engine (a front of a job queue: only /v1/jobs runs here)';
    // Checked first, the request is valid: said so, lest a 503 for input like `kaiser,-8` read as a refusal of it.
    const message = retryable ? why : `the request is valid, but no GPU can run it here: ${why}`;
    throw new HttpError(
      503,
      state.lostError !== null ? 'gpu_lost' : state.closing !== null ? 'shutting_down' : 'gpu_unavailable',
      message,
      {
        retryable,
        ...(retryable ? { retryAfterS: 1 } : {}),
      },
    );
  }
  return state.engine;
}

/** Runs a handler of GPU work so that close() waits for it; its errors go to the error handler. */
export function track<T>(state: ServerState, work: () => Promise<T>): Promise<T> {
  const run = work();
  state.handlers.add(run);
  void run.then(
    () => state.handlers.delete(run),
    () => state.handlers.delete(run),
  );
  return run;
}

/** Waits for `result`, or the loss of the context (503) if that comes first. */
export function untilLost<T>(state: ServerState, result: Promise<T>, onLost?: (error: HttpError) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const entry: InFlight = {
      reject: (error) => {
        state.inFlight.delete(entry);
        onLost?.(error);
        reject(error);
      },
    };
    state.inFlight.add(entry);
    result.then(
      (value) => {
        state.inFlight.delete(entry);
        resolve(value);
      },
      (error: unknown) => {
        state.inFlight.delete(entry);
        reject(error);
      },
    );
  });
}
