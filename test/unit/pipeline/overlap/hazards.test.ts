import { describe, expect, it } from 'vitest';
import { HazardTracker } from '../../../../src/pipeline/overlap/hazards.js';

describe('HazardTracker (StageManager dependencies)', () => {
  it('orders read-after-write, write-after-write and write-after-read across lanes only', () => {
    const h = new HazardTracker<string, string>();
    // Lane A writes buffer 0; lane B reads 0 and writes 1.
    expect(h.dependencies('A', [], [0])).toEqual([]);
    h.record('w0', 'A', [], [0]);
    expect(h.dependencies('B', [0], [1])).toEqual(['w0']); // RAW
    h.record('r0w1', 'B', [0], [1]);
    // Lane C reads 1: waits for B's write, not for A.
    expect(h.dependencies('C', [1], [2])).toEqual(['r0w1']);
    h.record('r1w2', 'C', [1], [2]);
    // A writes 0 again: it must wait for B, which still reads it (WAR); its own earlier write is same-lane.
    expect(h.dependencies('A', [], [0])).toEqual(['r0w1']);
    h.record('w0b', 'A', [], [0]);
    // D writes 2: WAW with C.
    expect(h.dependencies('D', [], [2])).toEqual(['r1w2']);
  });

  it('lets independent stages run with no dependency', () => {
    const h = new HazardTracker<number, string>();
    h.record(1, 'A', [0], [1]);
    expect(h.dependencies('B', [0], [2])).toEqual([]);
    h.record(2, 'B', [0], [2]);
    // A join reads both outputs.
    expect(h.dependencies('C', [1, 2], [3]).sort()).toEqual([1, 2]);
  });

  it('keeps one reader per lane and buffer, and treats read-write buffers as writes', () => {
    const h = new HazardTracker<number, string>();
    for (let i = 0; i < 1000; i++) h.record(i, 'R', [0], [5]);
    expect(h.dependencies('W', [], [0])).toEqual([999]);
    h.record(2000, 'X', [7], [7]);
    expect(h.dependencies('Y', [7], [])).toEqual([2000]);
    expect(h.dependencies('Y', [], [7])).toEqual([2000]);
    h.clear();
    expect(h.dependencies('Y', [0, 7], [5])).toEqual([]);
  });
});
