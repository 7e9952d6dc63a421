import { describe, expect, it } from 'vitest';
import { gradientBatcher, lerpBatcher } from '../../../../src/pipeline/index.js';

describe('GPU batchers check their Batcher options before the dispatcher takes a GPU', () => {
  it('names the bad option (it said the driver was missing, and on a GPU left the dispatcher behind)', () => {
    expect(() => lerpBatcher({ dim: 4, maxBatchSize: 8, maxWaitMs: -1, channelSize: 16 })).toThrow(
      /^Batcher "lerp": maxWaitMs must be 0\.\./,
    );
    expect(() => lerpBatcher({ dim: 4, maxBatchSize: 8, maxWaitMs: 1, channelSize: 0 })).toThrow(
      /^Batcher "lerp": channelSize must be a positive integer, got 0/,
    );
    expect(() =>
      gradientBatcher({
        dim: 4,
        maxBatchSize: 8,
        maxWaitMs: 1,
        channelSize: 16,
        label: 'g',
        autoTune: { targetLatencyMs: 0 },
      }),
    ).toThrow(/^Batcher "g": autoTune\.targetLatencyMs must be > 0/);
  });
});
