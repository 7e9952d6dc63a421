/**
 * The one owner of the lifecycle of a job a route starts, so a route cannot skip a step: the
 * request's pooled body handed over to the job (back to the pool once the engine is done with
 * it), the deadline (the job's `timeoutMs`, the server's default when the request gave none,
 * kept by the engine), cancelling a job whose client has gone, and the job's metrics. A route
 * reads the request (readJob), calls one of these and writes the answer; the server's parts they
 * use are the decorators of the request's instance (`request.server`: plugins/).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Job, JobResult, JobSpec } from '../engine/types.js';
import type { SubmittedJob } from './job-service.js';
import { pooledFiltered } from './job-io.js';
import { carryChecked } from './fusion/checked-specs.js';
import type { ServerLimits } from './options.js';

/** `spec` with its deadline: the request's own, or the server's default. */
function withDeadline(limits: ServerLimits, spec: JobSpec): JobSpec {
  return spec.timeoutMs === undefined ? { ...spec, timeoutMs: limits.defaultTimeoutMs } : spec;
}

/**
 * Runs `spec` on this server's engine for a request that waits for the result (the synchronous
 * endpoints) and resolves with it. The body goes to the job; a client that hangs up while its job
 * is still queued cancels it (one listener per response), freeing the queue slot; the result's
 * filtered wave is written into pooled memory, which goes back once the response no longer
 * reads it and the engine no longer writes it (after a timeout too: Job.released); the finished
 * job's timings count under `endpoint`. A lost context rejects it at once (gpu.untilLost).
 */
export async function runJob(
  request: FastifyRequest,
  reply: FastifyReply,
  spec: JobSpec,
  endpoint: string,
): Promise<JobResult> {
  const { gpu, bodies, config, metrics } = request.server;
  const engine = gpu.require();
  const timed = withDeadline(config.limits, spec);
  const filtered = pooledFiltered(bodies, timed, engine.precision);
  let job: Job;
  try {
    // The copy with `into` keeps the door's mark: its parameters are the ones readJob validated (checked-specs.ts).
    job = engine.submit(
      filtered ? carryChecked(timed, { ...timed, into: { ...timed.into, filtered: filtered.array } }) : timed,
    );
  } catch (error) {
    if (filtered) bodies.release(filtered.buffer);
    throw error;
  }
  bodies.handOver(request, job);
  job.result.catch(() => undefined);
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) job.cancel();
    if (filtered) void job.released.then(() => bodies.release(filtered.buffer));
  });
  // The engine keeps the deadline (timeoutMs): the result rejects with JobTimeoutError in time.
  const result = await gpu.untilLost(job.result);
  metrics.observeJob(endpoint, result);
  return result;
}

/**
 * Submits `spec` as a kept job (`POST /v1/jobs`): it outlives its request, so a client that
 * hangs up does not cancel it (DELETE does). The body goes to the job once it is submitted; the
 * deadline is the engine's (timeoutMs, defaulted here); the job service counts the finished job's
 * timings (JobServiceContext.observe). A queue's workers run it elsewhere: then no GPU is needed here.
 */
export async function submitKeptJob(request: FastifyRequest, spec: JobSpec): Promise<SubmittedJob> {
  const { gpu, jobs, bodies, config } = request.server;
  if (jobs.gpuHere) gpu.require();
  return jobs.submit(withDeadline(config.limits, spec), { onSubmitted: (job) => bodies.handOver(request, job) });
}
