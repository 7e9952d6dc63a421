/**
 * runQueueWorker(): takes jobs from the queue and runs them on a JobEngine, on any host that
 * reaches the same Redis. Delivery is at-least-once: a job is started again when its worker dies
 * mid-job (its lock expires and BullMQ's stalled-job check puts it back) or fails in a way another
 * worker may not (a lost CUDA context), up to the job's `attempts`, then it fails with the
 * reason. Results are idempotent per job id: each run writes its own result key and only the run
 * holding the job's lock can complete it, so a job is never completed twice, and a result that
 * took more than one start says so (`result.queue.attempts`).
 */
import { EventEmitter } from 'node:events';
import { Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job as BullJob } from 'bullmq';
import type { Redis } from 'ioredis';
import { isStickyError } from '../engine/errors.js';
import type { Job, JobResult, JobSpec } from '../engine/types.js';
import { Admission, ledgerKeys } from './admission.js';
import { BlobStores } from './blob-stores.js';
import { packResult, samplesFromBuffer, type PackedResult, type WireJob, type WireResult } from './codec.js';
import { answersWithin, checkDatabase, createRedis, describeConnection, settlesWithin } from './connection.js';
import { ResultTooLargeError } from './errors.js';
import type { QueueCounts } from './job-queue-options.js';
import { readCounts } from './outcome.js';
import { BlobKeys, MAX_ATTEMPTS } from './options.js';
import { keepsInputKey, readInput } from './worker-input.js';
import { Liveness } from './liveness.js';
import { WorkerLog, type QueueJobSettled } from './worker-log.js';
import { WorkerMemory } from './worker-memory.js';
import { resolveWorkerOptions, type QueueWorkerOptions } from './worker-options.js';

export type { QueueJobSettled, QueueWorkerOptions };

/** A running worker. */
export interface QueueWorker extends EventEmitter<{ settled: [QueueJobSettled] }> {
  readonly name: string;
  /** Jobs this worker has completed, failed and handed back for a retry. */
  readonly counts: { completed: number; failed: number; retried: number };
  /** Resolves once the worker has stopped: `close()`, or the engine's context was lost (`lostError` says so). */
  readonly stopped: Promise<void>;
  /** The engine's loss, when that stopped the worker. */
  readonly lostError: unknown;
  /** Whether Redis answers now: the connections are up and a PING (every second) was answered within 2 s. */
  readonly reachable: boolean;
  /** Jobs in the queue by state. */
  queueCounts(): Promise<QueueCounts>;
  /** Graceful stop: takes nothing new, finishes and stores the jobs it holds, then disconnects. */
  close(): Promise<void>;
}

/** Names of errors that say this worker (not the job) failed: another worker may succeed, so they are retried. */
const WORKER_FAULTS = new Set(['EngineLostError', 'EngineClosedError', 'EngineFullError', 'ContextLostError']);

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * How long close() still waits for BullMQ's own close once no job is held, or once Redis was seen
 * away, ms; past it the close is cut and the worker's connections dropped. BullMQ 6.7.0's
 * Worker.close() never settles once Redis went away, not even after Redis is back
 * (taskforcesh/bullmq#4656: its blocking client is left reconnecting, and the `end` its close
 * waits for never comes). A little longer than JobQueue's 2000 ms: a worker's close may have a
 * job's completion in flight.
 */
const CLOSE_WAIT_MS = 3000;
/** How long a worker's probe waits for Redis to answer a PING before the worker counts as unreachable (its /ready says so), ms. */
const PROBE_TIMEOUT_MS = 2000;
/** How long a closing worker waits for Redis to answer a PING before it counts Redis as away, ms (and how often it asks). */
const CLOSE_PROBE_MS = 1000;
/** BullMQ's Worker, with what its close() would stop last, for a close that was cut. */
class CuttableWorker extends Worker {
  /**
   * Stops renewing the locks of the jobs held and looking for stalled jobs (timers that would keep
   * the process alive). The jobs held then go back to the queue through BullMQ's stalled-job check
   * (of any worker) once their locks expire, and are started again up to their attempts.
   */
  cut(): void {
    void this.lockManager.close().catch(() => undefined);
    void this.pause(true).catch(() => undefined);
  }
}

/** Records the clients BullMQ duplicates from `client` (a worker's blocking connection), which a cut close disconnects. */
function withDuplicates(client: Redis, duplicates: Redis[]): Redis {
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (...args: Parameters<Redis['duplicate']>): Redis => {
    const copy = duplicate(...args);
    duplicates.push(copy);
    return copy;
  };
  return client;
}

