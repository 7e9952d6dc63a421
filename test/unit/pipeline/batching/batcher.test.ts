import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  Batcher,
  BatcherClosedError,
  BatcherDispatchError,
  BatcherFullError,
  BatcherTimeoutError,
  type BatchDispatch,
  type BatcherOptions,
} from '../../../../src/pipeline/batching/batcher.js';

const LONG_WAIT = 60_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
}

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
function track<T>(promise: Promise<T>): { settled: () => boolean; value: () => T | undefined; error: () => unknown } {
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
const drainMicrotasks = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Synchronous dispatch that records each batch and maps x -> x * 10. */
function recorder(): { batches: number[][]; dispatch: BatchDispatch<number, number> } {
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
function manual<I, O>(): {
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

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // a dispatch that holds the thread, like a synchronous GPU call would
  }
}

const base: BatcherOptions = { maxBatchSize: 4, maxWaitMs: LONG_WAIT, channelSize: 1000 };

afterEach(() => {
  vi.restoreAllMocks();
});

describe('Batcher options', () => {
  it.each([
    [{ maxBatchSize: 0 }, /maxBatchSize must be a positive integer, got 0/],
    [{ maxBatchSize: 2.5 }, /maxBatchSize must be a positive integer, got 2\.5/],
    [{ maxBatchSize: Number.NaN }, /maxBatchSize must be a positive integer, got NaN/],
    [{ channelSize: -1 }, /channelSize must be a positive integer, got -1/],
    [{ maxWaitMs: -1 }, /maxWaitMs must be 0\.\.2147483647 ms \(the most a Node timer holds\), got -1/],
    [{ maxWaitMs: Infinity }, /maxWaitMs must be 0\.\.2147483647 ms .*got Infinity/],
    [{ maxWaitMs: 2 ** 53 }, /maxWaitMs must be 0\.\.2147483647 ms .*got 9007199254740992/],
    [{ maxWaitMs: 2 ** 31 }, /maxWaitMs must be 0\.\.2147483647 ms .*got 2147483648/],
    [{ maxWaitMs: Number.NaN }, /maxWaitMs must be 0\.\.2147483647 ms .*got NaN/],
    [{ dispatchTimeoutMs: 2 ** 31 }, /dispatchTimeoutMs must be 0\.\.2147483647 ms .*got 2147483648/],
    [
      { autoTune: { targetLatencyMs: 5, maxWaitMs: 1e12 } },
      /autoTune\.maxWaitMs must be 0\.\.2147483647 ms .*got 1000000000000/,
    ],
    [{ maxConcurrentBatches: 0 }, /maxConcurrentBatches must be a positive integer, got 0/],
    [{ autoTune: { targetLatencyMs: 0 } }, /autoTune\.targetLatencyMs must be > 0/],
    [
      { autoTune: { targetLatencyMs: 5, minBatchSize: 8 } },
      /autoTune\.minBatchSize \(8\) must not exceed maxBatchSize \(4\)/,
    ],
    [
      { autoTune: { targetLatencyMs: 5, maxBatchSize: 2 } },
      /maxBatchSize \(4\) must not exceed autoTune\.maxBatchSize \(2\)/,
    ],
  ] as [Partial<BatcherOptions>, RegExp][])('rejects %o', (bad, message) => {
    expect(() => new Batcher(recorder().dispatch, { ...base, label: 'v', ...bad })).toThrow(RangeError);
    expect(() => new Batcher(recorder().dispatch, { ...base, label: 'v', ...bad })).toThrow(message);
    expect(() => new Batcher(recorder().dispatch, { ...base, label: 'v', ...bad })).toThrow(/Batcher "v"/);
  });

  it('rejects a dispatch that is not a function', () => {
    const notAFunction = 42 as unknown as BatchDispatch<number, number>;
    expect(() => new Batcher(notAFunction, base)).toThrow(/dispatch must be a function, got number/);
  });

  it('resolves an empty submit with [] without dispatching', async () => {
    const { batches, dispatch } = recorder();
    const batcher = new Batcher(dispatch, base);
    await expect(batcher.submit([])).resolves.toEqual([]);
    await batcher.close();
    expect(batches).toEqual([]);
    expect(batcher.metrics.batches).toBe(0);
  });
});

describe('Batcher flushing', () => {
  it('dispatches a full batch at once, without waiting for the timer', async () => {
    const { batches, dispatch } = recorder();
    const batcher = new Batcher(dispatch, base);
    const results = [1, 2, 3].map((x) => batcher.submitOne(x));
    expect(batches).toEqual([]);
    results.push(batcher.submitOne(4));
    expect(batches).toEqual([[1, 2, 3, 4]]); // synchronously, inside the 4th submit
    await expect(Promise.all(results)).resolves.toEqual([10, 20, 30, 40]);

    const more = batcher.submit([5, 6, 7, 8, 9]);
    expect(batches).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(batcher.metrics.queued).toBe(1);
    await batcher.close();
    await expect(more).resolves.toEqual([50, 60, 70, 80, 90]);
  });

  it('dispatches a partial batch once its oldest item has waited maxWaitMs', async () => {
    const dispatchedAt: number[] = [];
    const batcher = new Batcher<number, number>(
      (items) => {
        dispatchedAt.push(performance.now());
        return items;
      },
      { ...base, maxBatchSize: 100, maxWaitMs: 15 },
    );
    const start = performance.now();
    const result = batcher.submit([1, 2, 3]);
    await sleep(5);
    expect(dispatchedAt).toEqual([]);
    await expect(result).resolves.toEqual([1, 2, 3]);
    expect(dispatchedAt).toHaveLength(1);
    const waited = (dispatchedAt[0] ?? 0) - start;
    expect(waited).toBeGreaterThanOrEqual(13);
    expect(waited).toBeLessThan(200);
    await batcher.close();
  });

  it('times the flush from the oldest item, not the newest', async () => {
    const dispatchedAt: number[] = [];
    const { dispatch } = recorder();
    const batcher = new Batcher<number, number>(
      (items, info) => {
        dispatchedAt.push(performance.now());
        return dispatch(items, info);
      },
      // Long enough that a loaded 2-core machine's timer jitter (70 ms seen) cannot blur the two deadlines.
      { ...base, maxBatchSize: 100, maxWaitMs: 300 },
    );
    const start = performance.now();
    const first = batcher.submitOne(1);
    await sleep(150);
    const secondAt = performance.now();
    const second = batcher.submitOne(2);
    await expect(Promise.all([first, second])).resolves.toEqual([10, 20]);
    expect(dispatchedAt).toHaveLength(1); // one batch holding both
    // The oldest item's deadline is start + 300; the newest item's would be secondAt + 300 (>= start + 450).
    expect((dispatchedAt[0] ?? 0) - start).toBeLessThan(secondAt - start + 300 - 100);
    await batcher.close();
  });

  it('arms one timer for a burst of submits, not one per submit', async () => {
    const batcher = new Batcher(recorder().dispatch, { ...base, maxBatchSize: 1000, maxWaitMs: 1000 });
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const results = Array.from({ length: 200 }, (_, i) => batcher.submitOne(i));
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    vi.restoreAllMocks();
    await batcher.flush();
    await Promise.all(results);
    expect(batcher.metrics.batches).toBe(1);
    await batcher.close();
  });

  it('dispatches every submit at once when maxWaitMs is 0', async () => {
    const { batches, dispatch } = recorder();
    const batcher = new Batcher(dispatch, { ...base, maxBatchSize: 100, maxWaitMs: 0 });
    const a = batcher.submit([1, 2]);
    const b = batcher.submitOne(3);
    expect(batches).toEqual([[1, 2], [3]]);
    await expect(Promise.all([a, b])).resolves.toEqual([[10, 20], 30]);
    await batcher.close();
  });

  it('flush() dispatches what is queued and resolves once it has settled', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, { ...base, maxBatchSize: 100 });
    const result = track(batcher.submit([1, 2, 3]));
    const flushed = track(batcher.flush());
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
    await drainMicrotasks();
    expect(flushed.settled()).toBe(false);
    calls[0]?.done.resolve([4, 5, 6]);
    await drainMicrotasks();
    expect(flushed.settled()).toBe(true);
    expect(result.value()).toEqual([4, 5, 6]);
    await expect(batcher.flush()).resolves.toBeUndefined(); // nothing queued
    await batcher.close();
  });
});

