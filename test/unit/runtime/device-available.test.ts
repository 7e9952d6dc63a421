import { describe, expect, it } from 'vitest';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { Device } from '../../../src/runtime/device.js';

describe('Device.available()', () => {
  it('never throws, and says why not in words a user can act on', () => {
    const result = Device.available();
    if (!isLibraryAvailable('driver')) {
      // CI and every machine without the NVIDIA driver: the reason names the missing driver.
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(/no NVIDIA driver: libcuda\.so\.1 was not found .*--gpus all/);
    } else if (result.ok) {
      expect(Number.isInteger(result.count) && result.count > 0).toBe(true);
      expect(Device.count()).toBe(result.count);
    } else {
      expect(result.reason.length).toBeGreaterThan(10);
    }
  });
});
