/**
 * The places of a lane: one per job it holds on the GPU at once (`laneDepth`), each with the
 * events that time its job and join its stages across the lane's stream and its device's copy
 * streams. A slot's index also picks the job's own buffers in the lane's BufferCache (its input,
 * its results, its pinned staging).
 *
 * Why not the pipeline's TripleBuffer (a slot ring fenced by pooled events): the ring hands a
 * stage the oldest slot of the previous stage, so steps must enter their stages in the order they
 * took their slots, while a lane's jobs enter theirs in the order their host copies finish (a
 * small job is not held behind a big one); its completion() wraps Event.done() in another promise
 * and two closures per wait, on a path that runs thousands of times a second; and its events are
 * untimed, while a job's GPU time is measured between its own two timed events. Completion is the
 * runtime's: `finished.done()` is the context's completion poller.
 */
import type { Context } from '../runtime/context.js';
import { Event } from '../runtime/event.js';
import { runsAlone, type LaneChunk } from './lane-runner.js';

/** What one job in flight on a lane owns: its events and (by index) its input, outputs and pinned staging. */
export interface LaneSlot {
  readonly index: number;
  /** Recorded when the job's first copy or kernel is enqueued (timed). */
  readonly start: Event;
  /** Recorded on the copy-in stream after the input copy: the lane's compute waits for it. */
  readonly loaded: Event;
  /** Recorded on the lane's stream after the compute: the copies back wait for it. */
  readonly computed: Event;
  /** The seed's finished_event: recorded last (timed); its completion makes the job ready. */
  readonly finished: Event;
}

/** A lane's slots and which of them are free. */
export class LaneSlots {
  readonly #all: LaneSlot[] = [];
  readonly #free: LaneSlot[] = [];
  /** Which lane, for the scheduling error. */
  readonly #lane: number;

  /** Makes `depth` slots' events in `context`, named after `name` (the lane); none is left behind if one fails. */
  constructor(context: Context, depth: number, lane: number, name: string) {
    this.#lane = lane;
    const created: Event[] = [];
    try {
      for (let i = 0; i < depth; i++) {
        const event = (what: string, timing: boolean): Event => {
          const ev = new Event({ context, timing, label: `${name} slot ${i} ${what}` });
          created.push(ev);
          return ev;
        };
        this.#all.push({
          index: i,
          start: event('start', true),
          loaded: event('loaded', false),
          computed: event('computed', false),
          finished: event('finished', true),
        });
      }
    } catch (e) {
      for (const ev of created) ev.dispose();
      throw e;
    }
    this.#free.push(...this.#all);
  }

  /** Slots in all: the jobs the lane holds at once. */
  get depth(): number {
    return this.#all.length;
  }

  /**
   * A free slot for `chunk`. The engine core schedules lanes (at most `depth` chunks on one, a chunk
   * that runs alone only on an empty lane): a chunk with no free place, or a lone one on a busy
   * lane, is a scheduling bug and refused.
   */
  take(chunk: LaneChunk): LaneSlot {
    const depth = this.#all.length;
    const taken = depth - this.#free.length;
    if (taken === depth || (taken > 0 && runsAlone(chunk.job)))
      throw new Error(
        `lane ${this.#lane}: a chunk arrived with ${taken} of its ${depth} places taken (the engine core schedules lanes)`,
      );
    return this.#free.pop()!;
  }

  /** Gives a slot back once its job's work has completed (or, after a failure, once the lane's streams are idle). */
  give(slot: LaneSlot): void {
    this.#free.push(slot);
  }

  /** Every slot's events, for the lane's dispose(). */
  events(): Event[] {
    return this.#all.flatMap((slot) => [slot.start, slot.loaded, slot.computed, slot.finished]);
  }
}
