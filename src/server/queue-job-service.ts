/**
 * The asynchronous jobs of `/v1/jobs` over the Redis queue (`tscuda serve --redis`): the one jobs
 * route (routes/jobs.ts) talks to this JobService as it does to the in-process one, so requests,
 * parameters, status codes and error shapes are the same, but any server instance on any host
 * answers any job id and the server needs no GPU: `tscuda worker` processes run the jobs. The
 * samples are in Redis once `submit` resolves, so the request's body memory is free from then on.
 */
import { registerQueueMetrics, type JobQueue, type SubmitOptions } from '../queue/index.js';
import { HttpError, toHttpError } from './errors.js';
import type { JobService, JobServiceContext } from './job-service.js';

/** Options of queueJobService(). */
export interface QueueJobServiceOptions {
  /** Options of every submit (priority, attempts). */
  submit?: SubmitOptions | undefined;
  /** close() of the server also closes the queue (tscuda serve --redis); default false: the caller owns it. */
  ownsQueue?: boolean | undefined;
}

/** Why the queue cannot take jobs now, or null when it can. */
export function queueNotReadyReason(queue: JobQueue): string | null {
  return queue.reachable
    ? null
    : `the job queue's Redis (${queue.where}) is not reachable (down, or no answer within its commandTimeoutMs); retrying`;
}

/**
 * A JobService over `queue` for `createServer({ jobs: queueJobService(queue) })`. The caller owns
 * the queue (close it after the server).
 */
export function queueJobService(
  queue: JobQueue,
  options: QueueJobServiceOptions = {},
): (context: JobServiceContext) => JobService {
  return (context) => {
    // Queue depth, waiting time and outcomes on the server's /metrics.
    if (context.registry !== undefined) registerQueueMetrics(context.registry, queue);
    return service(queue, options, context);
  };
}

function service(queue: JobQueue, options: QueueJobServiceOptions, context: JobServiceContext): JobService {
  return {
    gpuHere: false,
    scansSamples: true,
    close: async () => {
      if (options.ownsQueue === true) await queue.close();
    },
    notReadyReason: () => queueNotReadyReason(queue),
    async submit(spec, hooks) {
      const handle = await queue.submit(spec, options.submit);
      // The samples are stored in Redis: the request's (pooled) body can go back now.
      hooks.onSubmitted({ released: Promise.resolve() });
      return { id: handle.id, status: 'queued' };
    },
    async view(id) {
      const view = await queue.view(id);
      if (view.status === 'unknown') return undefined;
      if (view.result !== undefined) {
        const { queue: _run, ...result } = view.result;
        return { id: view.id, status: 'ready', result };
      }
      if (view.error !== undefined)
        return { id: view.id, status: view.status, error: toHttpError(view.error, context.retryAfterS).toJSON().error };
      return { id: view.id, status: view.status };
    },
    async delete(id) {
      if (await queue.cancel(id)) return { statusCode: 200, body: { id, status: 'cancelled', deleted: false } };
      const view = await queue.view(id);
      if (view.status === 'unknown') return undefined;
      if (view.status === 'queued' || view.status === 'running')
        return {
          statusCode: 409,
          body: {
            ...new HttpError(
              409,
              'job_running',
              `id: job ${id} is running and cannot be cancelled; it finishes on its own`,
              { field: 'id' },
            ).toJSON(),
          },
        };
      await queue.forget(id);
      return { statusCode: 200, body: { id, status: view.status, deleted: true } };
    },
    // Queued jobs live in Redis, not in this process: a lost context or a shutdown here loses none.
    failAll: () => undefined,
    settled: async () => undefined,
    localView: () => undefined,
    localDelete: () => undefined,
  };
}
