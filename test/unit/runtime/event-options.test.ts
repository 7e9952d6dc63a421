import { describe, expect, it } from 'vitest';
import { Event } from '../../../src/runtime/event.js';

describe('new Event() flags are booleans, checked before any driver call', () => {
  it('timing "yes" (it read as true), blockingSync 1, interprocess "no"', () => {
    expect(() => new Event({ timing: 'yes' as never })).toThrow(/^new Event\(\): timing must be a boolean, got string$/);
    expect(() => new Event({ blockingSync: 1 as never })).toThrow(/^new Event\(\): blockingSync must be a boolean, got number$/);
    expect(() => new Event({ interprocess: 'no' as never })).toThrow(/^new Event\(\): interprocess must be a boolean, got string$/);
  });
});
