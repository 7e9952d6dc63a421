/**
 * The server's errors: one class carrying the HTTP status, a stable machine code, the field at
 * fault and whether a retry may succeed, plus the mapping of engine and batcher errors onto it.
 * CUDA-free: the engine's and the batchers' errors are matched by class (their CUDA-free errors modules).
 */
import { randomUUID } from 'node:crypto';
import {
  EngineClosedError,
  EngineFullError,
  JobCancelledError,
  JobError,
  JobTimeoutError,
  JobValidationError,
  isStickyError,
} from '../engine/errors.js';
import { parameterOfField } from '../engine/parameters.js';
import {
  BatcherClosedError,
  BatcherDispatchError,
  BatcherFullError,
  BatcherTimeoutError,
} from '../pipeline/batching/errors.js';
import {
  QueueFullError,
  QueueJobCancelledError,
  QueueJobError,
  QueueUnavailableError,
  ResultTooLargeError,
  UnknownQueueJobError,
} from '../queue/errors.js';
import { clip, clipMessage, MAX_QUOTED_CHARS } from '../runtime/value-checks.js';
import { isCudaUnavailable, noDriverReason } from '../runtime/unavailable.js';

/** Why a request failed, in Triton's vocabulary (`nv_inference_request_failure{reason}`). */
export type FailureReason = 'REJECTED' | 'CANCELED' | 'TIMEOUT' | 'INVALID' | 'UNAVAILABLE' | 'BACKEND' | 'OTHER';

/** A request that ends in an error response: what the client gets as `{ error: {...} }`. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  /** The HTTP status (4xx or 5xx). */
  readonly statusCode: number;
  /** Stable machine-readable code, e.g. `invalid_field`, `queue_full`, `gpu_lost`. */
  readonly code: string;
  /** The request field at fault (body property, query parameter or header), when one is. */
  readonly field: string | undefined;
  /** True when the same request may succeed later (503 during a restart, 429). */
  readonly retryable: boolean;
  /** Seconds for a `Retry-After` header, when one is sent. */
  readonly retryAfterS: number | undefined;
  /** The Triton failure reason counted in the metrics. */
  readonly reason: FailureReason;
  /** A 500's id, logged with the error it stands for. */
  readonly correlationId: string | undefined;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    options: {
      field?: string | undefined;
      retryable?: boolean | undefined;
      retryAfterS?: number | undefined;
      reason?: FailureReason | undefined;
      cause?: unknown;
      correlationId?: string | undefined;
    } = {},
  ) {
    super(clipMessage(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.statusCode = statusCode;
    this.code = code;
    this.field = options.field;
    this.retryable = options.retryable ?? false;
    this.retryAfterS = options.retryAfterS;
    this.correlationId = options.correlationId;
    this.reason =
      options.reason ??
      (statusCode === 429
        ? 'REJECTED'
        : statusCode === 504
          ? 'TIMEOUT'
          : statusCode < 500
            ? 'INVALID'
            : statusCode === 503
              ? 'UNAVAILABLE'
              : 'BACKEND');
  }

  /** The JSON body of the error response. */
  toJSON(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message, retryable: this.retryable };
    if (this.field !== undefined) error.field = this.field;
    return { error };
  }
}

/** The body of every error response. */
export interface ErrorBody {
  error: { code: string; message: string; field?: string | undefined; retryable: boolean };
}

/** A 400 naming the bad field. */
export function invalidField(field: string, message: string): HttpError {
  return new HttpError(400, 'invalid_field', `${field}: ${message}`, { field });
}

/** A JSON number the samples' type cannot hold (1e39 as f32; 1e400, which JSON.parse reads as Infinity): refused, never stored as Infinity. */
export function sampleOutOfRange(field: string, v: number, dtype: 'f32' | 'f64'): HttpError {
  return invalidField(
    field,
    `${v} is outside the range of ${dtype} samples (finite, magnitude at most ${dtype === 'f32' ? '3.4e38' : '1.8e308'})`,
  );
}

/**
 * True when the error (or one of its causes) is a sticky CUDA error: the engine's own test (a
 * ContextLostError or EngineLostError carries the sticky error as its cause).
 */
export const isContextLoss = isStickyError;

/** A JobSpec field as a request spells it (`timeoutMs` -> `timeout`, `data` -> `signal`), from the table of job parameters. */
export function requestField(field: string): string {
  const head = /^[A-Za-z]+/.exec(field)?.[0] ?? '';
  const name = head === 'data' ? 'signal' : (parameterOfField(head)?.name ?? head);
  return name + field.slice(head.length);
}

/** What each known error class means to a client. `retryAfterS` is what a 429 advertises. */
type ErrorMapping = readonly [new (...args: never[]) => Error, (error: Error, retryAfterS: number) => HttpError];

