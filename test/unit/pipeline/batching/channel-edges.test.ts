// The Batcher's channel bookkeeping through what it decides: a cancelled or failed submit frees its
// room (the next submit with wait: false is taken, not refused), counts in refusals and metrics are
// exact, flush() resolves past cancelled submits, and after dispose() or a close() that gave up
// nothing queued is ever dispatched.
import { describe, expect, it } from 'vitest';
import { Batcher, BatcherClosedError, BatcherFullError } from '../../../../src/pipeline/batching/batcher.js';
import { BatcherDispatchError } from '../../../../src/pipeline/batching/errors.js';

const LONG_WAIT = 60_000;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Call {
  items: readonly number[];
  resolve: (outputs: readonly number[]) => void;
  reject: (error: Error) => void;
}

/** A batcher whose dispatches wait for the test: each call is recorded with its settle functions. */
function controlled(options: {
  maxBatchSize: number;
  channelSize: number;
  maxWaiting?: number;
  maxConcurrentBatches?: number;
}): {
  batcher: Batcher<number, number>;
  calls: Call[];
} {
  const calls: Call[] = [];
  const batcher = new Batcher<number, number>(
    (items) =>
      new Promise<readonly number[]>((resolve, reject) => {
        calls.push({ items: [...items], resolve, reject });
      }),
    { maxWaitMs: LONG_WAIT, label: 'edges', ...options },
  );
  return { batcher, calls };
}

/** Watches a promise from now on (so its rejection is handled); `state` is 'pending', `{ value }` or the error. */
function track(promise: Promise<unknown>): { readonly state: unknown } {
  const tracked = { state: 'pending' as unknown };
  promise.then(
    (value) => (tracked.state = { value }),
    (error: unknown) => (tracked.state = error),
  );
  return tracked;
}

/** A few turns of the event loop: enough for settled dispatches and their callbacks to run. */
async function turns(): Promise<void> {
  for (let i = 0; i < 5; i++) await tick();
}

/** The promise's outcome after a few turns of the loop, or 'pending'. */
async function outcome(promise: Promise<unknown>): Promise<unknown> {
  const tracked = track(promise);
  await turns();
  return tracked.state;
}