/**
 * Starts a worker; it takes jobs at once. Resolves once Redis has answered (it keeps retrying until
 * then). Every option is checked before anything connects; a rejection leaves nothing running.
 */
export async function runQueueWorker(options: QueueWorkerOptions): Promise<QueueWorker> {
  const o = resolveWorkerOptions(options);
  const {
    connection,
    engine,
    name,
    prefix,
    workerName,
    concurrency,
    maxAttempts,
    maxResultBytes,
    blobConnections,
    blobStores,
  } = o;
  const [lockDuration, stalledInterval, limiter] = [o.lockDurationMs, o.stalledIntervalMs, o.rateLimit];
  const keys = new BlobKeys(prefix, name);

  // Every option was checked above: from here on nothing throws before the worker is whole, and a
  // failed start (below) closes it, so a rejection leaves no connection behind.
  const stores = new BlobStores(blobStores, `${prefix}:${name}:worker-blobs`, blobConnections);
  const queueRedis = createRedis(connection, `${prefix}:${name}:worker-queue`);
  const queue = new Queue(name, { connection: queueRedis as unknown as ConnectionOptions, prefix });
  queue.on('error', () => undefined);
  // A job started here no longer waits: it leaves the clients' admission ledger.
  const admission = new Admission(queueRedis, ledgerKeys(prefix, name));
  // BullMQ leaves a connection it was given open (it may be shared): close() disconnects it, and
  // the blocking one BullMQ duplicates from it.
  const duplicates: Redis[] = [];
  const workerRedis = withDuplicates(createRedis(connection, `${prefix}:${name}:worker`), duplicates);
  const disconnectAll = (): void => {
    for (const client of [stores, queueRedis, workerRedis, ...duplicates]) client.disconnect();
  };
  const worker = new CuttableWorker(name, (job: BullJob) => runJob(job), {
    connection: workerRedis as unknown as ConnectionOptions,
    prefix,
    name: workerName,
    concurrency,
    lockDuration,
    stalledInterval,
    // Stalls are bounded by the job's own attempts (checked at each start), not by this count.
    maxStalledCount: MAX_ATTEMPTS,
    ...(limiter ? { limiter: { max: limiter.max, duration: limiter.durationMs } } : {}),
    autorun: false,
  });
  worker.on('error', () => undefined);
  const counts = { completed: 0, failed: 0, retried: 0 };
  const emitter = new EventEmitter<{ settled: [QueueJobSettled] }>();
  /** The jobs held: when each started here, how long it waited in the queue, and when its engine should have settled it (its timeoutMs; Infinity without one). */
  const started = new Map<string, { at: number; waitMs: number; dueAt: number }>();
  const memory = new WorkerMemory(engine);
  let lostError: unknown;

  const runJob = async (job: BullJob): Promise<WireResult> => {
    const attempt = job.attemptsStarted;
    const held = { at: performance.now(), waitMs: Math.max(0, Date.now() - job.timestamp), dueAt: Infinity };
    started.set(job.id!, held);
    // Taken: it no longer waits, whatever becomes of it (the ledger of admission.ts).
    void admission.leave(job.id!).catch(() => undefined);
    const data = job.data as WireJob;
    if (data === null || typeof data !== 'object' || data.v !== 1)
      throw new UnrecoverableError(
        'job data: not a tscuda job of format 1 (a newer client, or another program on this queue)',
      );
    const attempts = Math.min(job.opts.attempts ?? 1, maxAttempts);
    // A start past the job's attempts follows runs whose worker died (stalls do not count as
    // BullMQ attempts): give up with the reason instead of starting it once more.
    if (attempt > attempts)
      throw new UnrecoverableError(
        `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}: its worker stopped mid-job ${job.stalledCounter} time(s) (killed, or its lock expired)`,
      );
    // A job that waited past its inputTtlMs has lost its samples (and no longer counts as waiting): it fails with that reason.
    const waitedMs = Date.now() - job.timestamp;
    if (attempt === 1 && typeof data.inputTtlMs === 'number' && waitedMs > data.inputTtlMs)
      throw new UnrecoverableError(
        `expired: it waited ${Math.round(waitedMs / 1000)} s for a worker, past its inputTtlMs (${data.inputTtlMs} ms)`,
      );
    if (lostError !== undefined)
      throw new Error(`worker ${workerName}: its engine lost its GPU context; another worker retries the job`);
    // The samples are asked for first and the report after it (not awaited): Redis runs the
    // read before the report's script, so the job's latency does not wait for the report.
    if ((data.stores ?? 1) !== stores.count)
      throw new UnrecoverableError(
        `blob stores: the job's client lists ${data.stores ?? 1}, worker ${workerName} lists ${stores.count} (every client and worker must list the same)`,
      );
    const blobs = stores.forJob(job.id!);
    // The samples are read into pooled memory, and the engine writes the result there (worker-memory.ts says why).
    const reading = readInput({ blobs, take: memory.take, release: (b) => memory.release(b) }, data, job.timestamp);
    void job.updateProgress({ phase: 'running', worker: workerName, attempt }).catch(() => undefined);
    const input = await reading;
    let result: JobResult;
    let out: ReturnType<WorkerMemory['outputs']>;
    let run: Job | undefined;
    try {
      const spec: JobSpec = { ...data.params, data: samplesFromBuffer(input, data.dtype, data.samples) };
      out = memory.outputs(spec);
      run = await engine.submit(out === undefined ? spec : { ...spec, into: out.into }, { wait: true });
      // The engine's clock for the job's timeoutMs starts at its submit: past it, close() need not wait for the job (below).
      if (typeof spec.timeoutMs === 'number') held.dueAt = performance.now() + spec.timeoutMs;
      result = await run.result;
      await run.released;
    } catch (error) {
      // A job that timed out while running is still read and written on its lane: its memory goes
      // back once the engine is done with it (Job.released), not with the error.
      const buffer = out?.buffer;
      void (run?.released ?? Promise.resolve()).then(() => (memory.release(input), memory.release(buffer)));
      if (isStickyError(error) || (error instanceof Error && WORKER_FAULTS.has(error.name)))
        throw new Error(`worker ${workerName}: ${messageOf(error)}`);
      throw new UnrecoverableError(messageOf(error));
    }
    memory.release(input);
    const resultKey = keys.result(job.id!, attempt);
    try {
      let packed: PackedResult;
      try {
        packed = packResult(result);
      } catch (error) {
        // An engine's result of the wrong shape: stored as it is, no client could read it.
        throw new UnrecoverableError(`the engine's result cannot be stored: ${messageOf(error)}`);
      }
      const limit = Math.min(maxResultBytes, data.maxResultBytes);
      if (packed.bytes > limit)
        throw new UnrecoverableError(messageOf(new ResultTooLargeError(packed.bytes, limit, 'measured by the worker')));
      // The result's arrays go out as they are (no packed copy). No progress report here: the
      // completion follows at once, and every report is one more script on the queue's Redis and
      // one more event that every client reads.
      await blobs.set(resultKey, packed.pieces, data.resultTtlMs);
      return {
        v: 1,
        resultKey,
        bytes: packed.bytes,
        arrays: packed.arrays,
        scalars: packed.scalars,
        run: { jobId: job.id!, worker: workerName, attempts: attempt, stalls: job.stalledCounter },
      };
    } finally {
      memory.release(out?.buffer);
    }
  };

  const log = new WorkerLog(o.log, workerName, name, counts, () =>
    queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active'),
  );

  const settle = (job: BullJob, outcome: QueueJobSettled['outcome'], reason?: string): void => {
    const s = started.get(job.id!);
    started.delete(job.id!);
    counts[outcome]++;
    const event: QueueJobSettled = {
      jobId: job.id!,
      outcome,
      waitMs: s?.waitMs ?? 0,
      runMs: s ? performance.now() - s.at : 0,
      attempt: job.attemptsStarted,
      reason,
    };
    log.observe(event);
    emitter.emit('settled', event);
  };
  worker.on('completed', (job) => {
    settle(job, 'completed');
    void stores
      .forJob(job.id!)
      .control.del((job.data as WireJob).inputKey)
      .catch(() => undefined);
  });
  worker.on('failed', (job, error) => {
    if (job === undefined) return;
    const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    settle(job, final ? 'failed' : 'retried', error.message);
    // A job whose samples never arrived keeps the marker under their key: late samples must meet it (worker-input.ts).
    if (final && !keepsInputKey.has(error))
      void stores
        .forJob(job.id!)
        .control.del((job.data as WireJob).inputKey)
        .catch(() => undefined);
  });
  worker.on('stalled', (jobId) =>
    log.line(`job ${jobId} stalled (its worker stopped renewing its lock): back in the queue for another start`),
  );

  let closing: Promise<void> | undefined;
  let done = false;
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  const connected = (): boolean => workerRedis.status === 'ready' && queueRedis.status === 'ready' && stores.ready;
  // Whether Redis answers, not only whether the connections are up (a stopped Redis keeps them): `reachable`, /ready.
  const liveness = new Liveness({ connected, probe: (ms) => answersWithin(queueRedis, ms) }, PROBE_TIMEOUT_MS);
  const close = (): Promise<void> => {
    closing ??= (async () => {
      log.line('stopping: taking no new jobs, finishing the ones held');
      // BullMQ's close finishes the jobs held first (however long they run, while Redis is up);
      // once none is held, or Redis is away, or every job held is past its timeoutMs (an engine
      // that never settles a job would hold the close forever), it has CLOSE_WAIT_MS more, then it
      // is cut: with Redis away it would never settle (see CLOSE_WAIT_MS). A cut close leaves the
      // jobs still held to the stalled-job check: their locks are no longer renewed, expire, and
      // the jobs go back to the queue for another start (at-least-once, as when a worker dies).
      let away = false;
      let overdue = false;
      // A Redis that stopped answering keeps its connections (connected() stays true): a PING
      // unanswered within CLOSE_PROBE_MS counts as away too.
      let silent = false;
      const probe = setInterval(
        () => void answersWithin(queueRedis, CLOSE_PROBE_MS).then((answered) => (silent ||= !answered)),
        CLOSE_PROBE_MS,
      );
      const allOverdue = (): boolean =>
        started.size > 0 && [...started.values()].every((s) => performance.now() >= s.dueAt);
      const due = (): boolean => (away ||= !connected() || silent) || started.size === 0 || (overdue ||= allOverdue());
      const finished = await settlesWithin(worker.close(), CLOSE_WAIT_MS, due);
      clearInterval(probe);
      const held = started.size;
      if (!finished) worker.cut();
      log.stop();
      liveness.close();
      // With Redis away BullMQ's queue close would only wait out the bound: nothing is left to flush.
      if (away) void queue.close().catch(() => undefined);
      else await settlesWithin(queue.close(), CLOSE_WAIT_MS);
      disconnectAll();
      const tally = `completed ${counts.completed}, failed ${counts.failed}, retried ${counts.retried}`;
      if (finished) log.line(`stopped (${tally})`);
      else {
        const jobs = held > 0 ? `: ${held} job(s) held go back to the queue once their locks expire` : '';
        const why = away
          ? 'Redis was away'
          : overdue
            ? 'the engine had not settled a job past its timeoutMs'
            : "BullMQ's close did not finish";
        log.line(`stopped (${tally}); close cut after ${CLOSE_WAIT_MS} ms (${why})${jobs}`);
      }
      done = true;
      markStopped();
    })();
    return closing;
  };

  try {
    engine.lost.catch((error: unknown) => {
      lostError = error ?? new Error('engine lost');
      log.line(
        `the engine lost its GPU context (${messageOf(error)}): the jobs held go back to the queue; this worker stops`,
      );
      void close();
    });
    // A worker closed meanwhile (its engine lost) may never hear from Redis: that ends the wait too.
    const ready = await Promise.race([worker.waitUntilReady().then(() => true), stopped.then(() => false)]);
    if (!ready)
      throw new Error(
        `worker ${workerName} stopped before Redis answered: ${lostError === undefined ? 'closed' : messageOf(lostError)}`,
        { cause: lostError },
      );
    // ioredis stays on database 0 when Redis refuses the one named: the worker would take jobs
    // from a queue no client of that URL uses, and fail them on its blob connections (which do refuse).
    await checkDatabase(queueRedis, connection);
    await stores.checkDatabases();
    const taking = `taking jobs from queue ${name} at ${describeConnection(connection)} (concurrency ${concurrency}, engine ${engine.label}: ${engine.laneCount} lanes on devices ${engine.devices.join(',')})`;
    void worker.run().catch((error: unknown) => log.line(`worker loop ended: ${messageOf(error)}`));
    log.start(o.logIntervalMs);
    log.line(taking);
  } catch (error) {
    await close();
    throw error;
  }

  const running = Object.assign(emitter, {
    name: workerName,
    counts,
    stopped,
    queueCounts: (): Promise<QueueCounts> => readCounts(queue),
    close,
  });
  // Getters, so each read sees the current state (Object.assign would copy their values once).
  return Object.defineProperties(running, {
    lostError: { get: () => lostError, enumerable: true },
    reachable: {
      get: () => !done && queueRedis.status === 'ready' && stores.ready && liveness.answering,
      enumerable: true,
    },
  }) as QueueWorker;
}
