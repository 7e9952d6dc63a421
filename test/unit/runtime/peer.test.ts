/**
 * Peer access and peer copies are the classes' own methods (no file patches Device or
 * DeviceBuffer): they exist, and a copy between contexts takes the peer path, whichever runtime
 * files a program imports. No GPU: two fake devices (fake-driver.ts) whose driver calls are
 * recorded. The GPU half (real copies, access between real devices) is test/gpu/multi/peer.test.ts.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
// Only the class files, neither the runtime's entry point nor peer.ts: nothing else may be needed for these methods.
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { calls, outValues } from './fake-driver.js';

vi.mock('../../../src/ffi/api.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  ...(await import('./fake-driver.js')).fakeApi(),
}));

beforeEach(() => {
  calls.length = 0;
});

describe('peer access, methods of Device', () => {
  it('are own methods of the class', () => {
    for (const name of ['canAccessPeer', 'enablePeerAccess', 'disablePeerAccess'] as const)
      expect(Object.hasOwn(Device.prototype, name)).toBe(true);
    expect(Object.hasOwn(DeviceBuffer.prototype, 'copyFromPeer')).toBe(true);
  });

  it('take a Device or an ordinal, answer false for the device itself and name a bad argument', () => {
    const d0 = Device.get(0);
    expect(d0.canAccessPeer(d0)).toBe(false);
    expect(d0.canAccessPeer(0)).toBe(false);
    expect(calls).not.toContain('cuDeviceCanAccessPeer');
    expect(() => d0.canAccessPeer('1' as never)).toThrow(
      /canAccessPeer\(other\) must be a Device or an ordinal, got string/,
    );
    expect(() => d0.enablePeerAccess(d0)).not.toThrow();
    expect(() => d0.disablePeerAccess(0)).not.toThrow();
  });

  it('ask the driver about another device, and refuse to enable access it denies', () => {
    const [d0, d1] = [Device.get(0), Device.get(1)];
    outValues.cuDeviceCanAccessPeer = [0];
    expect(d0.canAccessPeer(1)).toBe(false);
    expect(() => d0.enablePeerAccess(d1)).toThrow(
      expect.objectContaining({ name: 'PeerAccessUnsupportedError' }) as Error,
    );
    outValues.cuDeviceCanAccessPeer = [1];
    expect(d0.canAccessPeer(d1)).toBe(true);
    calls.length = 0;
    d0.enablePeerAccess(d1);
    expect(calls).toContain('cuCtxEnablePeerAccess');
    expect(calls.filter((c) => c === 'cuMemPoolSetAccess').length).toBeGreaterThanOrEqual(1);
  });
});

describe('copies between devices', () => {
  it('copyFrom a buffer of another device takes the peer path (cuMemcpyPeerAsync), not a same-context copy', () => {
    const a = DeviceBuffer.alloc('f32', 16, { device: 0, label: 'a' });
    const b = DeviceBuffer.alloc('f32', 16, { device: 1, label: 'b' });
    const stream = new Stream({ device: 1, label: 's' });
    calls.length = 0;
    b.copyFrom(a, { stream });
    expect(calls).toContain('cuMemcpyPeerAsync');
    expect(calls).not.toContain('cuMemcpyDtoDAsync');
    calls.length = 0;
    b.copyFromPeer(a);
    expect(calls).toContain('cuMemcpyPeer');
  });
});
