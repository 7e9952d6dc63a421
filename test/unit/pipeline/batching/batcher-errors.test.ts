import { describe, expect, it } from 'vitest';
import { Batcher, BatcherDispatchError, type BatchDispatch } from '../../../../src/pipeline/batching/batcher.js';
import { track, drainMicrotasks, manual, base } from './batcher-fixture.js';

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
