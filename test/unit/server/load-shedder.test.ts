import { describe, expect, it } from 'vitest';
import { LoadShedder, sampleLoopDelay } from '../../../src/server/load-shedder.js';

/** A deterministic random: cycles through 0, 0.01, ..., 0.99. */
function evenRandom(): () => number {
  let i = 0;
  return () => (i++ % 100) / 100;
}

function refusedOf(shedder: LoadShedder, n: number): number {
  let refused = 0;
  for (let i = 0; i < n; i++) if (shedder.refuse()) refused++;
  return refused;
}

describe('LoadShedder', () => {
  it('refuses nothing while the loop keeps time', () => {
    const s = new LoadShedder(25, evenRandom());
    for (let i = 0; i < 50; i++) s.sample(5);
    expect(s.share).toBe(0);
    expect(refusedOf(s, 1000)).toBe(0);
  });

  it('refuses everything at once when the loop runs twice its target late', () => {
    const s = new LoadShedder(25, evenRandom());
    s.sample(50);
    expect(s.share).toBe(1);
    expect(refusedOf(s, 100)).toBe(100);
    expect(s.lastLagMs).toBe(50);
  });

  it('raises its share step by step while the loop stays late, and refuses that share', () => {
    const s = new LoadShedder(100, evenRandom());
    for (let i = 0; i < 3; i++) s.sample(150);
    expect(s.share).toBeCloseTo(0.3, 10);
    const refused = refusedOf(s, 1000);
    expect(refused).toBeGreaterThanOrEqual(290);
    expect(refused).toBeLessThanOrEqual(310);
  });

  it('lowers its share geometrically once the loop keeps time, to zero within ~0.3 s of 10 ms samples', () => {
    const s = new LoadShedder(25, evenRandom());
    s.sample(100);
    s.sample(10);
    expect(s.share).toBeCloseTo(0.8, 10);
    for (let i = 0; i < 30; i++) s.sample(10);
    expect(s.share).toBe(0);
  });

  it('settles under steady overload: one late sample in three holds the share where a step up and two decays balance', () => {
    const s = new LoadShedder(25, evenRandom());
    for (let round = 0; round < 60; round++) {
      s.sample(30); // one late turn...
      for (let i = 0; i < 2; i++) s.sample(5); // ...then the loop catches up for two samples
    }
    // (share + 0.1) * 0.8^2 = share  =>  share = 0.064 / 0.36
    expect(s.share).toBeCloseTo(0.064 / 0.36, 6);
  });

  it('rejects a target that is not a positive number', () => {
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => new LoadShedder(bad)).toThrow(/positive number of milliseconds/);
  });

  it('samples a blocked loop as one late tick', async () => {
    const s = new LoadShedder(20);
    const stop = sampleLoopDelay(s, 5);
    try {
      await new Promise((r) => setTimeout(r, 30));
      const until = performance.now() + 120;
      while (performance.now() < until); // hold the loop
      await new Promise((r) => setTimeout(r, 15));
      expect(s.share).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});
