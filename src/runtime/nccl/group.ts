/**
 * ncclGroupStart/End as tscuda sees them: collectives enqueued inside a group are launched only
 * at the outermost ncclGroupEnd, so their completion is recorded then, not when they were called.
 */
import { cu, ncclChecked } from '../../ffi/checked.js';
import { Context } from '../context.js';
import type { Stream } from '../stream.js';

interface Pending {
  readonly stream: Stream;
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** Collectives waiting for the outermost group's end (empty when no group is open). */
const open: Pending[][] = [];

const ignore = (): void => {};

/**
 * NCCL (ncclCommInitAll, ncclGroupEnd) switches the thread's current device with cudaSetDevice;
 * tscuda caches which context it made current, so after such a call the cached one is made
 * current again for real.
 */
export function restoreCurrentContext(): void {
  const current = Context.current;
  if (current && !current.disposed && !current.stickyError)
    cu().cuCtxSetCurrent(current.handle, 'restoring the context after an NCCL call');
}

/** Runs a checked NCCL call that may switch the thread's device, then makes tscuda's context current again, whether or not it failed. */
export function restoringContext<T>(call: () => T): T {
  try {
    return call();
  } finally {
    restoreCurrentContext();
  }
}

/** Whether a group is open (collectives are then launched at its end). */
export function inGroup(): boolean {
  return open.length > 0;
}

/**
 * The awaitable of a collective just enqueued on `stream`: its completion (stream.done() behind
 * it), or, inside a group, the completion recorded once the group has launched it. The promise
 * has a handler attached already, so leaving it unawaited is never an unhandled rejection.
 */
export function completion(stream: Stream): Promise<void> {
  const list = open[open.length - 1];
  if (list === undefined) {
    const promise = stream.done();
    promise.catch(ignore);
    return promise;
  }
  let resolve: () => void = ignore;
  let reject: (error: Error) => void = ignore;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(ignore);
  list.push({ stream, promise, resolve, reject });
  return promise;
}

/**
 * Runs `enqueue` between ncclGroupStart and ncclGroupEnd: every collective it calls (on any
 * communicator of this process) is launched together at the end, which one process driving
 * several GPUs needs (one rank would otherwise wait for the next). `enqueue` must enqueue
 * synchronously. Groups nest; only the outermost launches. Returns a promise that settles when
 * all the group's collectives have completed. If `enqueue` throws, the group is still closed
 * (what was enqueued is launched) and the error is thrown.
 */
export function group(enqueue: () => void): Promise<void> {
  const nccl_ = ncclChecked();
  nccl_.ncclGroupStart();
  const mine: Pending[] = [];
  open.push(mine);
  let failure: unknown;
  let hasFailure = false;
  try {
    const result: unknown = enqueue();
    if (typeof result === 'object' && result !== null && typeof (result as { then?: unknown }).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, ignore);
      throw new TypeError(
        'Communicator.group: the callback returned a promise; enqueue collectives synchronously (collectives awaited inside a group would never launch)',
      );
    }
  } catch (e) {
    failure = e;
    hasFailure = true;
  }
  open.pop();
  const outer = open[open.length - 1];
  // Every ncclGroupStart has its ncclGroupEnd; NCCL launches at the outermost one only.
  let endError: Error | undefined;
  try {
    nccl_.ncclGroupEnd();
  } catch (e) {
    endError = e as Error; // thrown below, once the context is restored and the group's waiters settled
  }
  if (outer === undefined) restoreCurrentContext();
  if (outer !== undefined && endError === undefined) outer.push(...mine);
  else settle(mine, endError);
  const all = Promise.all(mine.map((p) => p.promise)).then(ignore);
  all.catch(ignore);
  if (hasFailure) throw failure;
  if (endError) throw endError;
  return all;
}

/** After the outermost end: one stream.done() per distinct stream settles its collectives. */
function settle(list: readonly Pending[], error: Error | undefined): void {
  const byStream = new Map<Stream, Promise<void>>();
  for (const p of list) {
    if (error) {
      p.reject(error);
      continue;
    }
    let done = byStream.get(p.stream);
    if (!done) {
      try {
        done = p.stream.done();
      } catch (e) {
        done = Promise.reject(e instanceof Error ? e : new Error(String(e)));
      }
      byStream.set(p.stream, done);
    }
    done.then(p.resolve, p.reject);
  }
}
