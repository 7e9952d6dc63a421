import { describe, expect, it } from 'vitest';
import { driverApi } from '../../../src/runtime/cuda.js';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { PeerAccessUnsupportedError } from '../../../src/runtime/peer.js';
import '../../../src/runtime/index.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { poison, randomF32 } from '../helpers.js';
import { titled, twoGpus } from './multi-available.js';

describe.skipIf(!gpu.ok)(titled('peer access and peer copies on one device', gpu), () => {
  it('a device is not its own peer; enabling access to itself does nothing', () => {
    const d = Device.get(0);
    expect(d.canAccessPeer(d)).toBe(false);
    expect(d.canAccessPeer(0)).toBe(false);
    expect(() => d.enablePeerAccess(d)).not.toThrow();
    expect(() => d.disablePeerAccess(0)).not.toThrow();
    expect(() => d.canAccessPeer('1' as never)).toThrow(TypeError);
  });

  it('copyFromPeer between buffers of one device (cuMemcpyPeerAsync, same path) copies exactly, on a stream and synchronously', async () => {
    const n = (1 << 20) + 3;
    const host = randomF32(n);
    using stream = new Stream({ device: 0 });
    using src = DeviceBuffer.from('f32', host, { stream });
    using dst = DeviceBuffer.from('f32', poison(new Float32Array(n)), { stream });
    dst.copyFromPeer(src, { stream });
    const out = new Float32Array(n);
    dst.read(out, { stream });
    await stream.done();
    expect(out).toEqual(host);
    // Synchronous, with offsets: only [10, 110) of dst changes.
    using dst2 = DeviceBuffer.from('f32', poison(new Float32Array(200)));
    dst2.copyFromPeer(src, { offset: 10, otherOffset: 1000, length: 100 });
    const got = dst2.read() as Float32Array;
    expect(Array.from(got.subarray(10, 110))).toEqual(Array.from(host.subarray(1000, 1100)));
    expect(got.subarray(0, 10).every(Number.isNaN) && got.subarray(110).every(Number.isNaN)).toBe(true);
  });

  it('refuses overlapping ranges, mixed dtypes and ranges outside either buffer', () => {
    using a = DeviceBuffer.alloc('f32', 64);
    using b = DeviceBuffer.alloc('i32', 64);
    expect(() => a.view(0, 32).copyFromPeer(a.view(16, 32))).toThrow(/overlap/);
    expect(() => a.copyFromPeer(b as never)).toThrow(/element types differ/);
    expect(() => a.copyFromPeer(a.view(0, 8), { offset: 60, length: 8 })).toThrow(/outside/);
  });
});

describe.skipIf(!twoGpus.ok)(titled('peer access and copies between two GPUs', twoGpus), () => {
  it('reports the topology, enables access where the driver allows it, and copies both ways exactly', async () => {
    const [d0, d1] = [Device.get(0), Device.get(1)];
    const p01 = d0.canAccessPeer(d1);
    const p10 = d1.canAccessPeer(d0);
    const attr = (a: number, s: Device, d: Device): number => {
      const c: [number | null] = [0];
      driverApi().cuDeviceGetP2PAttribute(c, a as never, s.handle, d.handle);
      return c[0]!;
    };
    console.log(`peer access: 0->1 ${p01}, 1->0 ${p10}; P2P attributes 0->1: performance rank ${attr(1, d0, d1)}, native atomics ${attr(3, d0, d1)}`);
    for (const [a, b, ok] of [
      [d0, d1, p01],
      [d1, d0, p10],
    ] as const) {
      if (ok) a.enablePeerAccess(b);
      else expect(() => a.enablePeerAccess(b)).toThrow(PeerAccessUnsupportedError);
    }
    const n = (8 << 20) + 5;
    const host = randomF32(n);
    for (const [from, to] of [
      [d0, d1],
      [d1, d0],
    ] as const) {
      for (const streamDevice of [from, to]) {
        using stream = new Stream({ device: streamDevice });
        using src = DeviceBuffer.from('f32', host, { device: from });
        using dst = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: to });
        dst.copyFromPeer(src, { stream });
        await stream.done();
        expect(dst.read(), `${from.ordinal} -> ${to.ordinal}, stream on ${streamDevice.ordinal}`).toEqual(host);
      }
    }
  });

  it('a stream-ordered source freed right after a peer copy is not reused before the copy has read it', async () => {
    const n = 16 << 20;
    const host = randomF32(n);
    using s0 = new Stream({ device: 0 });
    using s1 = new Stream({ device: 1 });
    using dst = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 1 });
    const src = DeviceBuffer.from('f32', host, { stream: s0 });
    await s0.done();
    dst.copyFromPeer(src, { stream: s1 });
    src.dispose(); // freed on s0, which must wait for the copy on s1
    using scribble = DeviceBuffer.alloc('f32', n, { stream: s0 });
    scribble.memset(0, { stream: s0 });
    await Promise.all([s0.done(), s1.done()]);
    expect(dst.read()).toEqual(host);
  });

  it('buffer.copyFrom of a buffer on another device goes through the peer copy (DeviceBuffer.copyFrom hook)', async () => {
    const host = randomF32(4096);
    using s1 = new Stream({ device: 1 });
    using src = DeviceBuffer.from('f32', host, { device: 0 });
    using dst = DeviceBuffer.alloc('f32', 4096, { device: 1 });
    dst.copyFrom(src, { stream: s1 });
    await s1.done();
    expect(dst.read()).toEqual(host);
  });

  it('a stream of neither buffer device is refused', () => {
    using a = DeviceBuffer.alloc('f32', 4, { device: 0 });
    using b = DeviceBuffer.alloc('f32', 4, { device: 0 });
    using s1 = new Stream({ device: 1 });
    expect(() => a.copyFromPeer(b, { stream: s1 })).toThrow(/neither buffer's device/);
  });
});
