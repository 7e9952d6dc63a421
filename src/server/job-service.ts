/**
 * Where the asynchronous jobs of `/v1/jobs` live. The route talks only to this interface, so a
 * scale-out queue (Redis) replaces the in-process one without touching the route. The in-process
 * one runs jobs on this server's engine and keeps them in a bounded JobStore.
 */
import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { JobEngineLike, JobResult, JobSpec } from '../engine/types.js';
import { HttpError, toHttpError, type ErrorBody } from './errors.js';
import { JobStore, type JobRecord, type JobRetention } from './jobs.js';

/** An asynchronous job as `GET /v1/jobs/:id` shows it. */
export interface JobView {
  id: string;
  status: string;
  result?: JobResult | undefined;
  error?: ErrorBody['error'] | undefined;
}

/** A response computed for another process (DELETE forwarded within a cluster). */
export interface JobAnswer {
  statusCode: number;
  body: Record<string, unknown>;
}

/** Where jobs of other workers are looked up (the cluster's IPC); undefined when unknown there too. */
export interface RemoteJobs {
  /** The job as its owner's GET shows it; undefined when no worker knows it. */
  get(id: string): Promise<JobView | undefined>;
  /** DELETE of the job by its owner; undefined when no worker knows it. */
  delete(id: string): Promise<JobAnswer | undefined>;
}

/** A job submitted through `POST /v1/jobs`: its id and first status. */
export interface SubmittedJob {
  id: string;
  status: string;
}

/** What `/v1/jobs` needs from where jobs are kept. */
export interface JobService {
  /** Whether jobs run on this server's engine (a POST needs a ready GPU here); false for a queue whose workers run them elsewhere. */
  readonly gpuHere: boolean;
  /**
   * Whether submit() checks the samples for NaN and infinities itself, in its own precision (a
   * queue's submit is a door of its own): the server then leaves a /v1/jobs body's scan to it.
   */
  readonly scansSamples: boolean;
  /** Why this service cannot take jobs now (null when it can); a server without an engine is ready when its service is. */
  notReadyReason?(): string | null;
  /** Queues a validated job; throws what engine.submit() throws (the error handler maps it). */
  submit(spec: JobSpec, hooks: { onSubmitted(job: { released: Promise<unknown> }): void }): Promise<SubmittedJob>;
  /** The job as GET shows it; undefined when unknown. */
  view(id: string): Promise<JobView | undefined>;
  /** DELETE of the job: cancels a queued one, forgets a finished one; undefined when unknown. */
  delete(id: string): Promise<JobAnswer | undefined>;
  /** Rejects every unfinished job with `error` (the context was lost). */
  failAll(error: HttpError): void;
  /** Resolves once every unfinished job has settled. */
  settled(): Promise<void>;
  /** Frees what the service owns (a queue's connections), after the server has closed. */
  close?(): Promise<void>;
  /** This process's job as GET shows it, for other workers of a cluster (synchronous); undefined when unknown here. */
  localView(id: string): JobView | undefined;
  /** DELETE of this process's job, for other workers of a cluster (synchronous); undefined when unknown here. */
  localDelete(id: string): JobAnswer | undefined;
}

/** What a JobService is made from. */
export interface JobServiceContext {
  /** The engine, once the server's gpu.require() (plugins/gpu.ts) has said it can run work. */
  requireEngine(): JobEngineLike;
  retention: JobRetention;
  retryAfterS: number;
  /** Prefix of the ids (a cluster worker's), for routing within a cluster. */
  idPrefix: string;
  /** Other workers' jobs, asked when this process does not know an id. */
  remote: RemoteJobs | undefined;
  /** Called with every finished job's result (metrics). */
  observe(result: JobResult): void;
  /** The server's metrics registry (a service may register its own series there). */
  registry?: Registry | undefined;
}

/** Random bytes in a job id: 128 bits, so no client can guess another's job. */
const ID_RANDOM_BYTES = 16;
/** The length of a job id's random part (base64url of ID_RANDOM_BYTES). */
export const JOB_ID_RANDOM_CHARS = Math.ceil((ID_RANDOM_BYTES * 4) / 3);

/** A job id: the routing prefix, then 128 random bits (base64url). */
export function newJobId(prefix: string): string {
  return `${prefix}${randomBytes(ID_RANDOM_BYTES).toString('base64url')}`;
}

/**
 * The in-process JobService: the engine runs the job; a bounded JobStore keeps it. The engine that
 * `requireEngine()` gives is the server's fusing one (fusion/fusing-engine.ts) unless
 * `maxBatchDelayMs` is 0: a record's job is then its request's share of a fused engine job, with
 * its own status, cancel() and released memory.
 */
export function localJobService(context: JobServiceContext): JobService {
  const jobs = new JobStore(context.retention);
  const statusOf = (record: JobRecord): string =>
    record.finishedAt === undefined && record.job !== null ? record.job.status : record.status;

  const localView = (id: string): JobView | undefined => {
    const record = jobs.get(id);
    if (record === undefined) return undefined;
    const view: JobView = { id: record.id, status: statusOf(record) };
    if (record.result !== undefined) view.result = record.result;
    if (record.error !== undefined) view.error = record.error.toJSON().error;
    return view;
  };

  const localDelete = (id: string): JobAnswer | undefined => {
    const record = jobs.get(id);
    if (record === undefined) return undefined;
    if (record.finishedAt !== undefined) {
      jobs.delete(record.id);
      return { statusCode: 200, body: { id: record.id, status: record.status, deleted: true } };
    }
    if (record.job !== null && record.job.cancel()) {
      jobs.finish(record, {
        error: new HttpError(499, 'cancelled', 'cancelled by DELETE', { reason: 'CANCELED' }),
        status: 'cancelled',
      });
      return { statusCode: 200, body: { id: record.id, status: 'cancelled', deleted: false } };
    }
    return {
      statusCode: 409,
      body: {
        ...new HttpError(
          409,
          'job_running',
          `id: job ${record.id} is running and cannot be cancelled; it finishes on its own`,
          { field: 'id' },
        ).toJSON(),
      },
    };
  };

  return {
    gpuHere: true,
    scansSamples: false,
    async submit(spec, hooks) {
      const job = context.requireEngine().submit(spec);
      hooks.onSubmitted(job);
      const id = newJobId(context.idPrefix);
      let settle!: () => void;
      const record: JobRecord = {
        id,
        job,
        submittedAt: Date.now(),
        status: 'queued',
        finishedAt: undefined,
        result: undefined,
        error: undefined,
        settled: new Promise<void>((resolve) => (settle = resolve)),
      };
      jobs.add(record);
      // The engine owns the deadline (spec.timeoutMs): the result settles in time either way.
      job.result.then(
        (result) => {
          context.observe(result);
          jobs.finish(record, { result });
          settle();
        },
        (error: unknown) => {
          const answer = toHttpError(error, context.retryAfterS);
          jobs.finish(record, { error: answer, status: answer.code === 'cancelled' ? 'cancelled' : 'error' });
          settle();
        },
      );
      return { id, status: 'queued' };
    },
    async view(id) {
      return localView(id) ?? (context.remote === undefined ? undefined : await context.remote.get(id));
    },
    async delete(id) {
      return localDelete(id) ?? (context.remote === undefined ? undefined : await context.remote.delete(id));
    },
    failAll(error) {
      for (const r of jobs.unfinished) jobs.finish(r, { error, status: 'error' });
    },
    async settled() {
      await Promise.allSettled(jobs.unfinished.map((r) => r.settled));
    },
    localView,
    localDelete,
  };
}
