/**
 * One fusion window: requests of one key gathered until the window's delay runs out or it is full,
 * then submitted to the engine as one job whose result is cut back into each request's rows. A
 * request that settles on its own (timeout, cancel) leaves the window; once submitted, it stays in
 * the job (its rows are computed) but gets no share, and a job still queued with no request left
 * is cancelled. CUDA-free.
 */
import { JobValidationError, ResultTooLargeError } from '../../engine/errors.js';
import type { Job, JobEngineLike, JobResult, JobSpec } from '../../engine/types.js';
import { requestResult, stackSamples, stackedOutputs, type FusionMemory } from './fused-arrays.js';
import type { FusedRequest, RequestHolder } from './fused-request.js';

/** Requests of one key waiting to run as one engine job. */
export class FusionWindow implements RequestHolder {
  readonly key: string;
  /** When it is submitted at the latest (performance.now() ms). */
  readonly deadline: number;
  /** Its requests, in the order their series are stacked. */
  readonly requests: FusedRequest[] = [];
  /** Series, samples and engine-allocated result bytes of its requests together (what the fuser's bounds limit). */
  rows = 0;
  samples = 0;
  resultBytes = 0;
  #job: Job | null = null;
  readonly #onEmpty: (window: FusionWindow) => void;

  /** @param onEmpty called when the last request leaves before submission (the fuser forgets the window). */
  constructor(key: string, deadline: number, onEmpty: (window: FusionWindow) => void) {
    this.key = key;
    this.deadline = deadline;
    this.#onEmpty = onEmpty;
  }

  /** Takes `request` in. */
  add(request: FusedRequest): void {
    this.requests.push(request);
    request.holder = this;
    this.rows += request.rows;
    this.samples += request.data.length;
    this.resultBytes += request.resultBytes;
  }

  /** A request settled on its own: it leaves a window still gathering; a submitted job still queued with nobody left to answer is cancelled. */
  settledAlone(request: FusedRequest): void {
    if (this.#job === null) {
      // Still gathering: it leaves, and its series never reach the GPU.
      const i = this.requests.indexOf(request);
      if (i < 0) return;
      this.requests.splice(i, 1);
      this.rows -= request.rows;
      this.samples -= request.data.length;
      this.resultBytes -= request.resultBytes;
      if (this.requests.length === 0) this.#onEmpty(this);
      return;
    }
    // Submitted: the job runs for the others; nobody is left to answer while it is still queued.
    if (this.#job.status === 'queued' && this.requests.every((r) => r.settled)) this.#job.cancel();
  }

  /**
   * Submits the window as one engine job (a lone request: its own spec and arrays, no copy) and
   * answers each request from its result, or all of them with the same error; `onSubmitted` hears
   * the number of requests of each engine job submitted. An engine that refuses the stacked job for
   * its size (ResultTooLargeError, or a JobValidationError: a lane holds fewer frames of more
   * series) gets each request alone instead, so each has its own verdict.
   */
  submit(engine: JobEngineLike, memory: FusionMemory | undefined, onSubmitted?: (requests: number) => void): void {
    const requests = this.requests;
    if (requests.length === 0) return;
    const first = requests[0]!;
    const alone = requests.length === 1;
    const samples = alone
      ? { array: first.data, release: () => undefined }
      : stackSamples(
          requests.map((r) => r.data),
          memory,
        );
    const outputs = alone
      ? { into: first.into, release: () => undefined }
      : stackedOutputs(
          requests.map((r) => r.into),
          memory,
        );
    // The first request's parameters are every request's (one key); deadlines and cancellation stay per request.
    const spec: JobSpec = {
      ...first.spec,
      data: samples.array,
      dtype: first.dtype,
      batch: this.rows,
      into: outputs.into,
      timeoutMs: undefined,
      signal: undefined,
    };
    let job: Job;
    try {
      job = engine.submit(spec);
    } catch (error) {
      samples.release();
      outputs.release();
      if (!alone && (error instanceof ResultTooLargeError || error instanceof JobValidationError)) {
        for (const r of requests) {
          const single = new FusionWindow(this.key, this.deadline, () => undefined);
          single.add(r);
          single.submit(engine, memory, onSubmitted);
        }
        return;
      }
      for (const r of requests) r.fail(error);
      return;
    }
    onSubmitted?.(requests.length);
    this.#job = job;
    for (const r of requests) r.submitted(job, this);
    const answered = job.result.then(
      (result) => this.#answer(result),
      (error: unknown) => {
        for (const r of requests) r.fail(error);
      },
    );
    // The stacked arrays are the engine's until its job is released, and ours until each share is taken.
    void Promise.all([answered, job.released]).then(() => {
      samples.release();
      outputs.release();
    });
  }

  /** Each request still waiting gets its rows of `result`, in the order the series were stacked. */
  #answer(result: JobResult): void {
    let start = 0;
    for (const r of this.requests) {
      if (!r.settled) {
        let own: JobResult;
        try {
          own =
            this.requests.length === 1 ? { ...result, id: r.id } : requestResult(result, start, r.rows, r.into, r.id);
        } catch (error) {
          // A result not shaped as its flags say: this request fails, the others still get theirs.
          r.fail(error);
          start += r.rows;
          continue;
        }
        r.answer(own);
      }
      start += r.rows;
    }
  }
}
