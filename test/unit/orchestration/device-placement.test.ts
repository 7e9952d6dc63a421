import { describe, expect, it } from 'vitest';
import {
  checkPlacement,
  chooseDevice,
  resolveDeviceList,
  type DeviceLoad,
} from '../../../src/orchestration/device-placement.js';

const loads = (outstanding: number[], free: number[] = outstanding.map(() => 0)): DeviceLoad[] =>
  outstanding.map((o, index) => ({ index, outstanding: o, freeBytes: free[index]! }));

describe('device placement', () => {
  it('RoundRobin takes the devices in turn whatever their load', () => {
    const l = loads([9, 0, 5]);
    expect([0, 1, 2, 3, 4, 5].map((t) => chooseDevice('RoundRobin', l, t))).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it('LeastLoaded takes the fewest outstanding, ties in round-robin order', () => {
    expect(chooseDevice('LeastLoaded', loads([3, 1, 2]), 0)).toBe(1);
    expect([0, 1, 2, 3].map((t) => chooseDevice('LeastLoaded', loads([2, 2, 2]), t))).toEqual([0, 1, 2, 0]);
    expect(chooseDevice('LeastLoaded', loads([0, 4, 0]), 1)).toBe(2);
  });

  it('FreeMemory takes the most free memory, ties by load then turn', () => {
    expect(chooseDevice('FreeMemory', loads([0, 5, 0], [10, 80, 20]), 0)).toBe(1);
    expect(chooseDevice('FreeMemory', loads([3, 1], [50, 50]), 0)).toBe(1);
    expect([0, 1].map((t) => chooseDevice('FreeMemory', loads([0, 0], [7, 7]), t))).toEqual([0, 1]);
  });

  it('works for one device and rejects none', () => {
    for (const p of ['RoundRobin', 'LeastLoaded', 'FreeMemory'] as const)
      expect(chooseDevice(p, loads([4]), 17)).toBe(0);
    expect(() => chooseDevice('RoundRobin', [], 0)).toThrow(RangeError);
  });

  it('checks placement names and device lists', () => {
    expect(() => checkPlacement('Random', 'pool')).toThrow(
      /pool: unknown placement "Random"; expected one of RoundRobin, LeastLoaded, FreeMemory/,
    );
    expect(resolveDeviceList('all', 3, 'p')).toEqual([0, 1, 2]);
    expect(resolveDeviceList(undefined, 1, 'p')).toEqual([0]);
    expect(resolveDeviceList([1, 0], 2, 'p')).toEqual([1, 0]);
    expect(() => resolveDeviceList([0, 0], 2, 'p')).toThrow(/device 0 is listed twice/);
    expect(() => resolveDeviceList([2], 2, 'p')).toThrow(/device 2 does not exist \(devices\[0\]; this machine has 2/);
    expect(() => resolveDeviceList([], 2, 'p')).toThrow(TypeError);
    expect(() => resolveDeviceList('all', 0, 'p')).toThrow(/no CUDA device/);
  });
});
