/**
 * How device memory goes back: cuMemFree, or, for stream-ordered memory, cuMemFreeAsync on its
 * stream behind every other stream that used it (the record_stream rule of docs/design.md).
 */
import { cu } from '../../ffi/checked.js';
import type { CUstream } from '../../ffi/generated/types.js';
import { hot } from '../cuda.js';
import type { Context } from '../context.js';
import type { Stream } from '../stream.js';

/**
 * How a buffer's memory goes back. Stream-ordered memory (cuMemAllocAsync, pools) is freed on
 * `stream`, after every other stream that used it reaches the point of its last use
 * (PyTorch's record_stream, automated): `usedOn` collects those streams.
 */
export interface Allocation {
  free: (() => void) | undefined;
  /** The stream a stream-ordered allocation was made on (the context's default stream included), or undefined for cuMemAlloc. */
  stream: Stream | undefined;
  /** Streams other than `stream` that enqueued work on this memory (launches, copies, FFTs). */
  usedOn: Set<Stream> | undefined;
}

/** The Allocation of stream-ordered memory: the stream it was allocated on is known. */
export type StreamOrderedAllocation = Allocation & { stream: Stream };

/**
 * Frees stream-ordered memory on its stream, after an event of each other stream that used it
 * (the context's default stream too, and streams disposed since: their retired event): the
 * allocator can then not hand the memory out while that work still runs. The same closure runs
 * from dispose() and from the FinalizationRegistry, so memory collected without dispose() obeys
 * the same rule. A stream disposed before the memory is freed on the context's default stream
 * instead, behind its retired event.
 */
export function streamOrderedFree(address: number, allocation: StreamOrderedAllocation, context: Context): () => void {
  return () => {
    if (context.stickyError) return; // a lost context frees nothing; the driver refuses every call
    const api = hot();
    const owner = allocation.stream;
    const waits: Stream[] = allocation.usedOn ? [...allocation.usedOn] : [];
    allocation.usedOn = undefined;
    let target: CUstream | null = owner.handle;
    if (owner.disposed) {
      // cuMemFreeAsync on a destroyed stream's handle would be a use after free: the default stream frees it instead.
      target = context.defaultStream.handle;
      waits.push(owner);
    }
    context.makeCurrent();
    for (const other of waits) {
      if (other === owner && !owner.disposed) continue;
      let event;
      let recycled = false;
      if (other.disposed) {
        event = other.retiredEvent;
        if (event === undefined) continue;
      } else {
        event = context.completionEvents.acquire();
        recycled = true;
        api.eventRecord(event, other.handle, 'ordering a free after its last use');
      }
      api.streamWaitEvent(target, event, 0, 'ordering a free after its last use');
      if (recycled) context.completionEvents.recycle(event);
    }
    api.memFreeAsync(address, target);
  };
}

/**
 * cuMemFree with the buffer's own context current: with two devices the thread may have the other
 * device's context current when a buffer is disposed (or collected), and the driver API asks for
 * the allocation's context (multi-GPU runtimes set the device around frees for the same reason).
 */
export function freeNow(address: number, context: Context): void {
  if (!context.disposed && context.stickyError === undefined) context.makeCurrent();
  cu().cuMemFree(address);
}
