/**
 * The server's errors: one class carrying the HTTP status, a stable machine code, the field at
 * fault and whether a retry may succeed, plus the mapping of engine and batcher errors onto it.
 * CUDA-free: the engine's errors are matched by `name`; only its CUDA-free errors module is imported.
 */
import { isStickyError } from '../engine/errors.js';

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

  constructor(
    statusCode: number,
    code: string,
    message: string,
    options: { field?: string | undefined; retryable?: boolean | undefined; retryAfterS?: number | undefined; reason?: FailureReason | undefined; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.statusCode = statusCode;
    this.code = code;
    this.field = options.field;
    this.retryable = options.retryable ?? false;
    this.retryAfterS = options.retryAfterS;
    this.reason =
      options.reason ?? (statusCode === 429 ? 'REJECTED' : statusCode === 504 ? 'TIMEOUT' : statusCode < 500 ? 'INVALID' : statusCode === 503 ? 'UNAVAILABLE' : 'BACKEND');
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

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : '';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * True when the error (or one of its causes) is a sticky CUDA error: the engine's own test (a
 * ContextLostError or EngineLostError carries the sticky error as its cause).
 */
export const isContextLoss = isStickyError;

/**
 * Maps what `engine.submit()`, `job.result` or a batcher threw onto an HttpError.
 * `retryAfterS` is what a 429 advertises.
 */
export function toHttpError(error: unknown, retryAfterS: number): HttpError {
  if (error instanceof HttpError) return error;
  const name = errorName(error);
  const message = messageOf(error);
  if (isContextLoss(error)) {
    return new HttpError(503, 'gpu_lost', `the GPU context of this worker was lost (${message}); retry: a replacement worker takes over`, {
      retryable: true,
      retryAfterS: 1,
      cause: error,
    });
  }
  switch (name) {
    case 'JobValidationError': {
      const field = (error as { field?: unknown }).field;
      return new HttpError(400, 'invalid_field', message, { ...(typeof field === 'string' ? { field } : {}), cause: error });
    }
    case 'EngineFullError':
    case 'BatcherFullError':
      return new HttpError(429, 'queue_full', `the queue is full (${message}); retry after ${retryAfterS} s`, { retryable: true, retryAfterS, cause: error });
    case 'EngineClosedError':
    case 'BatcherClosedError':
      return new HttpError(503, 'shutting_down', `the server is shutting down (${message})`, { retryable: true, retryAfterS: 1, cause: error });
    case 'JobCancelledError':
    case 'AbortError':
      return new HttpError(499, 'cancelled', `the job was cancelled (${message})`, { reason: 'CANCELED', cause: error });
    case 'TypeError':
    case 'RangeError':
      return new HttpError(400, 'invalid_field', message, { cause: error });
    default:
      if (/time(d)? ?out/i.test(name) || /timed out/i.test(message)) {
        return new HttpError(504, 'timeout', `the job did not finish within its timeout (${message})`, { cause: error });
      }
      return new HttpError(500, 'job_failed', message, { reason: 'BACKEND', cause: error });
  }
}
