import { describe, expect, it } from 'vitest';
import { Batcher } from '../../../../src/pipeline/batching/batcher.js';
import { busyWait } from './batcher-fixture.js';

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