describe('Batcher routing', () => {
  it('gives each of many concurrent submitters its own outputs, in order, whatever the completion order', async () => {
    const random = mulberry32(12345);
    const { calls, dispatch } = manual<{ caller: number; index: number }, string>();
    const maxBatchSize = 16;
    // Every batch in flight at once (asked for explicitly: the default bounds them), so completion order is free.
    const batcher = new Batcher(dispatch, {
      maxBatchSize,
      maxWaitMs: LONG_WAIT,
      channelSize: 10_000,
      maxConcurrentBatches: Infinity,
    });

    const submitted: { caller: number; index: number }[] = [];
    const expected: string[][] = [];
    const results: Promise<string[]>[] = [];
    for (let caller = 0; caller < 300; caller++) {
      const size = Math.floor(random() * 41); // 0..40, empty submits included
      const items = Array.from({ length: size }, (_, index) => ({ caller, index }));
      submitted.push(...items);
      expected.push(items.map(({ caller: c, index }) => `${c}:${index}`));
      if (size === 1 && random() < 0.5) {
        results.push(batcher.submitOne(items[0] ?? { caller, index: 0 }).then((out) => [out]));
      } else {
        results.push(batcher.submit(items));
      }
    }
    void batcher.flush();

    expect(calls.length).toBeGreaterThan(10);
    for (const call of calls) expect(call.items.length).toBeLessThanOrEqual(maxBatchSize);
    expect(calls.flatMap((c) => c.items)).toEqual(submitted); // arrival order, nothing lost or duplicated

    // Complete the batches in reverse order, each with its own outputs.
    for (const call of [...calls].reverse()) {
      call.done.resolve(call.items.map(({ caller, index }) => `${caller}:${index}`));
    }
    expect(await Promise.all(results)).toEqual(expected);
    await batcher.close();
  });

  it('splits a submit across batches and resolves it only when all its items are done', async () => {
    const { calls, dispatch } = manual<string, string>();
    const batcher = new Batcher(dispatch, base);
    const a = track(batcher.submit(['a0', 'a1', 'a2']));
    const b = track(batcher.submit(['b0', 'b1', 'b2', 'b3', 'b4', 'b5']));
    const c = track(batcher.submitOne('c0'));
    void batcher.flush();
    expect(calls.map((call) => call.items)).toEqual([
      ['a0', 'a1', 'a2', 'b0'],
      ['b1', 'b2', 'b3', 'b4'],
      ['b5', 'c0'],
    ]);
    const upper = (i: number): void => calls[i]?.done.resolve(calls[i]?.items.map((s) => s.toUpperCase()) ?? []);
    upper(2);
    upper(1);
    await drainMicrotasks();
    expect(c.value()).toBe('C0');
    expect(a.settled()).toBe(false);
    expect(b.settled()).toBe(false); // b0 is in the first batch, still running
    upper(0);
    await drainMicrotasks();
    expect(a.value()).toEqual(['A0', 'A1', 'A2']);
    expect(b.value()).toEqual(['B0', 'B1', 'B2', 'B3', 'B4', 'B5']);
    await batcher.close();
  });

  it('passes the batch id and label to dispatch', async () => {
    const seen: { batchId: number; label: string }[] = [];
    const batcher = new Batcher<number, number>(
      (items, info) => {
        seen.push(info);
        return items;
      },
      { ...base, maxBatchSize: 2, label: 'fft' },
    );
    await batcher.submit([1, 2, 3, 4]);
    expect(seen).toEqual([
      { batchId: 1, label: 'fft' },
      { batchId: 2, label: 'fft' },
    ]);
    await batcher.close();
  });

  it('accepts submits made from inside a synchronous dispatch', async () => {
    const batches: number[][] = [];
    const nested: Promise<number>[] = [];
    const batcher: Batcher<number, number> = new Batcher<number, number>(
      (items) => {
        batches.push([...items]);
        if (items[0] === 1) nested.push(batcher.submitOne(100), batcher.submitOne(101));
        return items.map((x) => x + 1);
      },
      { ...base, maxBatchSize: 2 },
    );
    await expect(batcher.submit([1, 2])).resolves.toEqual([2, 3]);
    await expect(Promise.all(nested)).resolves.toEqual([101, 102]);
    expect(batches).toEqual([
      [1, 2],
      [100, 101],
    ]);
    await batcher.close();
  });
});

