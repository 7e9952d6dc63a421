/**
 * The job engine's named errors. CUDA-free: the server maps them to HTTP statuses by name.
 */
import { isStickyError } from '../ffi/sticky.js';
import { clip, clipMessage } from '../runtime/value-checks.js';

export { isStickyError } from '../ffi/sticky.js';

/** A job description was refused at submit (nothing was queued); `field` names the bad field. */
export class JobValidationError extends Error {
  override readonly name: string = 'JobValidationError';
  /** The JobSpec field at fault, e.g. `batch`, `bands[1]`, `flags[0]`. */
  readonly field: string;
  /** What is wrong, without the field (a server names the field as its request spells it). */
  readonly detail: string;

  constructor(field: string, message: string) {
    // A bad value or key may be megabytes long (a request body's): quoted, never echoed whole.
    const shortField = clip(field);
    const detail = clipMessage(message);
    super(`job.${shortField}: ${detail}`);
    this.field = shortField;
    this.detail = detail;
  }
}

/**
 * The job's result would exceed `maxResultBytes`: a JobEngine's (estimated at submit, from the
 * arrays it would allocate), a JobQueue client's (estimated at submit) or a queue worker's
 * (measured). Nothing ran.
 */
export class ResultTooLargeError extends Error {
  override readonly name: string = 'ResultTooLargeError';
  /** Bytes the result needs (estimated or measured). */
  readonly bytes: number;
  /** The limit it was checked against. */
  readonly limit: number;

  constructor(bytes: number, limit: number, when: 'estimated at submit' | 'measured by the worker') {
    super(
      `result: ${bytes} bytes (${when}) exceed maxResultBytes = ${limit}; ask for fewer results (bandWaves: false, fewer previewBins or freqs) or split the job into smaller batches`,
    );
    this.bytes = bytes;
    this.limit = limit;
  }
}

/** `submit()` found `maxQueued` jobs already waiting. */
export class EngineFullError extends Error {
  override readonly name: string = 'EngineFullError';
  readonly maxQueued: number;

  constructor(engine: string, maxQueued: number) {
    super(
      `engine "${engine}" is full: ${maxQueued} jobs are queued (maxQueued); retry later or submit with { wait: true }`,
    );
    this.maxQueued = maxQueued;
  }
}

/** The engine was closed: no new jobs (or a wait for room ended by close()). */
export class EngineClosedError extends Error {
  override readonly name: string = 'EngineClosedError';

  constructor(engine: string) {
    super(`engine "${engine}" is closed`);
  }
}

/** The engine's CUDA context was lost to a sticky error; `cause` is that error. */
export class EngineLostError extends Error {
  override readonly name: string = 'EngineLostError';

  constructor(engine: string, cause: unknown) {
    super(`engine "${engine}" lost its GPU context: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/** The job was cancelled (cancel() or its AbortSignal) before it started. */
export class JobCancelledError extends Error {
  override readonly name: string = 'JobCancelledError';
  readonly jobId: number;

  constructor(jobId: number, reason?: unknown) {
    super(
      `job ${jobId} was cancelled before it ran${reason instanceof Error ? `: ${reason.message}` : reason !== undefined ? `: ${String(reason)}` : ''}`,
      reason === undefined ? undefined : { cause: reason },
    );
    this.jobId = jobId;
  }
}

/** The job did not finish within its `timeoutMs`. A job already on the GPU finishes there; its result is dropped. */
export class JobTimeoutError extends Error {
  override readonly name: string = 'JobTimeoutError';
  readonly jobId: number;
  readonly timeoutMs: number;

  constructor(jobId: number, timeoutMs: number, wasRunning: boolean) {
    super(`job ${jobId} did not finish within ${timeoutMs} ms (it was ${wasRunning ? 'running' : 'still queued'})`);
    this.jobId = jobId;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A job failed while it ran: which job, on which lane and device, in which stage (`h2d`, `detrend`,
 * `fft`, `mask`, `inverse`, `cycles`, `wavelet`, a registered stage's name, `d2h`, `gpu`), and why
 * (`cause`; a CudaError keeps its status, here as `status` too).
 */
export class JobError extends Error {
  override readonly name: string = 'JobError';
  readonly jobId: number;
  readonly lane: number;
  readonly device: number;
  readonly stage: string;

  constructor(jobId: number, lane: number, device: number, stage: string, cause: unknown) {
    super(
      `job ${jobId} failed on lane ${lane} (device ${device}) in stage "${stage}": ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.jobId = jobId;
    this.lane = lane;
    this.device = device;
    this.stage = stage;
  }

  /** The CUDA status name of the cause (`CUDA_ERROR_ILLEGAL_ADDRESS`), when it was a CUDA error. */
  get status(): string | undefined {
    const s = (this.cause as { status?: unknown } | undefined)?.status;
    return typeof s === 'string' ? s : undefined;
  }

  /** The cause broke the CUDA context: the engine is lost. */
  get sticky(): boolean {
    return isStickyError(this.cause);
  }
}
