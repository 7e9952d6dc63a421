/** The Batcher refuses loose values and unknown keys instead of reading them as defaults. */
import { describe, expect, it } from 'vitest';
import { Batcher } from '../../../../src/pipeline/batching/batcher.js';

const TIMEOUT = { timeout: 5_000 };
const identity = (xs: readonly number[]): number[] => xs.slice();
const base = { maxBatchSize: 4, maxWaitMs: 1, channelSize: 4 };

describe('Batcher descriptor', () => {
  it.each([
    ['null', null, 'Batcher "batcher": autoTune must be an object { targetLatencyMs, ... }, got null'],
    ['5', 5, 'Batcher "batcher": autoTune must be an object { targetLatencyMs, ... }, got 5'],
  ])('autoTune %s is a TypeError', TIMEOUT, (_, autoTune, message) => {
    expect(() => new Batcher(identity, { ...base, autoTune: autoTune as never })).toThrow(new TypeError(message));
  });

  it('an unknown autoTune key', TIMEOUT, () => {
    expect(() => new Batcher(identity, { ...base, autoTune: { targetLatencyMs: 5, minBatch: 2 } as never })).toThrow(
      new TypeError(
        'Batcher "batcher" descriptor.autoTune.minBatch: unknown option (known: targetLatencyMs, minBatchSize, maxBatchSize, minWaitMs, maxWaitMs)',
      ),
    );
  });

  it.each([123, null])('a label of %p', TIMEOUT, (label) => {
    expect(() => new Batcher(identity, { ...base, label: label as never })).toThrow(TypeError);
    expect(() => new Batcher(identity, { ...base, label: label as never })).toThrow(
      `Batcher: label must be a string, got ${label}`,
    );
  });

  it.each(['maxBatch', 'timeoutMs'])('an unknown key %s', TIMEOUT, (key) => {
    expect(() => new Batcher(identity, { ...base, [key]: 5 } as never)).toThrow(
      new TypeError(
        `Batcher "batcher" descriptor.${key}: unknown option (known: maxBatchSize, maxWaitMs, channelSize, maxConcurrentBatches, maxWaiting, dispatchTimeoutMs, label, autoTune)`,
      ),
    );
  });

  it('every known key is accepted', TIMEOUT, async () => {
    const b = new Batcher(identity, {
      ...base,
      maxConcurrentBatches: 2,
      maxWaiting: 2,
      dispatchTimeoutMs: 1000,
      label: 'b',
      autoTune: { targetLatencyMs: 5, minBatchSize: 1, maxBatchSize: 4, minWaitMs: 0, maxWaitMs: 1 },
    });
    await expect(b.submit([1, 2])).resolves.toEqual([1, 2]);
    await b.close();
  });
});

describe('submit() options', () => {
  it.each([
    ['null', null, 'submit() options must be an object { wait?, signal? }, got null'],
    ['5', 5, 'submit() options must be an object { wait?, signal? }, got 5'],
    ['wait "no"', { wait: 'no' }, 'submit() wait must be a boolean, got "no"'],
    ['a signal that is not an AbortSignal', { signal: {} }, 'submit() signal must be an AbortSignal'],
  ])('%s rejects with a TypeError', TIMEOUT, async (_, options, message) => {
    const b = new Batcher(identity, base);
    await expect(b.submit([1], options as never)).rejects.toThrow(new TypeError(`Batcher "batcher": ${message}`));
    await expect(b.submitOne(1, options as never)).rejects.toThrow(TypeError);
    // Nothing was queued.
    expect(b.metrics.queued).toBe(0);
    await b.close();
  });

  it('wait: false and a signal are still accepted', TIMEOUT, async () => {
    const b = new Batcher(identity, base);
    await expect(b.submit([1], { wait: false, signal: new AbortController().signal })).resolves.toEqual([1]);
    await b.close();
  });
});
