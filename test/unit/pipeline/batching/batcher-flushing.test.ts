import { afterEach, describe, expect, it, vi } from 'vitest';
import { Batcher } from '../../../../src/pipeline/batching/batcher.js';
import { sleep, track, drainMicrotasks, recorder, manual, base } from './batcher-fixture.js';

afterEach(() => {
  vi.restoreAllMocks();
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