describe('Batcher backpressure', () => {
  it('dispatches early when the channel is full, since the batch cannot grow', () => {
    const { batches, dispatch } = recorder();
    const batcher = new Batcher(dispatch, { maxBatchSize: 100, maxWaitMs: LONG_WAIT, channelSize: 2 });
    void batcher.submitOne(1);
    expect(batches).toEqual([]);
    void batcher.submit([2, 3]);
    expect(batches).toEqual([[1, 2, 3]]);
    return batcher.close();
  });

  it('makes submits wait for room in FIFO order, or fail at once with wait: false', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, {
      maxBatchSize: 2,
      maxWaitMs: LONG_WAIT,
      channelSize: 2,
      maxConcurrentBatches: 1,
      maxWaiting: 16,
    });
    const first = track(batcher.submit([1, 2])); // dispatched: the one batch allowed in flight
    const queued = [track(batcher.submitOne(3)), track(batcher.submitOne(4))]; // fill the channel
    const waiting = [5, 6, 7, 8, 9, 10, 11].map((x) => track(batcher.submitOne(x)));
    expect(calls).toHaveLength(1);
    expect(batcher.metrics).toMatchObject({ queued: 2, waiting: 7, inFlight: 2, inFlightBatches: 1 });

    await expect(batcher.submitOne(99, { wait: false })).rejects.toThrow(BatcherFullError);
    await expect(batcher.submitOne(99, { wait: false })).rejects.toThrow(/channelSize 2/);

    const complete = async (i: number): Promise<void> => {
      const call = calls[i];
      expect(call).toBeDefined();
      call?.done.resolve(call.items.map((x) => -x));
      await drainMicrotasks();
    };
    for (let i = 0; i < 5; i++) await complete(i);
    const closing = batcher.close(); // 11 alone would wait for maxWaitMs
    await complete(5);
    await closing;
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11]]);
    expect(first.value()).toEqual([-1, -2]);
    expect([...queued, ...waiting].map((t) => t.value())).toEqual([-3, -4, -5, -6, -7, -8, -9, -10, -11]);
  });

  it('rejects a signal that is not an AbortSignal through the promise (it threw from submit())', async () => {
    const { dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, {
      maxBatchSize: 1,
      maxWaitMs: LONG_WAIT,
      channelSize: 1,
      maxConcurrentBatches: 1,
      maxWaiting: 4,
      label: 's',
    });
    let submitted: Promise<unknown> | undefined;
    expect(() => (submitted = batcher.submitOne(1, { signal: {} as AbortSignal }))).not.toThrow();
    await expect(submitted).rejects.toThrow(/^Batcher "s": submit\(\) signal must be an AbortSignal$/);
    await expect(batcher.submit([1], { signal: null as never })).rejects.toThrow(TypeError);
    expect(batcher.metrics.queued).toBe(0);
    batcher.dispose();
  });

  it('rejects an aborted waiting submit with the signal reason and leaves the others alone', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, {
      maxBatchSize: 1,
      maxWaitMs: LONG_WAIT,
      channelSize: 1,
      maxConcurrentBatches: 1,
      maxWaiting: 4,
    });
    const first = batcher.submitOne(1);
    const second = batcher.submitOne(2);
    const controller = new AbortController();
    const aborted = batcher.submitOne(3, { signal: controller.signal });
    const last = batcher.submitOne(4);
    expect(batcher.metrics.waiting).toBe(2);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(batcher.metrics.waiting).toBe(1);
    for (let i = 0; i < 3; i++) {
      calls[i]?.done.resolve(calls[i]?.items ?? []);
      await drainMicrotasks();
    }
    await expect(Promise.all([first, second, last])).resolves.toEqual([1, 2, 4]);
    expect(calls.map((c) => c.items)).toEqual([[1], [2], [4]]);
    await batcher.close();
  });

  it('cancels an accepted submit that has not been dispatched yet, but not one already dispatched', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, base);
    const queuedController = new AbortController();
    const cancelled = batcher.submit([1, 2], { signal: queuedController.signal });
    const kept = batcher.submitOne(3);
    queuedController.abort('no longer needed');
    await expect(cancelled).rejects.toBe('no longer needed');
    expect(batcher.metrics.queued).toBe(1);

    const lateController = new AbortController();
    const dispatched = batcher.submit([4, 5, 6], { signal: lateController.signal });
    expect(calls.map((c) => c.items)).toEqual([[3, 4, 5, 6]]);
    lateController.abort('too late');
    calls[0]?.done.resolve([30, 40, 50, 60]);
    await expect(Promise.all([kept, dispatched])).resolves.toEqual([30, [40, 50, 60]]);
    await batcher.close();
  });

  it('removes its abort listener once a submit is dispatched', async () => {
    const batcher = new Batcher(recorder().dispatch, base);
    const shared = new AbortController(); // one signal for many submits, as a request scope would use
    const results = Array.from({ length: 50 }, (_, i) => batcher.submitOne(i, { signal: shared.signal }));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(2); // the last two are still queued
    await batcher.flush();
    await Promise.all(results);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    await batcher.close();
  });

  it('rejects at once for a signal that is already aborted', async () => {
    const { batches, dispatch } = recorder();
    const batcher = new Batcher(dispatch, base);
    await expect(batcher.submitOne(1, { signal: AbortSignal.abort('early') })).rejects.toBe('early');
    await batcher.close();
    expect(batches).toEqual([]);
  });
});