describe('SubmitChannel bookkeeping through the Batcher', { timeout: 5_000 }, () => {
  // One batch in flight at most, and one that hangs: what is submitted after it stays queued.
  it('a queued submit that is cancelled frees its place: the next submit with wait: false is taken', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 100, channelSize: 2, maxConcurrentBatches: 1 });
    const inFlight = track(batcher.submit([0]));
    void batcher.flush();
    expect(calls.length).toBe(1);
    const abort = new AbortController();
    const a = track(batcher.submit([1, 2, 3], { signal: abort.signal }));
    const b = track(batcher.submit([4]));
    const refused = await outcome(batcher.submit([5], { wait: false }));
    expect(refused).toBeInstanceOf(BatcherFullError);
    expect((refused as Error).message).toBe(
      'Batcher "edges": channel full (1 batches in flight (maxConcurrentBatches 1), 2 submits queued (channelSize 2)); rejected because wait is false',
    );
    expect(batcher.metrics.queued).toBe(4);
    abort.abort(new Error('not needed'));
    await turns();
    expect((a.state as Error).message).toBe('not needed');
    expect(batcher.metrics.queued).toBe(1);
    const c = track(batcher.submit([6, 7], { wait: false }));
    await turns();
    expect(c.state).toBe('pending');
    expect(batcher.metrics.queued).toBe(3);
    batcher.dispose();
    await turns();
    for (const p of [inFlight, b, c]) expect(p.state).toBeInstanceOf(BatcherClosedError);
  });

  it('a waiting submit that is cancelled frees its place among the waiters', async () => {
    const { batcher } = controlled({ maxBatchSize: 100, channelSize: 1, maxWaiting: 1, maxConcurrentBatches: 1 });
    const inFlight = track(batcher.submit([0]));
    void batcher.flush();
    const queued = track(batcher.submit([1]));
    const abort = new AbortController();
    const waiting = track(batcher.submit([2], { signal: abort.signal }));
    expect(batcher.metrics.waiting).toBe(1);
    const refused = await outcome(batcher.submit([3]));
    expect((refused as Error).message).toBe(
      'Batcher "edges": full: 1 batches in flight (maxConcurrentBatches 1), 1 submits queued (channelSize 1) and 1 submits already waiting for room (maxWaiting 1)',
    );
    abort.abort(new Error('gone'));
    await turns();
    expect((waiting.state as Error).message).toBe('gone');
    expect(batcher.metrics.waiting).toBe(0);
    const next = track(batcher.submit([4]));
    await turns();
    expect(next.state).toBe('pending');
    expect(batcher.metrics.waiting).toBe(1);
    batcher.dispose();
    await turns();
    for (const p of [inFlight, queued, next]) expect(p.state).toBeInstanceOf(BatcherClosedError);
  });

  it('a submit split across batches is not cancelled once part of it is dispatched: it completes', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 2, channelSize: 4 });
    const abort = new AbortController();
    const split = batcher.submit([1, 2, 3], { signal: abort.signal });
    expect(calls.map((c) => c.items)).toEqual([[1, 2]]);
    abort.abort(new Error('too late'));
    calls[0]!.resolve([10, 20]);
    await tick();
    void batcher.flush();
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2], [3]]);
    calls[1]!.resolve([30]);
    await expect(split).resolves.toEqual([10, 20, 30]);
  });

  it('a failed batch drops the queued rest of a split submit and frees its place', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 2, channelSize: 1, maxConcurrentBatches: 1 });
    const split = batcher.submit([1, 2, 3]);
    expect(batcher.metrics.queued).toBe(1);
    calls[0]!.reject(new Error('device lost'));
    const error = await outcome(split);
    expect(error).toBeInstanceOf(BatcherDispatchError);
    expect(batcher.metrics.queued).toBe(0);
    // The rest ([3]) is never dispatched, and the channel has room for a submit that will not wait.
    const next = batcher.submit([4, 5], { wait: false });
    expect(await outcome(next)).toBe('pending');
    expect(calls.map((c) => c.items)).toEqual([
      [1, 2],
      [4, 5],
    ]);
    calls[1]!.resolve([40, 50]);
    await expect(next).resolves.toEqual([40, 50]);
  });

  it('flush() resolves past a cancelled submit at the head of the queue', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 100, channelSize: 4 });
    const abort = new AbortController();
    const a = batcher.submit([1, 2], { signal: abort.signal });
    const b = batcher.submit([3]);
    abort.abort(new Error('cancelled'));
    await expect(a).rejects.toThrow('cancelled');
    const flushed = batcher.flush();
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[3]]);
    calls[0]!.resolve([30]);
    await expect(b).resolves.toEqual([30]);
    expect(await outcome(flushed)).toEqual({ value: undefined });
  });

  it('after dispose(), nothing queued is dispatched, even once the batch in flight settles', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 1, channelSize: 4, maxConcurrentBatches: 1 });
    const submits = [batcher.submitOne(1), batcher.submitOne(2), batcher.submit([3, 4])].map(track);
    expect(batcher.metrics.queued).toBe(3);
    batcher.dispose();
    await turns();
    for (const p of submits) expect(p.state).toBeInstanceOf(BatcherClosedError);
    expect(batcher.metrics).toMatchObject({ queued: 0, inFlight: 0, waiting: 0 });
    calls[0]!.resolve([10]);
    await tick();
    expect(calls.length).toBe(1);
  });

  it('after a close() that gave up, nothing queued is dispatched', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 1, channelSize: 4, maxConcurrentBatches: 1 });
    const submits = [batcher.submitOne(1), batcher.submitOne(2), batcher.submitOne(3)].map(track);
    await batcher.close({ timeoutMs: 5 });
    await turns();
    for (const p of submits)
      expect((p.state as Error).message).toMatch(/close\(\) gave up after 5 ms; this submit had not settled/);
    expect(batcher.metrics.queued).toBe(0);
    calls[0]!.resolve([10]);
    await tick();
    expect(calls.length).toBe(1);
  });

  it('a cancelled submit in the middle of the queue is skipped when a batch is cut', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 10, channelSize: 4, maxConcurrentBatches: 1 });
    const first = track(batcher.submit([0]));
    void batcher.flush();
    const abort = new AbortController();
    const a = track(batcher.submit([1]));
    const b = track(batcher.submit([2], { signal: abort.signal }));
    const c = track(batcher.submit([3]));
    abort.abort(new Error('skip me'));
    const flushed = track(batcher.flush());
    calls[0]!.resolve([0]);
    await turns();
    expect(calls.map((call) => call.items)).toEqual([[0], [1, 3]]);
    expect(flushed.state).toBe('pending');
    calls[1]!.resolve([10, 30]);
    await turns();
    expect([first.state, a.state, (b.state as Error).message, c.state, flushed.state]).toEqual([
      { value: [0] },
      { value: [10] },
      'skip me',
      { value: [30] },
      { value: undefined },
    ]);
  });

  it('a cancelled waiter behind an admitted one is never dispatched; the one after it is', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 10, channelSize: 2, maxConcurrentBatches: 1, maxWaiting: 3 });
    const z = track(batcher.submit([0]));
    void batcher.flush();
    const queued = [track(batcher.submit([1])), track(batcher.submit([2]))];
    const abort = new AbortController();
    const c = track(batcher.submit([3]));
    const b = track(batcher.submit([4], { signal: abort.signal }));
    const d = track(batcher.submit([5]));
    expect(batcher.metrics.waiting).toBe(3);
    abort.abort(new Error('left'));
    await turns();
    expect(batcher.metrics.waiting).toBe(2);
    calls[0]!.resolve([0]); // [1, 2] go out; 3 and 5 take their places
    await turns();
    calls[1]!.resolve([10, 20]);
    await turns();
    expect(calls.map((call) => call.items)).toEqual([[0], [1, 2], [3, 5]]);
    calls[2]!.resolve([30, 50]);
    await turns();
    expect([z.state, ...queued.map((q) => q.state), c.state, (b.state as Error).message, d.state]).toEqual([
      { value: [0] },
      { value: [10] },
      { value: [20] },
      { value: [30] },
      'left',
      { value: [50] },
    ]);
  });

  it('a failed batch frees no room for a submit it had already fully dispatched', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 10, channelSize: 1, maxConcurrentBatches: 1 });
    const failed = track(batcher.submit([1]));
    void batcher.flush();
    calls[0]!.reject(new Error('device lost'));
    await turns();
    expect(failed.state).toBeInstanceOf(BatcherDispatchError);
    const inFlight = track(batcher.submit([2]));
    void batcher.flush();
    const queued = track(batcher.submit([3]));
    const refused = await outcome(batcher.submit([4], { wait: false }));
    expect(refused).toBeInstanceOf(BatcherFullError);
    batcher.dispose();
    await turns();
    expect([inFlight.state, queued.state].every((state) => state instanceof BatcherClosedError)).toBe(true);
  });

  it('flush() after a failed split waits for what was submitted after it', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 2, channelSize: 4, maxConcurrentBatches: 1 });
    const split = track(batcher.submit([1, 2, 3]));
    calls[0]!.reject(new Error('device lost'));
    await turns();
    expect(split.state).toBeInstanceOf(BatcherDispatchError);
    const next = track(batcher.submit([4]));
    const flushed = track(batcher.flush());
    await turns();
    expect(calls.map((call) => call.items)).toEqual([[1, 2], [4]]);
    expect(flushed.state).toBe('pending');
    calls[1]!.resolve([40]);
    await turns();
    expect([next.state, flushed.state]).toEqual([{ value: [40] }, { value: undefined }]);
  });

  it('a submit that is exactly one batch is dispatched as its own array, others as a packed copy', async () => {
    const items = [1, 2, 3];
    const seen: (readonly number[])[] = [];
    const identity = new Batcher<number, number>(
      (batch) => {
        seen.push(batch);
        return batch.map((x) => x * 10);
      },
      { maxBatchSize: 3, maxWaitMs: LONG_WAIT, channelSize: 4 },
    );
    await expect(identity.submit(items)).resolves.toEqual([10, 20, 30]);
    expect(seen[0]).toBe(items);
    const parts = [identity.submit([4]), identity.submit([5, 6])];
    await expect(Promise.all(parts)).resolves.toEqual([[40], [50, 60]]);
    expect(seen[1]).toEqual([4, 5, 6]);
  });

  it('a waiter admitted into a full channel goes out at once, without waiting for the batch timer', async () => {
    const { batcher, calls } = controlled({ maxBatchSize: 2, channelSize: 1, maxConcurrentBatches: 1 });
    const split = track(batcher.submit([1, 2, 3]));
    const waiter = track(batcher.submit([4]));
    expect(batcher.metrics.waiting).toBe(1);
    calls[0]!.reject(new Error('device lost')); // the rest of the split is dropped: room for the waiter
    await turns();
    expect(split.state).toBeInstanceOf(BatcherDispatchError);
    expect(calls.map((call) => call.items)).toEqual([[1, 2], [4]]);
    calls[1]!.resolve([40]);
    await turns();
    expect(waiter.state).toEqual({ value: [40] });
  });
});
