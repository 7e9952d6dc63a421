import { describe, expect, it } from 'vitest';
import { parseDeviceList, PlacementError, selectDevices } from '../../../src/runtime/placement-rules.js';

describe('the one placement rule (selectDevices)', () => {
  it('device, context and devices select their ordinals; nothing given falls back as the API says', () => {
    expect(selectDevices({ device: 1 }, 2, 'x')).toEqual([1]);
    expect(selectDevices({ context: 1 }, 2, 'x')).toEqual([1]);
    expect(selectDevices({ devices: [1, 0] }, 2, 'x')).toEqual([1, 0]);
    expect(selectDevices({ devices: 'all' }, 3, 'x')).toEqual([0, 1, 2]);
    expect(selectDevices({}, 3, 'x')).toEqual([0]);
    expect(selectDevices({}, 3, 'x', 'all')).toEqual([0, 1, 2]);
  });

  it('refuses a device the machine lacks, naming how many it has: never a silent fallback to device 0', () => {
    expect(() => selectDevices({ device: 2 }, 2, 'JobEngine')).toThrow(
      /^JobEngine: device 2 does not exist \(device; this machine has 2 CUDA devices: 0\.\.1\)$/,
    );
    expect(() => selectDevices({ devices: [0, 3] }, 2, 'pool')).toThrow(
      /pool: device 3 does not exist \(devices\[1\]; this machine has 2 CUDA devices/,
    );
    expect(() => selectDevices({ device: 1 }, 1, 'demo')).toThrow(/this machine has 1 CUDA device: 0\.\.0/);
    expect(() => selectDevices({}, 0, 'x')).toThrow(/x: no CUDA device is visible/);
    expect(() => selectDevices({ devices: 'all' }, 0, 'x')).toThrow(PlacementError);
  });

  it('refuses duplicates, two ways of naming the device, and malformed values, each with a clear message', () => {
    expect(() => selectDevices({ devices: [0, 1, 0] }, 2, 'x')).toThrow(/x: device 0 is listed twice in devices/);
    expect(() => selectDevices({ device: 0, devices: [0] }, 2, 'x')).toThrow(
      /give one of device, devices and context, not device and devices/,
    );
    expect(() => selectDevices({ device: 0, context: 1 }, 2, 'x')).toThrow(
      /not device and context naming different devices/,
    );
    expect(selectDevices({ device: 1, context: 1 }, 2, 'x')).toEqual([1]); // the same device twice: agreed
    expect(() => selectDevices({ devices: [1], context: 1 }, 2, 'x')).toThrow(/not devices and context$/);
    expect(() => selectDevices({ devices: [] }, 2, 'x')).toThrow(TypeError);
    expect(() => selectDevices({ devices: 'some' as never }, 2, 'x')).toThrow(
      /devices must be 'all' or a non-empty array of device ordinals, got "some"/,
    );
    expect(() => selectDevices({ device: -1 }, 2, 'x')).toThrow(
      /device must be a non-negative integer device ordinal, got -1/,
    );
    expect(() => selectDevices({ devices: [0.5] }, 2, 'x')).toThrow(/devices\[0\] must be a non-negative integer/);
    expect(() => selectDevices(null as never, 2, 'x')).toThrow(TypeError);
  });
});

describe('selectDevices names a mistake in the placement before saying the machine has no device', () => {
  it('on a machine without GPUs, a bad placement is still refused for what it is', () => {
    expect(() => selectDevices({ device: -1 }, 0, 'x')).toThrow(
      /device must be a non-negative integer device ordinal, got -1/,
    );
    expect(() => selectDevices({ device: 1.5 }, 0, 'x')).toThrow(
      /device must be a non-negative integer device ordinal, got 1.5/,
    );
    expect(() => selectDevices({ devices: [] }, 0, 'x')).toThrow(/devices must be 'all' or a non-empty array/);
    expect(() => selectDevices({ devices: 'al' as never }, 0, 'x')).toThrow(
      /devices must be 'all' or a non-empty array/,
    );
    expect(() => selectDevices({ devices: [0, 0] }, 0, 'x')).toThrow(/device 0 is listed twice/);
    // A well-formed placement on such a machine: no device.
    expect(() => selectDevices({ devices: [0, 1] }, 0, 'x')).toThrow(/no CUDA device is visible/);
    expect(() => selectDevices({ device: 0 }, 0, 'x')).toThrow(/no CUDA device is visible/);
  });
});

describe('parseDeviceList (--devices)', () => {
  it('reads "all" and comma-separated ordinals; refuses anything else naming the flag', () => {
    expect(parseDeviceList('all', '--devices')).toBe('all');
    expect(parseDeviceList('0', '--devices')).toEqual([0]);
    expect(parseDeviceList(' 1, 0 ', '--devices')).toEqual([1, 0]);
    for (const bad of ['', '0,', 'a', '0;1', '-1', '1.5', 'ALL'])
      expect(() => parseDeviceList(bad, '--devices'), bad).toThrow(
        /--devices must be "all" or device ordinals like 0,1/,
      );
  });
});