describe('Batcher close', () => {
  it('dispatches everything accepted and resolves after it has all settled', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, base);
    const results = [track(batcher.submit([1, 2, 3, 4, 5])), track(batcher.submitOne(6))];
    expect(calls).toHaveLength(1);
    const closed = track(batcher.close());
    expect(calls.map((c) => c.items)).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
    calls[1]?.done.resolve([50, 60]);
    await drainMicrotasks();
    expect(closed.settled()).toBe(false); // batch 1 still in flight
    calls[0]?.done.resolve([10, 20, 30, 40]);
    await drainMicrotasks();
    expect(closed.settled()).toBe(true);
    expect(results.map((r) => r.value())).toEqual([[10, 20, 30, 40, 50], 60]);
    expect(batcher.metrics).toMatchObject({ queued: 0, inFlight: 0, waiting: 0 });
  });

  it('rejects new submits and submits still waiting for room with BatcherClosedError', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, {
      maxBatchSize: 1,
      maxWaitMs: LONG_WAIT,
      channelSize: 1,
      maxConcurrentBatches: 1,
      label: 'closing',
    });
    const inFlight = batcher.submitOne(1);
    const accepted = batcher.submitOne(2);
    const waiting = batcher.submitOne(3);
    const closing = batcher.close();
    await expect(waiting).rejects.toThrow(BatcherClosedError);
    await expect(batcher.submitOne(4)).rejects.toThrow(BatcherClosedError);
    await expect(batcher.submit([5])).rejects.toThrow(/Batcher "closing" is closed/);
    calls[0]?.done.resolve([10]);
    await drainMicrotasks();
    calls[1]?.done.resolve([20]);
    await closing;
    await expect(Promise.all([inFlight, accepted])).resolves.toEqual([10, 20]);
    expect(calls).toHaveLength(2);
  });

  it('is idempotent', async () => {
    const batcher = new Batcher(recorder().dispatch, base);
    const pending = batcher.submitOne(1);
    const first = batcher.close();
    expect(batcher.close()).toBe(first);
    await first;
    await expect(pending).resolves.toBe(10);
    await expect(batcher.close()).resolves.toBeUndefined();
  });

  it('settles every submit even when batches fail', async () => {
    const batcher = new Batcher<number, number>(
      (items) => {
        if (items.includes(3)) throw new Error('boom');
        return items;
      },
      { ...base, maxBatchSize: 2 },
    );
    const outcomes = [1, 2, 3, 4, 5].map((x) => track(batcher.submitOne(x)));
    await batcher.close();
    await drainMicrotasks();
    expect(outcomes.every((o) => o.settled())).toBe(true);
    expect(outcomes.map((o) => o.value())).toEqual([1, 2, undefined, undefined, 5]);
  });
});

