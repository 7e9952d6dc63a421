/**
 * A Batcher is bounded by default (issue 22): with a dispatch that never settles it holds at
 * most DEFAULT_MAX_CONCURRENT_BATCHES batches in flight, channelSize submits queued and
 * channelSize waiting; every submit beyond is refused with BatcherFullError at once.
 */
import { describe, expect, it } from 'vitest';
import {
  Batcher,
  BatcherFullError,
  DEFAULT_MAX_CONCURRENT_BATCHES,
} from '../../../../src/pipeline/batching/batcher.js';
import { BatcherFullError as FromIndex } from '../../../../src/pipeline/index.js';

const never = (): Promise<readonly number[]> => new Promise(() => undefined);
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Partial batches wait this long: only full batches go out while a test floods. */
const LONG_WAIT = 60_000;

/** Submits `n` single items; returns how many were refused with BatcherFullError (others are left pending). */
async function flood(batcher: Batcher<number, number>, n: number): Promise<{ refused: number; other: unknown[] }> {
  let refused = 0;
  const other: unknown[] = [];
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    pending.push(
      batcher.submitOne(i).then(
        () => other.push('resolved'),
        (e: unknown) => (e instanceof BatcherFullError ? refused++ : other.push(e)),
      ),
    );
  }
  await tick();
  return { refused, other };
}

describe('Batcher: bounded by default', () => {
  it('holds at most 16 batches in flight, channelSize queued and channelSize waiting; refuses the rest with BatcherFullError', async () => {
    expect(DEFAULT_MAX_CONCURRENT_BATCHES).toBe(16);
    expect(FromIndex).toBe(BatcherFullError);
    const batcher = new Batcher<number, number>(never, {
      maxBatchSize: 4,
      maxWaitMs: LONG_WAIT,
      channelSize: 32,
      label: 'b',
    });
    expect(batcher.maxConcurrentBatches).toBe(16);
    const n = 10_000;
    const { refused, other } = await flood(batcher, n);
    const m = batcher.metrics;
    expect(m.inFlightBatches).toBe(16);
    expect(m.inFlight).toBe(16 * 4);
    expect(m.queued).toBe(32);
    expect(m.waiting).toBe(32);
    expect(refused).toBe(n - 16 * 4 - 32 - 32);
    expect(m.refused).toBe(refused);
    expect(other).toEqual([]);
    await expect(batcher.submitOne(1)).rejects.toThrow(
      'Batcher "b": full: 16 batches in flight (maxConcurrentBatches 16), 32 submits queued (channelSize 32) and 32 submits already waiting for room (maxWaiting 32)',
    );
    batcher.dispose();
  });

  it('is unbounded in flight only when asked for with Infinity', async () => {
    const batcher = new Batcher<number, number>(never, {
      maxBatchSize: 4,
      maxWaitMs: LONG_WAIT,
      channelSize: 32,
      maxConcurrentBatches: Infinity,
    });
    const { refused } = await flood(batcher, 4000);
    expect(refused).toBe(0);
    expect(batcher.metrics.inFlightBatches).toBe(1000);
    batcher.dispose();
  });

  it('settling batches makes room again: waiting submits go in, new ones are accepted', async () => {
    const resolvers: (() => void)[] = [];
    const batcher = new Batcher<number, number>(
      (items) => new Promise((resolve) => resolvers.push(() => resolve(items.map((x) => x * 2)))),
      {
        maxBatchSize: 2,
        maxWaitMs: 5,
        channelSize: 2,
        maxConcurrentBatches: 1,
        maxWaiting: 1,
      },
    );
    const accepted = [1, 2, 3, 4, 5].map((x) => batcher.submitOne(x)); // [1, 2] in flight, 3 and 4 queued, 5 waiting
    expect(batcher.metrics).toMatchObject({ inFlightBatches: 1, queued: 2, waiting: 1 });
    await expect(batcher.submitOne(6)).rejects.toBeInstanceOf(BatcherFullError);
    const settleNext = async (): Promise<void> => {
      for (let i = 0; i < 200 && resolvers.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
      resolvers.shift()!();
      await tick();
    };
    for (let round = 0; round < 3; round++) await settleNext();
    await expect(Promise.all(accepted)).resolves.toEqual([2, 4, 6, 8, 10]);
    const later = batcher.submitOne(7);
    await settleNext();
    await expect(later).resolves.toBe(14);
    expect(batcher.metrics.refused).toBe(1);
    await batcher.close();
  });
});
