import { describe, expect, it } from 'vitest';
import { AdmissionController } from '../../../src/server/shedding/admission.js';

/** Late, but less than twice the target (50 ms): shedding waits for a second such look. */
const late = { lagMs: 80, utilization: 1, arrivals: 40 };
/** Far behind (more than twice the target): with a flood of requests, shedding starts at once. */
const farBehind = { lagMs: 300, utilization: 1, arrivals: 40 };
/** On time but busy (not idle enough to reset the share at once). */
const onTime = { lagMs: 2, utilization: 0.9, arrivals: 40 };

function admittedOf(a: AdmissionController, n: number): number {
  let admitted = 0;
  for (let i = 0; i < n; i++) if (a.admit()) admitted++;
  return admitted;
}

/** Two late looks in a row: shedding starts (the second cuts, by `decrease` as it is far behind). */
function startShedding(a: AdmissionController): void {
  a.update(late);
  expect(a.share).toBe(1);
  a.update(farBehind);
}

describe('AdmissionController', () => {
  it('admits everything while the loop runs on time', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    for (let i = 0; i < 10; i++) a.update(onTime);
    expect(a.share).toBe(1);
    expect(admittedOf(a, 1000)).toBe(1000);
    expect(a.takeCounts()).toEqual({ admitted: 1000, refused: 0 });
  });

  it('takes a multiplicatively shrinking share while the loop runs late and busy, spread evenly, never below minShare', () => {
    const a = new AdmissionController({ targetLagMs: 50, decrease: 0.5, minShare: 0.1 });
    startShedding(a);
    expect(a.share).toBe(0.5);
    // Evenly spaced: every other request.
    expect(Array.from({ length: 6 }, () => a.admit())).toEqual([false, true, false, true, false, true]);
    a.update(farBehind);
    expect(a.share).toBe(0.25);
    a.takeCounts();
    expect(admittedOf(a, 1000)).toBe(250);
    expect(a.takeCounts()).toEqual({ admitted: 250, refused: 750 });
    expect(a.takeCounts()).toEqual({ admitted: 0, refused: 0 });
    for (let i = 0; i < 20; i++) a.update(late);
    expect(a.share).toBe(0.1);
    expect(admittedOf(a, 1000)).toBe(100);
    expect(a.takeCounts()).toEqual({ admitted: 100, refused: 900 });
  });

  it('late looks that are not a flood do not shed: a late timer in a mostly idle loop, a busy loop few requests reach, one alone', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    for (let i = 0; i < 5; i++) a.update({ lagMs: 400, utilization: 0.6, arrivals: 40 });
    expect(a.share).toBe(1);
    for (let i = 0; i < 5; i++) a.update({ lagMs: 400, utilization: 1, arrivals: 0 });
    expect(a.share).toBe(1);
    // Nor one client's heavy requests, or a burst of new connections: a few new requests per look.
    for (let i = 0; i < 5; i++) a.update({ lagMs: 400, utilization: 1, arrivals: 3 });
    expect(a.share).toBe(1);
    a.update(late);
    a.update(onTime);
    a.update(late);
    expect(a.share).toBe(1);
    expect(admittedOf(a, 10)).toBe(10);
    a.update(farBehind);
    expect(a.share).toBe(0.5);
    // Once shedding, every late look cuts; a delay between half the target and the target holds the share.
    a.update({ lagMs: 40, utilization: 1, arrivals: 40 });
    expect(a.share).toBe(0.5);
    a.update(farBehind);
    expect(a.share).toBe(0.25);
  });

  it('one look far behind (over twice the target) with a flood of requests starts shedding at once; without the flood it does not', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    a.update({ ...farBehind, arrivals: 3 });
    expect(a.share).toBe(1);
    a.update(onTime);
    a.update(farBehind);
    expect(a.share).toBe(0.5);
  });

  it('cuts by target / delay: gently just over the target, at most by `decrease` far over it', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    const over = (lagMs: number) => ({ lagMs, utilization: 1, arrivals: 100 });
    a.update(over(55));
    a.update(over(55));
    expect(a.share).toBeCloseTo(0.9);
    a.update(over(80));
    expect(a.share).toBeCloseTo(0.9 * (50 / 80));
    a.update(over(1000));
    expect(a.share).toBeCloseTo(0.9 * (50 / 80) * 0.5);
  });

  it('climbs back additively while the loop runs on time and busy, and to all at once when it idles', () => {
    const a = new AdmissionController({ targetLagMs: 50, increase: 0.1 });
    for (let i = 0; i < 30; i++) a.update(late);
    expect(a.share).toBe(0.02);
    a.update(onTime);
    expect(a.share).toBeCloseTo(0.12);
    for (let i = 0; i < 20; i++) a.update(onTime);
    expect(a.share).toBe(1);
    expect(admittedOf(a, 10)).toBe(10);
    for (let i = 0; i < 30; i++) a.update(late);
    a.update({ lagMs: 1, utilization: 0.2, arrivals: 3 });
    expect(a.share).toBe(1);
  });

  it('refuses options that make no sense, naming them', () => {
    expect(() => new AdmissionController({ targetLagMs: 0 })).toThrow(/targetLagMs must be a positive number/);
    expect(() => new AdmissionController({ targetLagMs: Number.NaN })).toThrow(/targetLagMs/);
    expect(() => new AdmissionController({ targetLagMs: 50, decrease: 1.5 })).toThrow(/decrease must be in \(0, 1\]/);
    expect(() => new AdmissionController({ targetLagMs: 50, minShare: 0 })).toThrow(/minShare/);
    expect(() => new AdmissionController({ targetLagMs: 50, busyUtilization: -1 })).toThrow(/busyUtilization/);
  });

  it('is under pressure once shedding starts and while the share is below 1, for 20 looks after the turn budget last refused, and no longer once the loop idles', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    for (let i = 0; i < 5; i++) a.update(onTime);
    expect(a.underPressure).toBe(false);
    // One late look is not yet a flood (one long block is one late look); the second starts shedding.
    a.update(late);
    expect(a.underPressure).toBe(false);
    a.update(late);
    expect(a.share).toBeLessThan(1);
    expect(a.underPressure).toBe(true);
    // Late but with few arrivals (one client's heavy work), after an idle look: no pressure.
    a.update({ lagMs: 0, utilization: 0.1, arrivals: 0 });
    expect(a.underPressure).toBe(false);
    a.update({ ...late, arrivals: 3 });
    a.update({ ...late, arrivals: 3 });
    expect(a.underPressure).toBe(false);
    // A look in which the turn budget refused: pressure for 20 looks, though the share is back at 1 after 5.
    a.update({ ...onTime, arrivals: 100, refusedInLongTurns: 3 });
    expect(a.share).toBeCloseTo(0.9, 10);
    for (let i = 0; i < 19; i++) a.update(onTime);
    expect(a.share).toBe(1);
    expect(a.underPressure).toBe(true);
    a.update(onTime);
    expect(a.underPressure).toBe(false);
  });

  it('a look in which the turn budget refused cuts the share by the part refused (within decrease..0.9), and the share climbs back only once it stops', () => {
    const a = new AdmissionController({ targetLagMs: 50, decrease: 0.5 });
    a.update({ ...onTime, arrivals: 100, refusedInLongTurns: 30 });
    expect(a.share).toBeCloseTo(0.7, 10);
    a.update({ ...onTime, arrivals: 100, refusedInLongTurns: 2 });
    expect(a.share).toBeCloseTo(0.63, 10);
    a.update({ ...onTime, arrivals: 100, refusedInLongTurns: 90 });
    expect(a.share).toBeCloseTo(0.315, 10);
    // Refused evenly now: about every third request.
    const taken = admittedOf(a, 1000);
    expect(taken).toBeGreaterThanOrEqual(314);
    expect(taken).toBeLessThanOrEqual(316);
    a.update(onTime);
    expect(a.share).toBeCloseTo(0.335, 10);
  });
});
