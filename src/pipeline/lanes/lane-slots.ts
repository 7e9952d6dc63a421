/**
 * The slots of a lane: one per piece of work it holds on the GPU at once, each with the events that
 * time its work and join its stages across the lane's compute stream and its copy streams. A
 * slot's index also picks its own buffers in the lane's BufferCache (its input, its results, its
 * pinned staging).
 *
 * The events are made once per slot and recorded again by every piece of work the slot takes: no
 * event is made, pooled or wrapped in a promise per piece of work, on a path that runs thousands
 * of times a second. Completion is the runtime's: `finished.done()` is the context's completion
 * poller. `start` and `finished` are timed, so a slot's GPU time is `finished.elapsedSince(start)`.
 */
import type { Context } from '../../runtime/context.js';
import { Event } from '../../runtime/event.js';

/** What one piece of work in flight on a lane owns: its events and (by index) its buffers. */
export interface LaneSlot {
  readonly index: number;
  /** Recorded when the work's first copy or kernel is enqueued (timed). */
  readonly start: Event;
  /** Recorded behind the upload (on the copy-in stream): the compute waits for it. */
  readonly loaded: Event;
  /** Recorded behind the compute (on the compute stream): the copies back wait for it. */
  readonly computed: Event;
  /** Recorded last, behind the copies back (timed); its completion makes the work done. */
  readonly finished: Event;
}

/** `depth` slots' events in `context`, labelled after `name`; none is left behind if one fails. */
export function createLaneSlots(context: Context, depth: number, name: string): LaneSlot[] {
  const slots: LaneSlot[] = [];
  const created: Event[] = [];
  try {
    for (let i = 0; i < depth; i++) {
      const event = (what: string, timing: boolean): Event => {
        const ev = new Event({ context, timing, label: `${name} slot ${i} ${what}` });
        created.push(ev);
        return ev;
      };
      slots.push({
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
  return slots;
}

/** Every event of `slots`, for their owner's dispose(). */
export function slotEvents(slots: readonly LaneSlot[]): Event[] {
  return slots.flatMap((slot) => [slot.start, slot.loaded, slot.computed, slot.finished]);
}
