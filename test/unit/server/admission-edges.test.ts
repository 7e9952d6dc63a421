// The admission controller at the exact edge of each documented threshold (a late loop is one whose
// delay is above the target, at or above busyUtilization, with at least 16 new requests; far behind
// is above twice the target; idle is under 0.5 utilization; on time is under half the target), each
// option's range on its own, and the credit counter's state through the admissions it decides.
import { describe, expect, it } from 'vitest';
import { AdmissionController } from '../../../src/server/shedding/admission.js';

const TARGET = 50;
const late = { lagMs: 80, utilization: 1, arrivals: 40 };
const farBehind = { lagMs: 300, utilization: 1, arrivals: 40 };
const onTime = { lagMs: 2, utilization: 0.9, arrivals: 40 };

/** The share after the same look twice in a row (two late looks start shedding). */
function shareAfterTwice(look: { lagMs: number; utilization: number; arrivals: number }): number {
  const a = new AdmissionController({ targetLagMs: TARGET });
  a.update(look);
  a.update(look);
  return a.share;
}

describe('AdmissionController at the edges of its thresholds', { timeout: 5_000 }, () => {
  it('a delay equal to the target is on time; just above it is late', () => {
    expect(shareAfterTwice({ ...late, lagMs: TARGET })).toBe(1);
    expect(shareAfterTwice({ ...late, lagMs: TARGET + 1 })).toBeLessThan(1);
  });

  it('a utilization equal to busyUtilization counts as busy; just under it does not', () => {
    expect(shareAfterTwice({ ...late, utilization: 0.8 })).toBeLessThan(1);
    expect(shareAfterTwice({ ...late, utilization: 0.79 })).toBe(1);
  });

  it('exactly 16 new requests in a look are a flood; 15 are not', () => {
    expect(shareAfterTwice({ ...late, arrivals: 16 })).toBeLessThan(1);
    expect(shareAfterTwice({ ...late, arrivals: 15 })).toBe(1);
  });

  it('one look at exactly twice the target is not yet far behind; just above it starts shedding at once', () => {
    const a = new AdmissionController({ targetLagMs: TARGET });
    a.update({ ...late, lagMs: 2 * TARGET });
    expect(a.share).toBe(1);
    const b = new AdmissionController({ targetLagMs: TARGET });
    b.update({ ...late, lagMs: 2 * TARGET + 1 });
    expect(b.share).toBeLessThan(1);
  });

  it('once shedding, a single late look after an on-time one cuts again (the share below 1 is enough)', () => {
    const a = new AdmissionController({ targetLagMs: TARGET, increase: 0.1 });
    a.update(farBehind);
    expect(a.share).toBe(0.5);
    a.update(onTime);
    expect(a.share).toBeCloseTo(0.6, 12);
    a.update(late);
    expect(a.share).toBeCloseTo(0.6 * (TARGET / late.lagMs), 12);
  });

  it('a utilization of exactly 0.5 is not idle (the share climbs, no reset); under it the share is 1 at once', () => {
    const a = new AdmissionController({ targetLagMs: TARGET, increase: 0.1 });
    a.update(farBehind);
    a.update({ lagMs: 2, utilization: 0.5, arrivals: 40 });
    expect(a.share).toBeCloseTo(0.6, 12);
    a.update({ lagMs: 2, utilization: 0.49, arrivals: 40 });
    expect(a.share).toBe(1);
  });

  it('a delay of exactly half the target holds the share; just under it the share climbs', () => {
    const a = new AdmissionController({ targetLagMs: TARGET, increase: 0.1 });
    a.update(farBehind);
    a.update({ ...onTime, lagMs: TARGET / 2 });
    expect(a.share).toBe(0.5);
    a.update({ ...onTime, lagMs: TARGET / 2 - 0.01 });
    expect(a.share).toBeCloseTo(0.6, 12);
  });

  it('stays under pressure while the share is below 1, after the 20 looks of hold have run out', () => {
    const a = new AdmissionController({ targetLagMs: TARGET, increase: 0.001 });
    a.update(farBehind);
    for (let i = 0; i < 25; i++) a.update(onTime);
    expect(a.share).toBeLessThan(1);
    expect(a.underPressure).toBe(true);
  });
});

describe('AdmissionController credit counter', { timeout: 5_000 }, () => {
  it('keeps the credit earned while the share climbs (admissions stay evenly spaced across a look)', () => {
    const a = new AdmissionController({ targetLagMs: TARGET, increase: 0.02 });
    a.update(farBehind);
    expect(a.admit()).toBe(false); // credit 0.5
    a.update(onTime); // share 0.52, the credit kept
    expect(a.admit()).toBe(true); // 0.5 + 0.52 >= 1
  });

  it('starts from no credit each time shedding starts again after the share climbed back to 1', () => {
    const a = new AdmissionController({ targetLagMs: TARGET, increase: 0.5 });
    a.update(farBehind);
    expect(a.admit()).toBe(false); // credit 0.5
    a.update(onTime);
    expect(a.share).toBe(1);
    expect(a.admit()).toBe(true);
    a.update(farBehind);
    expect(a.share).toBe(0.5);
    // A fresh counter: the first request after the cut is refused, as after the first cut.
    expect([a.admit(), a.admit(), a.admit()]).toEqual([false, true, false]);
  });
});

describe('AdmissionController options, each on its own', { timeout: 5_000 }, () => {
  const names = ['busyUtilization', 'decrease', 'increase', 'minShare'] as const;

  it.each(names)('%s: 1 is allowed, 0 and above 1 are refused, naming the option', (name) => {
    expect(() => new AdmissionController({ targetLagMs: TARGET, [name]: 1 })).not.toThrow();
    expect(() => new AdmissionController({ targetLagMs: TARGET, [name]: 0 })).toThrow(
      new RangeError(`${name} must be in (0, 1], got 0`),
    );
    expect(() => new AdmissionController({ targetLagMs: TARGET, [name]: 1.01 })).toThrow(
      new RangeError(`${name} must be in (0, 1], got 1.01`),
    );
  });

  it.each(names)('%s: a number written as a string is refused', (name) => {
    expect(() => new AdmissionController({ targetLagMs: TARGET, [name]: '0.5' as unknown as number })).toThrow(
      new RangeError(`${name} must be in (0, 1], got 0.5`),
    );
  });
});
