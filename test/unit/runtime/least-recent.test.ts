import { describe, expect, it } from 'vitest';
import { leastRecentlyUsed } from '../../../src/runtime/least-recent.js';

describe('leastRecentlyUsed: what a bounded cache frees first', () => {
  it('picks the entry with the oldest tick, whatever the insertion order', () => {
    const entries = new Map([
      ['b', { used: 7 }],
      ['a', { used: 3 }],
      ['c', { used: 9 }],
    ]);
    expect(leastRecentlyUsed(entries)).toBe('a');
    entries.get('a')!.used = 10; // a hit moves it to the back
    expect(leastRecentlyUsed(entries)).toBe('b');
  });

  it('leaves entries used at or after `before` alone, and an empty map gives undefined', () => {
    const entries = new Map([
      ['x', { used: 5 }],
      ['y', { used: 6 }],
    ]);
    expect(leastRecentlyUsed(entries, 6)).toBe('x');
    expect(leastRecentlyUsed(entries, 5)).toBeUndefined();
    expect(leastRecentlyUsed(new Map<string, { used: number }>())).toBeUndefined();
  });
});