describe('Batcher errors', () => {
  it('rejects only the submitters of a failed batch, with the dispatch error as cause', async () => {
    const failure = new Error('kernel launch failed');
    const batcher = new Batcher<string, string>(
      (items) => {
        if (items.includes('bad')) throw failure;
        return items.map((s) => s.toUpperCase());
      },
      { ...base, maxBatchSize: 2, label: 'gpu' },
    );
    const before = batcher.submit(['a', 'b']); // batch 1
    const neighbour = batcher.submitOne('c'); // batch 2, with 'bad'
    const bad = batcher.submitOne('bad');
    const after = batcher.submit(['d', 'e']); // batch 3

    await expect(before).resolves.toEqual(['A', 'B']);
    await expect(after).resolves.toEqual(['D', 'E']);
    const error: unknown = await bad.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatcherDispatchError);
    expect((error as BatcherDispatchError).cause).toBe(failure);
    expect((error as BatcherDispatchError).batchId).toBe(2);
    expect((error as Error).message).toMatch(/Batcher "gpu": batch #2 \(2 items\) failed: kernel launch failed/);
    await expect(neighbour).rejects.toBe(error);
    expect(batcher.metrics.failedBatches).toBe(1);
    await batcher.close();
  });

  it('rejects a submit that spans a failed and a successful batch, and drops its items still queued', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, base);
    const neighbour = track(batcher.submitOne(0));
    const spanning = track(batcher.submit([1, 2, 3, 4, 5, 6, 7, 8, 9])); // batches [0,1,2,3], [4..7], queued 8, 9
    const failure = new Error('async failure');
    calls[1]?.done.resolve([40, 50, 60, 70]);
    calls[0]?.done.reject(failure);
    await drainMicrotasks();
    expect((spanning.error() as Error).cause).toBe(failure);
    expect((neighbour.error() as Error).cause).toBe(failure);
    expect(batcher.metrics.queued).toBe(0); // 8 and 9 were not worth dispatching any more
    await batcher.close();
    expect(calls).toHaveLength(2);
  });

  it('rejects the whole batch when dispatch returns the wrong number of outputs', async () => {
    const batcher = new Batcher<number, number>((items) => items.slice(1), { ...base, label: 'count' });
    const a = batcher.submit([1, 2]);
    const b = batcher.submit([3, 4]);
    await expect(a).rejects.toThrow(BatcherDispatchError);
    await expect(b).rejects.toThrow(/Batcher "count": batch #1 dispatch returned 3 outputs for 4 items/);
    await batcher.close();
  });

  it('rejects the whole batch when dispatch returns something other than an array', async () => {
    const notArray = ((): Promise<readonly number[]> =>
      Promise.resolve(7 as unknown as readonly number[])) as BatchDispatch<number, number>;
    const batcher = new Batcher<number, number>(notArray, { ...base, maxBatchSize: 1 });
    await expect(batcher.submitOne(1)).rejects.toThrow(
      /batch #1 dispatch returned number instead of an array for 1 items/,
    );
    await batcher.close();
  });
});

