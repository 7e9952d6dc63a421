import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Batcher, BatcherFullError } from '../../../../src/pipeline/batching/batcher.js';
import { LONG_WAIT, track, drainMicrotasks, recorder, manual, base } from './batcher-fixture.js';

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