/** The one table from error classes to HTTP answers; the first class the error is an instance of wins. */
const ERROR_STATUS: readonly ErrorMapping[] = [
  [
    JobValidationError,
    (e) => {
      const v = e as JobValidationError;
      const field = requestField(v.field);
      return new HttpError(400, 'invalid_field', `${field}: ${v.detail}`, { field, cause: e });
    },
  ],
  // The engine's own message advises library callers ({ wait: true }); an HTTP client gets the count and the retry.
  [
    EngineFullError,
    (e, s) =>
      new HttpError(
        429,
        'queue_full',
        `the queue is full (${(e as EngineFullError).maxQueued} jobs are queued); retry after ${s} s`,
        {
          retryable: true,
          retryAfterS: s,
          cause: e,
        },
      ),
  ],
  [
    BatcherFullError,
    (e, s) =>
      new HttpError(429, 'queue_full', `the queue is full (${e.message}); retry after ${s} s`, {
        retryable: true,
        retryAfterS: s,
        cause: e,
      }),
  ],
  [EngineClosedError, (e) => shuttingDown(e)],
  [BatcherClosedError, (e) => shuttingDown(e)],
  [
    JobCancelledError,
    (e) => new HttpError(499, 'cancelled', `the job was cancelled (${e.message})`, { reason: 'CANCELED', cause: e }),
  ],
  [
    JobTimeoutError,
    (e) =>
      new HttpError(
        504,
        'timeout',
        `the job did not finish within its timeout of ${(e as JobTimeoutError).timeoutMs} ms (${e.message})`,
        { field: 'timeout', cause: e },
      ),
  ],
  [
    BatcherTimeoutError,
    (e) => new HttpError(504, 'timeout', `the items were not computed in time (${e.message})`, { cause: e }),
  ],
  [JobError, (e) => new HttpError(500, 'job_failed', e.message, { reason: 'BACKEND', cause: e })],
  [BatcherDispatchError, (e) => new HttpError(500, 'job_failed', e.message, { reason: 'BACKEND', cause: e })],
  // The job queue (serve --redis): Redis away, a result over the submitter's limit, a job's own failure on a worker.
  [
    QueueUnavailableError,
    (e, s) => new HttpError(503, 'queue_unavailable', e.message, { retryable: true, retryAfterS: s, cause: e }),
  ],
  [
    QueueFullError,
    (e, s) => new HttpError(429, 'queue_full', e.message, { retryable: true, retryAfterS: s, cause: e }),
  ],
  [
    ResultTooLargeError,
    (e) => new HttpError(413, 'result_too_large', `signal: ${e.message}`, { field: 'signal', cause: e }),
  ],
  [
    QueueJobCancelledError,
    (e) => new HttpError(499, 'cancelled', `the job was cancelled (${e.message})`, { reason: 'CANCELED', cause: e }),
  ],
  [UnknownQueueJobError, (e) => new HttpError(404, 'unknown_job', `id: ${e.message}`, { field: 'id', cause: e })],
  [QueueJobError, (e) => new HttpError(500, 'job_failed', e.message, { reason: 'BACKEND', cause: e })],
];

function shuttingDown(e: Error): HttpError {
  return new HttpError(503, 'shutting_down', `the server is shutting down (${e.message})`, {
    retryable: true,
    retryAfterS: 1,
    cause: e,
  });
}

/**
 * Maps what `engine.submit()`, `job.result` or a batcher threw onto an HttpError, by its class.
 * Anything unknown (a TypeError from a bug included) is a 500 `internal` whose message names no
 * internals, only a correlation id; the error handler logs the error under that id.
 */
export function toHttpError(error: unknown, retryAfterS: number): HttpError {
  if (error instanceof HttpError) return error;
  if (isContextLoss(error)) {
    return new HttpError(
      503,
      'gpu_lost',
      `the GPU context of this worker was lost (${messageOf(error)}); retry: a replacement worker takes over`,
      {
        retryable: true,
        retryAfterS: 1,
        cause: error,
      },
    );
  }
  // No CUDA driver, found where a GPU part is first built on a request (a batcher factory): the
  // answer of a server without a GPU (plugins/gpu.ts).
  if (isCudaUnavailable(error))
    return new HttpError(503, 'gpu_unavailable', noDriverReason(error), { retryable: false, cause: error });
  if (error instanceof Error) {
    for (const [type, answer] of ERROR_STATUS) if (error instanceof type) return answer(error, retryAfterS);
    // An AbortSignal's own reason (a DOMException): the request's wait was aborted.
    if (typeof DOMException !== 'undefined' && error instanceof DOMException && error.name === 'AbortError')
      return new HttpError(499, 'cancelled', 'the request was cancelled', { reason: 'CANCELED', cause: error });
  }
  return internalError(error);
}

/** A 500 for an unexpected error: a correlation id in the message and in `correlationId`, nothing of the error itself. */
export function internalError(error: unknown): HttpError {
  const id = randomUUID();
  return new HttpError(500, 'internal', `internal error (correlation id ${id}); the server logged it`, {
    reason: 'OTHER',
    cause: error,
    correlationId: id,
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
