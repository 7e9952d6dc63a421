/**
 * A placement on a machine with no device names the cause a user can act on (the missing driver,
 * as `new Stream()` does), not only "no device": the README's JobEngine path without a GPU.
 */
import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { resolvePlacement } from '../../../src/runtime/defaults.js';
import { PlacementError, selectDevices } from '../../../src/runtime/placement-rules.js';

describe('PlacementError when the machine has no device', { timeout: 10_000 }, () => {
  it('carries the reason it is given', () => {
    expect(() => selectDevices({}, 0, 'JobEngine', 'first', 'no NVIDIA driver: libcuda.so.1 was not found')).toThrow(
      new PlacementError('JobEngine: no CUDA device is visible: no NVIDIA driver: libcuda.so.1 was not found'),
    );
  });

  const availability = Device.available();
  it.skipIf(availability.ok)(
    `resolvePlacement names what Device.available() says${availability.ok ? ' (skipped: this machine has a GPU)' : ''}`,
    () => {
      const reason = availability.ok ? '' : availability.reason;
      expect(() => resolvePlacement({ devices: 'all' }, 'JobEngine', 'first')).toThrow(
        new PlacementError(`JobEngine: no CUDA device is visible: ${reason}`),
      );
    },
  );
});
