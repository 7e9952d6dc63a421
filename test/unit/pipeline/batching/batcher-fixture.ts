/**
 * The shared setup of the Batcher tests (batcher-*.test.ts): deferred promises, an outcome tracker,
 * recording and manual dispatches, a seeded random source, a thread-holding wait, the base options.
 */
import { type BatchDispatch, type BatcherOptions } from '../../../../src/pipeline/batching/batcher.js';

/** A maxWaitMs no test waits for: a partial batch goes only when a test makes it. */
export const LONG_WAIT = 60_000;

/** Resolves after `ms` ms. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise with its resolvers, settled by the test. */
interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
}

/** A fresh Deferred. */
function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (reason: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Tracks a promise's outcome without awaiting it. */
export function track<T>(promise: Promise<T>): {
  settled: () => boolean;
  value: () => T | undefined;
  error: () => unknown;
} {
  let settled = false;
  let value: T | undefined;
  let error: unknown;
  promise.then(
    (v) => {
      settled = true;
      value = v;
    },
    (e: unknown) => {
      settled = true;
      error = e;
    },
  );
  return { settled: () => settled, value: () => value, error: () => error };
}

/** Lets pending promise reactions (and the batcher's setImmediate timer, if any) run. */
export const drainMicrotasks = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Synchronous dispatch that records each batch and maps x -> x * 10. */
export function recorder(): { batches: number[][]; dispatch: BatchDispatch<number, number> } {
  const batches: number[][] = [];
  return {
    batches,
    dispatch: (items) => {
      batches.push([...items]);
      return items.map((x) => x * 10);
    },
  };
}

/** Dispatch whose batches complete only when the test says so. */
export function manual<I, O>(): {
  calls: { items: I[]; batchId: number; done: Deferred<readonly O[]> }[];
  dispatch: BatchDispatch<I, O>;
} {
  const calls: { items: I[]; batchId: number; done: Deferred<readonly O[]> }[] = [];
  return {
    calls,
    dispatch: (items, info) => {
      const done = deferred<readonly O[]>();
      calls.push({ items: [...items], batchId: info.batchId, done });
      return done.promise;
    },
  };
}

/** A seeded pseudo-random source in [0, 1) (mulberry32): the same order of completions on every run. */
export function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Holds the thread for `ms` ms. */
export function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a dispatch that holds the thread, like a synchronous GPU call would
  }
}

/** Options most tests start from: batches of 4, no timer flush. */
export const base: BatcherOptions = { maxBatchSize: 4, maxWaitMs: LONG_WAIT, channelSize: 1000 };
