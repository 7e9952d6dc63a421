import { describe, expect, it } from 'vitest';
import { AdmissionController } from '../../../src/server/admission.js';

const late = { lagMs: 300, utilization: 1, requests: 40 };
const onTime = { lagMs: 2, utilization: 0.6, requests: 40 };

function admittedOf(a: AdmissionController, n: number): number {
  let admitted = 0;
  for (let i = 0; i < n; i++) if (a.admit()) admitted++;
  return admitted;
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
    a.update(late);
    expect(a.share).toBe(1);
    a.update(late);
    expect(a.share).toBe(0.5);
    // Evenly spaced: every other request.
    expect(Array.from({ length: 6 }, () => a.admit())).toEqual([false, true, false, true, false, true]);
    a.update(late);
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

  it('a late timer in a loop that is mostly idle, or that no request reached, is not overload; lag between half the target and the target holds the share', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    a.update({ lagMs: 400, utilization: 0.3, requests: 40 });
    expect(a.share).toBe(1);
    // Nor is a late, busy loop that no request reached (start-up, a compile).
    a.update({ lagMs: 400, utilization: 1, requests: 0 });
    expect(a.share).toBe(1);
    a.update(late);
    a.update(late);
    const after = a.share;
    expect(after).toBeCloseTo(0.5);
    a.update({ lagMs: 40, utilization: 1, requests: 40 });
    expect(a.share).toBe(after);
  });

  it('cuts by target / delay: gently just over the target, at most by `decrease` far over it', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    a.update({ lagMs: 55, utilization: 1, requests: 10 });
    a.update({ lagMs: 55, utilization: 1, requests: 10 });
    expect(a.share).toBeCloseTo(0.9);
    a.update({ lagMs: 80, utilization: 1, requests: 10 });
    expect(a.share).toBeCloseTo(0.9 * (50 / 80));
    a.update({ lagMs: 1000, utilization: 1, requests: 10 });
    expect(a.share).toBeCloseTo(0.9 * (50 / 80) * 0.5);
  });

  it('one late look alone (a long block under light load) does not shed; the second in a row does', () => {
    const a = new AdmissionController({ targetLagMs: 50 });
    a.update(late);
    a.update(onTime);
    a.update(late);
    expect(a.share).toBe(1);
    expect(admittedOf(a, 10)).toBe(10);
    a.update(late);
    expect(a.share).toBe(0.5);
    // Once shedding, every late look cuts.
    a.update(onTime);
    a.update(late);
    expect(a.share).toBeCloseTo(0.26);
  });

  it('climbs back additively once the loop runs on time, up to all', () => {
    const a = new AdmissionController({ targetLagMs: 50, increase: 0.1 });
    for (let i = 0; i < 30; i++) a.update(late);
    expect(a.share).toBe(0.02);
    a.update(onTime);
    expect(a.share).toBeCloseTo(0.12);
    for (let i = 0; i < 20; i++) a.update(onTime);
    expect(a.share).toBe(1);
    expect(admittedOf(a, 10)).toBe(10);
  });

  it('refuses options that make no sense, naming them', () => {
    expect(() => new AdmissionController({ targetLagMs: 0 })).toThrow(/targetLagMs must be a positive number/);
    expect(() => new AdmissionController({ targetLagMs: Number.NaN })).toThrow(/targetLagMs/);
    expect(() => new AdmissionController({ targetLagMs: 50, decrease: 1.5 })).toThrow(/decrease must be in \(0, 1\]/);
    expect(() => new AdmissionController({ targetLagMs: 50, minShare: 0 })).toThrow(/minShare/);
    expect(() => new AdmissionController({ targetLagMs: 50, busyUtilization: -1 })).toThrow(/busyUtilization/);
  });
});
