import { describe, expect, it } from 'vitest';
import {
  Batcher,
  BatcherClosedError,
  BatcherDispatchError,
  BatcherFullError,
  BatcherTimeoutError,
} from '../../../../src/pipeline/batching/batcher.js';
import { LONG_WAIT, track, drainMicrotasks, manual, base } from './batcher-fixture.js';

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
