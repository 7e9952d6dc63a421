import { describe, expect, it } from 'vitest';
import { Event } from '../../../src/runtime/index.js';

describe('new Event() flags are booleans, checked before any driver call', () => {
  it('timing "yes" (it read as true), blockingSync 1, interprocess "no"', () => {
    expect(() => new Event({ timing: 'yes' as never })).toThrow(
      /^new Event\(\): timing must be a boolean, got string$/,
    );
    expect(() => new Event({ blockingSync: 1 as never })).toThrow(
      /^new Event\(\): blockingSync must be a boolean, got number$/,
    );
    expect(() => new Event({ interprocess: 'no' as never })).toThrow(
      /^new Event\(\): interprocess must be a boolean, got string$/,
    );
  });
});

describe('new Stream() checks its priority before any driver call', () => {
  it('a misspelt priority is named on a machine without a GPU (it read "no NVIDIA driver")', async () => {
    const { Stream } = await import('../../../src/runtime/index.js');
    expect(() => new Stream({ priority: 'hgih' as never })).toThrow(
      /^stream priority must be 'high', 'normal', 'low' or an integer, got "hgih"$/,
    );
    expect(() => new Stream({ priority: 1.5 })).toThrow(/got 1.5$/);
  });
});
