import { describe, expect, it } from 'vitest';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { Device } from '../../../src/runtime/device.js';

describe('Device.count()', () => {
  it('is 0 without a driver instead of throwing (as torch.cuda.device_count() is), and agrees with available()', () => {
    const count = Device.count();
    expect(Number.isInteger(count) && count >= 0).toBe(true);
    const availability = Device.available();
    if (!isLibraryAvailable('driver')) {
      expect(count).toBe(0);
      expect(Device.all()).toEqual([]);
      expect(availability.ok).toBe(false);
    }
    expect(availability.ok ? availability.count : 0).toBe(count);
  });
  it('Device.get() still says why without a driver (no "0 devices" RangeError hiding the missing library)', () => {
    if (isLibraryAvailable('driver')) return;
    expect(() => Device.get(0)).toThrow(/libcuda|driver/i);
  });
});
