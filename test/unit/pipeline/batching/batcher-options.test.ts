import { describe, expect, it } from 'vitest';
import { Batcher, type BatchDispatch, type BatcherOptions } from '../../../../src/pipeline/batching/batcher.js';
import { recorder, base } from './batcher-fixture.js';

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