describe('Batcher metrics', () => {
  it('counts batches, items, fill rate and in-flight work', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, base);
    const full = batcher.submit([1, 2, 3, 4, 5, 6, 7, 8]);
    const partial = batcher.submit([9, 10]);
    expect(batcher.metrics).toMatchObject({ batches: 2, items: 8, queued: 2, inFlight: 8, inFlightBatches: 2 });
    void batcher.flush();
    expect(batcher.metrics).toMatchObject({ batches: 3, items: 10, queued: 0, inFlight: 10, inFlightBatches: 3 });
    for (const call of calls) call.done.resolve(call.items);
    await Promise.all([full, partial]);
    const metrics = batcher.metrics;
    expect(metrics).toMatchObject({ batches: 3, items: 10, queued: 0, inFlight: 0, failedBatches: 0 });
    expect(metrics.fillRate).toBeCloseTo((1 + 1 + 0.5) / 3, 10);
    expect(metrics.itemsPerSecond).toBeGreaterThan(0);
    expect(metrics.latencyP99Ms).toBeGreaterThanOrEqual(metrics.waitP99Ms);
    await batcher.close();
  });

  it('measures the wait for the timer and the latency to resolve', async () => {
    const batcher = new Batcher<number, number>(
      async (items) => {
        await sleep(10);
        return items;
      },
      { ...base, maxBatchSize: 100, maxWaitMs: 20 },
    );
    await batcher.submit([1, 2, 3]);
    const metrics = batcher.metrics;
    expect(metrics.waitP50Ms).toBeGreaterThanOrEqual(18);
    expect(metrics.waitP50Ms).toBeLessThan(200);
    expect(metrics.latencyP50Ms).toBeGreaterThanOrEqual(metrics.waitP50Ms + 8);
    expect(metrics.latencyP99Ms).toBe(metrics.latencyP50Ms); // three items of one submit share one latency
    expect(metrics.itemsPerSecond).toBeGreaterThan(3 / 0.5);
    expect(metrics.itemsPerSecond).toBeLessThan(3 / 0.025);
    await batcher.close();
  });
});

