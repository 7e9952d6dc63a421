/**
 * JobWatcher: how a JobQueue learns that the jobs it watches moved on. One listener per client
 * reads the queue's event stream (BullMQ's QueueEvents); a 'completed' event carries the return
 * value, so a result is one read away. The listener starts from the stream's end as it was read
 * before the client's first job was added (not from whatever the end is when its first read
 * arrives), so no event of a job this client submits is missed, and a short memory of the jobs
 * that finished while no handle watched them serves a handle that starts watching just after:
 * a handle from this client's submit() asks Redis for its job's state only when that memory
 * overflowed since (or the listener could not start), not once per job as before (a script and
 * a read of the whole job per job: measured, 2 of the client's 9 commands per job). A periodic
 * look at jobs not heard of for `pollIntervalMs` is the net for events lost while Redis was away.
 */
import { QueueEvents, type ConnectionOptions, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BlobStores } from './blob-stores.js';
import { createRedis, type QueueConnection } from './connection.js';
import type { QueueJobHandle } from './handle.js';
import { completedView, type QueueJobView } from './outcome.js';

/** Jobs remembered as finished while unwatched; past this the oldest is dropped (a front that never watches holds at most this many). */
const FINISHED_MEMORY = 1024;

/** What the watcher needs from its JobQueue. */
export interface WatcherHost {
  name: string;
  prefix: string;
  connection: QueueConnection;
  queue: Queue;
  /** A client of the queue's Redis (where its event stream is). */
  queueRedis: Redis;
  stores: BlobStores;
  pollIntervalMs: number;
  /** How long starting the listener may wait for Redis, ms. */
  startWaitMs: number;
  view(id: string): Promise<QueueJobView>;
}

/** A finished job nobody watched: its return value when it completed, else nothing (its state is read when it is watched). */
type Finished = { returnvalue: unknown } | undefined;

/** The watching side of a JobQueue (see the file's comment). */
export class JobWatcher {
  readonly #host: WatcherHost;
  readonly #pending = new Map<string, QueueJobHandle>();
  readonly #finished = new Map<string, Finished>();
  /** Entries dropped from #finished so far: a handle's mark older than this may have lost its job's event. */
  #dropped = 0;
  #events: QueueEvents | undefined;
  #eventsRedis: Redis | undefined;
  /** Resolves true once events are read from a point pinned before it resolved; false when Redis did not answer in time. */
  #listening: Promise<boolean> | undefined;
  #trusted = false;
  #poller: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(host: WatcherHost) {
    this.#host = host;
  }

  /** Starts the listener (once). Await it before adding a job so that the job's events are read. */
  listen(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    this.#listening ??= this.#start();
    return this.#listening;
  }

  /** A mark to take right after a job is added: `watch(handle, mark)` then trusts the events for that job. */
  mark(): number | undefined {
    return this.#trusted ? this.#dropped : undefined;
  }

  /** Watches `handle` until it settles; `mark` (from mark() at submit) spares the look at Redis when the events can be trusted. */
  watch(handle: QueueJobHandle, mark: number | undefined): void {
    const id = handle.id;
    this.#pending.set(id, handle);
    void this.listen();
    this.#startPolling();
    if (this.#finished.has(id)) {
      const finished = this.#finished.get(id);
      this.#finished.delete(id);
      if (finished !== undefined) this.#completed(id, finished.returnvalue);
      else void this.refresh(id);
    } else if (mark === undefined || mark !== this.#dropped) void this.refresh(id);
  }

  /** Stops watching `handle` (it settled). */
  forget(handle: QueueJobHandle): void {
    if (this.#pending.get(handle.id) === handle) this.#pending.delete(handle.id);
    if (this.#pending.size === 0) this.#stopPolling();
  }

  /** Settles or updates the handle of `id` from what Redis holds now. */
  async refresh(id: string): Promise<void> {
    const handle = this.#pending.get(id);
    if (handle === undefined) return;
    try {
      handle.update(await this.#host.view(id));
    } catch {
      // Redis away: the next poll or event tries again.
    }
  }

  /** Stops listening; each pending handle settles with `error()`. */
  async close(error: (handle: QueueJobHandle) => Error, waitMs: number): Promise<void> {
    this.#closed = true;
    this.#stopPolling();
    for (const handle of [...this.#pending.values()]) handle.settle({ error: error(handle) });
    this.#pending.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([this.#events?.close()]),
      new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]);
    clearTimeout(timer);
    this.#eventsRedis?.disconnect();
  }

  async #start(): Promise<boolean> {
    const host = this.#host;
    // Where the stream ends now: every event added after this read is read by the listener.
    let timer: NodeJS.Timeout | undefined;
    const last = await Promise.race([
      host.queueRedis.xrevrange(host.queue.keys.events!, '+', '-', 'COUNT', 1).then(
        (entries) => entries[0]?.[0] ?? '0-0',
        () => undefined,
      ),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), host.startWaitMs))),
    ]);
    clearTimeout(timer);
    if (this.#closed) return false;
    this.#eventsRedis = createRedis(host.connection, `${host.prefix}:${host.name}:events`);
    const events = new QueueEvents(host.name, {
      connection: this.#eventsRedis as unknown as ConnectionOptions,
      prefix: host.prefix,
      ...(last !== undefined ? { lastEventId: last } : {}),
    });
    this.#events = events;
    events.on('error', () => undefined);
    events.on('completed', ({ jobId, returnvalue }) => {
      if (this.#pending.has(jobId)) this.#completed(jobId, returnvalue);
      else this.#remember(jobId, { returnvalue });
    });
    const ended = ({ jobId }: { jobId: string }): void => {
      if (this.#pending.has(jobId)) void this.refresh(jobId);
      else this.#remember(jobId, undefined);
    };
    events.on('failed', ended);
    events.on('removed', ended);
    events.on('active', ({ jobId }) => this.#pending.get(jobId)?.setStatus('running'));
    events.on('waiting', ({ jobId }) => this.#pending.get(jobId)?.setStatus('queued'));
    events.on('progress', ({ jobId, data }) => this.#pending.get(jobId)?.progress(data));
    this.#trusted = last !== undefined;
    return this.#trusted;
  }

  /** The event carries the return value: the result is one read away (no look at the job first). */
  #completed(id: string, returnvalue: unknown): void {
    const handle = this.#pending.get(id);
    if (handle === undefined) return;
    completedView(this.#host.stores.forJob(id), id, returnvalue).then(
      (view) => handle.update(view),
      () => void this.refresh(id),
    );
  }

  #remember(id: string, finished: Finished): void {
    this.#finished.set(id, finished);
    if (this.#finished.size > FINISHED_MEMORY) {
      this.#finished.delete(this.#finished.keys().next().value!);
      this.#dropped++;
    }
  }

  #startPolling(): void {
    if (this.#poller !== undefined || this.#closed) return;
    const interval = this.#host.pollIntervalMs;
    this.#poller = setInterval(() => {
      const now = Date.now();
      for (const handle of this.#pending.values())
        if (now - handle.lastHeardAt >= interval) void this.refresh(handle.id);
    }, interval);
    this.#poller.unref();
  }

  #stopPolling(): void {
    clearInterval(this.#poller);
    this.#poller = undefined;
  }
}
