/**
 * The one owner of the lifecycle of a job a route starts, so a route cannot skip a step: the
 * request's pooled body handed over to the job (back to the pool once the engine is done with
 * it), the deadline (the job's `timeoutMs`, the server's default when the request gave none,
 * kept by the engine), cancelling a job whose client has gone, and the job's metrics. A route
 * reads the request (readJob), calls one of these and writes the answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Job, JobResult, JobSpec } from '../engine/types.js';
import type { SubmittedJob } from './job-service.js';
import { handOverBody, observeJob, pooledFiltered } from './job-io.js';
import { requireGpu, untilLost, type ServerState } from './state.js';

/** `spec` with its deadline: the request's own, or the server's default. */
function withDeadline(state: ServerState, spec: JobSpec): JobSpec {
  return spec.timeoutMs === undefined ? { ...spec, timeoutMs: state.limits.defaultTimeoutMs } : spec;
}

/**
 * Runs `spec` on this server's engine for a request that waits for the result (the synchronous
 * endpoints) and resolves with it. The body goes to the job; a client that hangs up while its job
 * is still queued cancels it (one listener per response), freeing the queue slot; the result's
 * filtered wave is written into pooled memory, which goes back once the response no longer
 * reads it and the engine no longer writes it (after a timeout too: Job.released); the finished
 * job's timings count under `endpoint`. A lost context rejects it at once (untilLost).
 */
export async function runJob(
  state: ServerState,
  request: FastifyRequest,
  reply: FastifyReply,
  spec: JobSpec,
  endpoint: string,
): Promise<JobResult> {
  const gpu = requireGpu(state);
  const timed = withDeadline(state, spec);
  const filtered = pooledFiltered(state, timed, gpu.precision);
  let job: Job;
  try {
    job = gpu.submit(filtered ? { ...timed, into: { ...timed.into, filtered: filtered.array } } : timed);
  } catch (error) {
    if (filtered) state.bodies.release(filtered.buffer);
    throw error;
  }
  handOverBody(state, request, job);
  job.result.catch(() => undefined);
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) job.cancel();
    if (filtered) void job.released.then(() => state.bodies.release(filtered.buffer));
  });
  // The engine keeps the deadline (timeoutMs): the result rejects with JobTimeoutError in time.
  const result = await untilLost(state, job.result);
  observeJob(state, endpoint, result);
  return result;
}

/**
 * Submits `spec` as a kept job (`POST /v1/jobs`): it outlives its request, so a client that
 * hangs up does not cancel it (DELETE does). The body goes to the job once it is submitted; the
 * deadline is the engine's (timeoutMs, defaulted here); the job service counts the finished job's
 * timings (JobServiceContext.observe). A queue's workers run it elsewhere: then no GPU is needed here.
 */
export async function submitKeptJob(state: ServerState, request: FastifyRequest, spec: JobSpec): Promise<SubmittedJob> {
  if (state.jobs.gpuHere) requireGpu(state);
  return state.jobs.submit(withDeadline(state, spec), { onSubmitted: (job) => handOverBody(state, request, job) });
}