describe('Batcher auto-tuner', () => {
  it('shrinks maxWaitMs first, then maxBatchSize, while latency is over target', async () => {
    const seen: { maxBatchSize: number; maxWaitMs: number }[] = [];
    const batcher: Batcher<number, number> = new Batcher<number, number>(
      (items) => {
        seen.push({ maxBatchSize: batcher.maxBatchSize, maxWaitMs: batcher.maxWaitMs });
        busyWait(2);
        return items;
      },
      {
        maxBatchSize: 8,
        maxWaitMs: 2,
        channelSize: 100,
        autoTune: { targetLatencyMs: 1, minBatchSize: 2 },
      },
    );
    const items = [1, 2, 3, 4, 5, 6, 7, 8];
    for (let i = 0; i < 30; i++) await batcher.submit(items);
    expect(batcher.maxWaitMs).toBe(0);
    expect(batcher.maxBatchSize).toBe(2);
    const firstSmaller = seen.findIndex((s) => s.maxBatchSize < 8);
    expect(firstSmaller).toBeGreaterThan(0);
    expect(seen.slice(0, firstSmaller).every((s) => s.maxBatchSize === 8)).toBe(true);
    expect(seen[firstSmaller]?.maxWaitMs).toBe(0); // the wait was already at its minimum
    expect(
      seen.slice(1, firstSmaller).every((s, i) => s.maxWaitMs < (seen[i]?.maxWaitMs ?? 0) || s.maxWaitMs === 0),
    ).toBe(true);
    await batcher.close();
  });

  it('grows maxWaitMs when latency is well under target and batches are not full', async () => {
    const batcher = new Batcher<number, number>((items) => items, {
      maxBatchSize: 100,
      maxWaitMs: 1,
      channelSize: 100,
      autoTune: { targetLatencyMs: 50, maxWaitMs: 10 },
    });
    const waits: number[] = [];
    for (let i = 0; i < 15; i++) {
      void batcher.submitOne(i);
      await batcher.flush();
      waits.push(batcher.maxWaitMs);
    }
    expect(waits[0]).toBeCloseTo(1.25, 10);
    expect(batcher.maxWaitMs).toBe(10);
    expect(batcher.maxBatchSize).toBe(100);
    await batcher.close();
  });

  it('grows maxBatchSize when batches are full and latency is well under target', async () => {
    const sizes: number[] = [];
    const batcher = new Batcher<number, number>(
      (items) => {
        sizes.push(items.length);
        return items;
      },
      { maxBatchSize: 4, maxWaitMs: 5, channelSize: 100, autoTune: { targetLatencyMs: 100, maxBatchSize: 16 } },
    );
    await batcher.submit(Array.from({ length: 64 }, (_, i) => i));
    expect(batcher.maxBatchSize).toBe(16);
    expect(sizes.slice(0, 6)).toEqual([4, 5, 7, 9, 12, 15]);
    expect(sizes.every((size, i) => i === 0 || size >= (sizes[i - 1] ?? 0) || i === sizes.length - 1)).toBe(true);
    await batcher.close();
  });
});

