/**
 * The Batcher's channel: submits accepted and not yet fully dispatched (at most `channelSize`),
 * and submits waiting for room (at most `maxWaiting`, FIFO). It hands out items for a batch as
 * (request, offset, length) segments; it knows nothing of dispatch, timers or batches in flight.
 */
import { RingQueue } from '../../orchestration/ring-queue.js';
import { BatcherFullError } from './errors.js';
import { type Batch, CANCELLED, DISPATCHED, type PendingSubmit, QUEUED, WAITING } from './records.js';
import type { SampleWindow } from './sample-window.js';

/** Accepted and waiting submits, with the counts the Batcher's rules read. */
export class SubmitChannel<I, O> {
  /** Accepted requests not yet fully dispatched, plus cancelled ones not yet skipped. */
  readonly #queue = new RingQueue<PendingSubmit<I, O>>(64);
  readonly #waiters = new RingQueue<PendingSubmit<I, O>>();
  queuedSubmits = 0;
  queuedItems = 0;
  waitingSubmits = 0;
  // Positions in the stream of accepted items; flush() waits on them (cancelled items count
  // as dispatched when skipped, so the positions stay contiguous).
  acceptedSeq = 0;
  dispatchedSeq = 0;

  constructor(
    readonly channelSize: number,
    readonly maxWaiting: number,
  ) {}

  /** A new submit may be accepted now (nobody waits ahead of it and the channel has room). */
  get hasRoom(): boolean {
    return this.waitingSubmits === 0 && this.queuedSubmits < this.channelSize;
  }

  /** The channel holds `channelSize` submits: a batch cannot grow until something is dispatched. */
  get full(): boolean {
    return this.queuedSubmits >= this.channelSize;
  }

  /** The oldest accepted request (possibly cancelled). */
  head(): PendingSubmit<I, O> | undefined {
    return this.#queue.peek();
  }

  get length(): number {
    return this.#queue.length;
  }

  enqueue(request: PendingSubmit<I, O>, now: number): void {
    request.state = QUEUED;
    request.enqueuedAt = now;
    this.#queue.push(request);
    this.queuedSubmits++;
    this.queuedItems += request.count;
    this.acceptedSeq += request.count;
  }

  /** Lines `request` up for room (the caller checked maxWaiting). */
  wait(request: PendingSubmit<I, O>): void {
    this.#waiters.push(request);
    this.waitingSubmits++;
  }

  /** Accepts waiters while there is room; true if any was accepted. */
  admitWaiters(now: number): boolean {
    let admitted = false;
    while (this.waitingSubmits > 0 && this.queuedSubmits < this.channelSize) {
      const request = this.#waiters.shift();
      if (request === undefined) break;
      if (request.state !== WAITING) continue;
      this.waitingSubmits--;
      this.enqueue(request, now);
      admitted = true;
    }
    while (this.#waiters.peek()?.state === CANCELLED) this.#waiters.shift();
    return admitted;
  }

  /** Takes an aborted request out of the counts; false when part of it is already dispatched (the work is underway). */
  cancel(request: PendingSubmit<I, O>): boolean {
    if (request.state === WAITING) {
      this.waitingSubmits--;
    } else if (request.state === QUEUED && request.offset === 0) {
      this.queuedSubmits--;
      this.queuedItems -= request.count;
    } else {
      return false;
    }
    request.state = CANCELLED;
    request.settled = true;
    return true;
  }

  /** The rest of a request split across batches failed with its batch: its queued items are dropped. */
  dropRemainder(request: PendingSubmit<I, O>): void {
    if (request.state !== QUEUED) return;
    request.state = CANCELLED;
    this.queuedSubmits--;
    this.queuedItems -= request.count - request.offset;
  }

  dropCancelledHead(): void {
    for (let head = this.#queue.peek(); head !== undefined && head.state === CANCELLED; head = this.#queue.peek()) {
      this.#queue.shift();
      this.dispatchedSeq += head.count - head.offset;
    }
  }

  /** Rejects every waiting submit with `error` (they were never accepted). */
  refuseWaiters(error: Error): void {
    for (let request = this.#waiters.shift(); request !== undefined; request = this.#waiters.shift()) {
      if (request.state !== WAITING) continue;
      request.state = CANCELLED;
      request.settled = true;
      request.detachAbort();
      request.reject(error);
    }
    this.waitingSubmits = 0;
  }

  /** Rejects every accepted submit not yet settled with `error`; nothing queued is dispatched after this. */
  abandonQueued(error: Error): void {
    for (let request = this.#queue.shift(); request !== undefined; request = this.#queue.shift()) {
      if (request.settled) continue;
      request.state = CANCELLED;
      request.settled = true;
      request.outputs = null;
      request.detachAbort();
      request.reject(error);
    }
    this.queuedSubmits = 0;
    this.queuedItems = 0;
    this.dispatchedSeq = this.acceptedSeq;
  }

  /**
   * Moves the next `size` items into `batch` (skipping cancelled requests) and returns them: the
   * submit's own array when one submit is exactly the batch, else a packed copy.
   */
  take(batch: Batch<I, O>, size: number, now: number, waits: SampleWindow): readonly I[] {
    const first = this.#queue.peek();
    if (first === undefined) throw new Error(`internal error: queue empty with ${size} items counted`);
    let items: readonly I[];
    if (first.items !== null && first.offset === 0 && first.count === size) {
      items = first.items; // one submit is exactly one batch: no copy
      this.#segment(batch, first, size, now, waits);
    } else {
      const packed = new Array<I>(size);
      let fill = 0;
      while (fill < size) {
        const request = this.#queue.peek();
        if (request === undefined) throw new Error('internal error: queue underflow');
        if (request.state === CANCELLED) {
          this.#queue.shift();
          this.dispatchedSeq += request.count - request.offset;
          continue;
        }
        const take = Math.min(request.count - request.offset, size - fill);
        const source = request.items;
        if (source === null) {
          packed[fill] = request.item as I;
        } else {
          for (let i = 0, from = request.offset; i < take; i++) packed[fill + i] = source[from + i] as I;
        }
        this.#segment(batch, request, take, now, waits);
        fill += take;
      }
      items = packed;
    }
    this.queuedItems -= size;
    this.dispatchedSeq += size;
    return items;
  }

  #segment(batch: Batch<I, O>, request: PendingSubmit<I, O>, take: number, now: number, waits: SampleWindow): void {
    if (request.offset === 0) request.detachAbort();
    batch.requests.push(request);
    batch.offsets.push(request.offset);
    batch.lengths.push(take);
    waits.record(now - request.submittedAt, take);
    request.offset += take;
    if (request.offset === request.count) {
      this.#queue.shift();
      this.queuedSubmits--;
      request.state = DISPATCHED;
    }
  }

  /** The refusal of a submit beyond what the batcher holds, naming each bound (`batches`: the batches in flight and their bound, in words). */
  refusal(label: string, batches: string, noWait: boolean): BatcherFullError {
    const held = `${batches}, ${this.queuedSubmits} submits queued (channelSize ${this.channelSize})`;
    return new BatcherFullError(
      noWait
        ? `Batcher "${label}": channel full (${held}); rejected because wait is false`
        : `Batcher "${label}": full: ${held} and ${this.waitingSubmits} submits already waiting for room (maxWaiting ${this.maxWaiting})`,
    );
  }
}
