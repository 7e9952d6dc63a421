import { describe, expect, it } from 'vitest';
import { Batcher, BatcherClosedError } from '../../../../src/pipeline/batching/batcher.js';
import { LONG_WAIT, track, drainMicrotasks, recorder, manual, base } from './batcher-fixture.js';

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