describe('Batcher: nothing waits forever, bounded memory (issue 10)', () => {
  it('bounds the submits waiting for room: beyond maxWaiting, BatcherFullError', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, {
      maxBatchSize: 1,
      maxWaitMs: LONG_WAIT,
      channelSize: 1,
      maxConcurrentBatches: 1,
      maxWaiting: 2,
    });
    const first = track(batcher.submitOne(1)); // in flight
    const queued = track(batcher.submitOne(2)); // fills the channel
    const waiting = [track(batcher.submitOne(3)), track(batcher.submitOne(4))];
    await expect(batcher.submitOne(5)).rejects.toThrow(BatcherFullError);
    await expect(batcher.submitOne(5)).rejects.toThrow(/maxWaiting 2/);
    expect(batcher.metrics.waiting).toBe(2);
    for (let i = 0; i < 4; i++) {
      await drainMicrotasks();
      calls[i]!.done.resolve(calls[i]!.items);
    }
    await batcher.close();
    expect([first, queued, ...waiting].map((t) => t.value())).toEqual([[1], [2], [3], [4]].map((x) => x[0]));
  });

  it('maxWaiting 0 never queues a waiter', async () => {
    const { calls, dispatch } = manual<number, number>();
    const batcher = new Batcher(dispatch, {
      maxBatchSize: 1,
      maxWaitMs: LONG_WAIT,
      channelSize: 1,
      maxConcurrentBatches: 1,
      maxWaiting: 0,
    });
    void batcher.submitOne(1);
    void batcher.submitOne(2);
    await expect(batcher.submitOne(3)).rejects.toThrow(BatcherFullError);
    calls[0]!.done.resolve([1]);
    await drainMicrotasks();
    calls[1]!.done.resolve([2]);
    await batcher.close();
  });

  it('fails a dispatch that runs past dispatchTimeoutMs, aborts its signal and frees its place', async () => {
    const signals: AbortSignal[] = [];
    let hang = true;
    const batcher = new Batcher<number, number>(
      (items, info) => {
        signals.push(info.signal);
        if (hang) return new Promise<readonly number[]>(() => undefined);
        return items;
      },
      { maxBatchSize: 2, maxWaitMs: 0, channelSize: 4, maxConcurrentBatches: 1, dispatchTimeoutMs: 20 },
    );
    const stuck = batcher.submit([1, 2]);
    await expect(stuck).rejects.toBeInstanceOf(BatcherTimeoutError);
    await expect(stuck).rejects.toBeInstanceOf(BatcherDispatchError);
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[0]!.reason).toBeInstanceOf(BatcherTimeoutError);
    hang = false;
    await expect(batcher.submit([3, 4])).resolves.toEqual([3, 4]);
    expect(batcher.metrics.inFlightBatches).toBe(0);
    await batcher.close();
  });

  it('a dispatch that settles in time clears its timer (no timeout later)', async () => {
    const batcher = new Batcher<number, number>(async (items) => items, {
      maxBatchSize: 2,
      maxWaitMs: 0,
      channelSize: 4,
      dispatchTimeoutMs: 10_000,
    });
    await expect(batcher.submit([1, 2])).resolves.toEqual([1, 2]);
    await batcher.close();
  });

  it('close({ timeoutMs }) gives up on a dispatch that never returns: every submit settles', async () => {
    const signals: AbortSignal[] = [];
    const batcher = new Batcher<number, number>(
      (_items, info) => {
        signals.push(info.signal);
        return new Promise<readonly number[]>(() => undefined);
      },
      { maxBatchSize: 2, maxWaitMs: LONG_WAIT, channelSize: 2, maxConcurrentBatches: 1 },
    );
    const inFlight = track(batcher.submit([1, 2]));
    const queued = track(batcher.submit([3]));
    const waiting = track(batcher.submit([4, 5]));
    const t0 = performance.now();
    await batcher.close({ timeoutMs: 30 });
    expect(performance.now() - t0).toBeLessThan(1000);
    await drainMicrotasks();
    for (const t of [inFlight, queued, waiting]) {
      expect(t.settled()).toBe(true);
      expect(t.error()).toBeInstanceOf(BatcherClosedError);
    }
    expect(signals.length).toBeGreaterThan(0);
    expect(signals.every((sig) => sig.aborted)).toBe(true);
    expect(batcher.metrics).toMatchObject({ queued: 0, inFlight: 0, inFlightBatches: 0, waiting: 0 });
    await expect(batcher.submit([6])).rejects.toThrow(BatcherClosedError);
  });

  it('close({ signal }) gives up when the signal aborts; a drain that finishes first just resolves', async () => {
    const controller = new AbortController();
    const hanging = new Batcher<number, number>(() => new Promise<readonly number[]>(() => undefined), {
      maxBatchSize: 1,
      maxWaitMs: 0,
      channelSize: 1,
    });
    const lost = track(hanging.submitOne(1));
    const closing = hanging.close({ signal: controller.signal });
    controller.abort();
    await closing;
    await drainMicrotasks();
    expect(lost.error()).toBeInstanceOf(BatcherClosedError);

    const fine = new Batcher<number, number>((items) => items, { maxBatchSize: 1, maxWaitMs: 0, channelSize: 1 });
    const ok = fine.submitOne(7);
    await fine.close({ timeoutMs: 10_000 });
    await expect(ok).resolves.toBe(7);
  });

  it('dispose() settles everything at once, without draining; then it is closed', async () => {
    const signals: AbortSignal[] = [];
    const batcher = new Batcher<number, number>(
      (_items, info) => {
        signals.push(info.signal);
        return new Promise<readonly number[]>(() => undefined);
      },
      { maxBatchSize: 2, maxWaitMs: LONG_WAIT, channelSize: 1, maxConcurrentBatches: 1 },
    );
    const submits = [track(batcher.submit([1, 2])), track(batcher.submit([3])), track(batcher.submit([4]))];
    batcher.dispose();
    batcher.dispose();
    await drainMicrotasks();
    for (const t of submits) expect(t.error()).toBeInstanceOf(BatcherClosedError);
    expect(signals[0]!.aborted).toBe(true);
    expect(batcher.closed).toBe(true);
    await expect(batcher.close()).resolves.toBeUndefined();
    await expect(batcher.submitOne(5)).rejects.toThrow(BatcherClosedError);
  });

  it('refuses bad bounds, naming the field', async () => {
    const base = { maxBatchSize: 1, maxWaitMs: 0, channelSize: 1 };
    expect(() => new Batcher((x: readonly number[]) => x, { ...base, maxWaiting: -1 })).toThrow(/maxWaiting/);
    expect(() => new Batcher((x: readonly number[]) => x, { ...base, dispatchTimeoutMs: 2 ** 31 })).toThrow(
      /dispatchTimeoutMs/,
    );
    expect(() => new Batcher((x: readonly number[]) => x, { ...base, dispatchTimeoutMs: Number.NaN })).toThrow(
      /dispatchTimeoutMs/,
    );
    const b = new Batcher((x: readonly number[]) => x, base);
    await expect(b.close({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs/);
    await expect(b.close({ signal: {} as AbortSignal })).rejects.toThrow(TypeError);
    await b.close();
  });

  it('passes each dispatch an AbortSignal only made when read', async () => {
    let seen: unknown;
    const batcher = new Batcher<number, number>(
      (items, info) => {
        seen = Object.keys(info);
        return items;
      },
      { maxBatchSize: 1, maxWaitMs: 0, channelSize: 1 },
    );
    await batcher.submitOne(1);
    expect(seen).toEqual(['batchId', 'label']);
    await batcher.close();
  });
});
