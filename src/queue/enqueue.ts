/**
 * How a job and its samples reach Redis once admitted: small samples alongside the job's add (one
 * round trip in a row instead of two), large ones before it (a worker that takes the job at once
 * must find them); whatever fails midway is undone, and the caller's submit rejects with the reason.
 */
import type { Queue } from 'bullmq';
import type { BlobPool } from './blob-pool.js';
import type { WireJob } from './codec.js';
import { QueueFullError, QueueUnavailableError } from './errors.js';
import { INPUT_GIVEN_UP } from './options.js';

/** Microtasks the samples of a job sent alongside its add wait, so that BullMQ writes the add first (addAlongside). */
const ADD_HEAD_START_MICROTASKS = 2;

/** Where a job goes: its queue (name and Redis for messages), the blob store of its samples. */
export interface EnqueueTarget {
  name: string;
  where: string;
  queue: Queue;
  blobs: BlobPool;
  inputTtlMs: number;
}

/** Why a job could not be queued, from what failed: QueueFullError when Redis is out of memory, else QueueUnavailableError (the queue's own errors pass). */
export function notQueued(target: { name: string; where: string }, error: unknown): Error {
  if (error instanceof QueueFullError || error instanceof QueueUnavailableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  // Redis at its maxmemory with noeviction: full, as past the queue's own limits.
  if (/^OOM\b/.test(message))
    return new QueueFullError(
      `queue ${target.name} at ${target.where}: Redis is out of memory (${message}); nothing was queued, retry later`,
      { cause: error },
    );
  return new QueueUnavailableError(
    `queue ${target.name} at ${target.where}: the job could not be queued (${message})`,
    { cause: error },
  );
}

/** Stores job `id`'s samples and adds it (`add`), alongside or before as `wire.inputAlongside` says; rejects with notQueued's error, having undone what it did. */
export async function storeAndAdd(
  t: EnqueueTarget,
  id: string,
  wire: WireJob,
  samples: Buffer,
  add: () => Promise<unknown>,
): Promise<void> {
  if (wire.inputAlongside === true) return addAlongside(t, id, wire.inputKey, samples, add);
  try {
    await t.blobs.set(wire.inputKey, samples, t.inputTtlMs);
    await add();
  } catch (error) {
    void t.blobs.control.del(wire.inputKey).catch(() => undefined);
    throw notQueued(t, error);
  }
}

/**
 * Adds a job and stores its small samples at once, on two connections (maybe two Redis): one
 * round trip in a row instead of two. The samples go only where their key is empty (SET NX): a
 * worker that took the job and waited in vain for them leaves a marker there (worker-input.ts),
 * and then the job has failed and this submit rejects, so a job runs only if its submit resolves.
 * Should the add fail, the samples are deleted; should the samples fail, the job is removed (or,
 * taken meanwhile, failed by its worker once it has waited): nothing is left to hang.
 */
async function addAlongside(
  t: EnqueueTarget,
  id: string,
  inputKey: string,
  samples: Buffer,
  add: () => Promise<unknown>,
): Promise<void> {
  const blobs = t.blobs;
  const adding = Promise.allSettled([add()]);
  // The add first: it starts the longer chain (a worker's wake-up, its moveToActive, then its read
  // of the samples), and writing 64 KiB of samples costs the client 0.1 ms on a 2-vCPU host.
  // BullMQ hands the add to its socket a microtask after the call (6.7); the samples follow. The
  // order is only for speed: a worker that asks before the samples land waits for them.
  for (let i = 0; i < ADD_HEAD_START_MICROTASKS; i++) await undefined;
  const [[stored], [added]] = await Promise.all([
    Promise.allSettled([blobs.setIfAbsent(inputKey, samples, t.inputTtlMs)]),
    adding,
  ]);
  if (added.status === 'rejected') {
    if (stored.status === 'fulfilled' && stored.value) void blobs.control.del(inputKey).catch(() => undefined);
    throw notQueued(t, added.reason);
  }
  if (stored.status === 'rejected') {
    void t.queue.remove(id).catch(() => undefined);
    throw notQueued(t, stored.reason);
  }
  // Taken: by the marker, or by these very samples (sent again after a reconnection; the key may even be gone since the job ran).
  if (!stored.value && (await blobs.control.strlen(inputKey).catch(() => 0)) === INPUT_GIVEN_UP.length)
    throw new QueueUnavailableError(
      `queue ${t.name} at ${t.where}: job ${id} failed: a worker took it and gave up waiting for its samples before they reached Redis (nothing runs it; submit again)`,
    );
}
