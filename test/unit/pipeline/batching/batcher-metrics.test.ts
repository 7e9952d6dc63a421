import { describe, expect, it } from 'vitest';
import { Batcher } from '../../../../src/pipeline/batching/batcher.js';
import { sleep, manual, base } from './batcher-fixture.js';

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
