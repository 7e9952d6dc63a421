/**
 * The device factories are defined by the Device class itself (issue 24: they were patched onto
 * Device.prototype from another file, so importing device.ts alone gave a Device without them).
 * This file imports device.ts and nothing else of the runtime.
 */
import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';

describe('Device factories', () => {
  it.each(['createStream', 'createEvent', 'alloc', 'allocHost', 'createFftPlan', 'loadModule'])(
    '%s is a method of the class from device.ts alone',
    (name) => {
      expect(Object.getOwnPropertyNames(Device.prototype)).toContain(name);
      expect(typeof (Device.prototype as unknown as Record<string, unknown>)[name]).toBe('function');
    },
  );
});
