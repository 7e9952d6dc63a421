import { describe, expect, it } from 'vitest';
import { DevicePool } from '../../../src/orchestration/device-pool.js';
import '../../../src/runtime/index.js';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { expectSameValues, within } from '../exact.js';
import { gpu } from '../gpu-available.js';
import { poison, randomF32 } from '../helpers.js';
import { titled, twoGpus } from './multi-available.js';

describe.skipIf(!gpu.ok)(titled('DevicePool over the devices present', gpu), () => {
  it('makes one StreamPool per device and places work by each placement', async () => {
    using pool = new DevicePool({
      placement: 'RoundRobin',
      streams: [{ purpose: 'KernelExecution' }, { purpose: 'P2PTransfer' }],
    });
    const count = Device.count();
    expect(pool.devices.map((d) => d.ordinal)).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(pool.pools).toHaveLength(count);
    expect(pool.streams).toHaveLength(2 * count);
    const picked = Array.from({ length: 2 * count }, () => pool.pickDevice().ordinal);
    expect(picked).toEqual([...pool.devices.map((d) => d.ordinal), ...pool.devices.map((d) => d.ordinal)]);
    pool.placement = 'FreeMemory';
    const free = pool.devices.map((d) => d.context.memoryInfo().freeBytes);
    const most = free.indexOf(Math.max(...free));
    expect(pool.pickDevice().ordinal).toBe(pool.devices[most]!.ordinal);
    pool.placement = 'LeastLoaded';
    // Work through run() is counted on its device; copies are transfers.
    const n = 1 << 20;
    const host = randomF32(n);
    const buffers: DeviceBuffer<'f32'>[] = [];
    for (let i = 0; i < 4 * count; i++) {
      const stream = pool.acquire({ purpose: 'KernelExecution' });
      const b = DeviceBuffer.alloc('f32', n, { stream });
      pool.run(stream, 'upload', () => b.write(host, { stream }), { bytes: 4 * n });
      buffers.push(b);
    }
    await within(Promise.all(pool.streams.map((s) => s.done())), 10_000, `the uploads on ${count} device(s)`);
    for (const [i, b] of buffers.entries())
      expectSameValues(b.read(), host, `buffer ${i} on device ${b.context.device.ordinal}`);
    const metrics = pool.metrics();
    expect(metrics.reduce((s, m) => s + m.operations, 0)).toBe(4 * count);
    expect(metrics.reduce((s, m) => s + m.transfers, 0)).toBe(4 * count);
    for (const m of metrics) {
      expect(m.totalBytes).toBeGreaterThan(m.freeBytes);
      expect(m.operations).toBeGreaterThan(0); // least loaded spreads 4 per device over the devices
    }
    for (const b of buffers) b.dispose();
  }, 60_000);

  it('a Coordinator over the pool runs a DAG and reports through the pool', async () => {
    using pool = new DevicePool();
    using coordinator = pool.coordinator();
    const n = 1 << 18;
    const host = randomF32(n);
    const d = pool.devices[0]!;
    using a = DeviceBuffer.alloc('f32', n, { device: d });
    using b = DeviceBuffer.alloc('f32', n, { device: d });
    const out = poison(new Float32Array(n));
    const s0 = pool.pool(d).streams[0]!;
    const s1 = pool.pool(d).streams[1]!;
    coordinator.add({ name: 'upload', kind: 'upload', stream: s0, run: (s) => void a.write(host, { stream: s }) });
    coordinator.add({
      name: 'copy',
      kind: 'copy',
      stream: s1,
      after: ['upload'],
      run: (s) => void b.copyFrom(a, { stream: s }),
    });
    coordinator.add({ name: 'read', kind: 'host', after: ['copy'], run: () => void b.read(out) });
    await within(coordinator.run(), 10_000, 'the DAG on one device');
    expectSameValues(out, host, 'upload, copy, read');
  }, 30_000);

  it('rejects unknown placements and devices', () => {
    expect(() => new DevicePool({ placement: 'Random' as never })).toThrow(/unknown placement/);
    expect(() => new DevicePool({ devices: [Device.count()] })).toThrow(/does not exist/);
  }, 30_000);
});

describe.skipIf(!twoGpus.ok)(titled('DevicePool across two GPUs', twoGpus), () => {
  it('a Coordinator DAG across devices: each step waits for the one before on the other GPU', async () => {
    using pool = new DevicePool({ devices: [0, 1] });
    for (const [a, b] of [
      [0, 1],
      [1, 0],
    ] as const)
      if (Device.get(a).canAccessPeer(b)) Device.get(a).enablePeerAccess(b);
    using coordinator = pool.coordinator();
    const n = 32 << 20; // large enough that a missing cross-device wait would read old data
    const host = randomF32(n);
    using on0 = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 0 });
    using on1 = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 1 });
    using back = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 0 });
    const s0 = pool.pool(0).streams[1]!;
    const s1 = pool.pool(1).streams[1]!;
    const s0b = pool.pool(0).streams[2]!;
    using staging = DeviceBuffer.from('f32', host, { device: 0 });
    // About a millisecond of device-0 work ending in the data: a peer copy that did not wait would read zeros.
    coordinator.add({
      name: 'upload on 0',
      kind: 'copy',
      stream: s0,
      run: (s) => {
        on0.memset(0, { stream: s });
        for (let i = 0; i < 10; i++) on0.copyFrom(staging, { stream: s });
      },
    });
    coordinator.add({
      name: 'to 1',
      kind: 'copy',
      stream: s1,
      after: ['upload on 0'],
      run: (s) => void on1.copyFromPeer(on0, { stream: s }),
    });
    coordinator.add({
      name: 'back to 0',
      kind: 'copy',
      stream: s0b,
      after: ['to 1'],
      run: (s) => void back.copyFromPeer(on1, { stream: s }),
    });
    await within(coordinator.run(), 20_000, 'the DAG across two devices');
    expectSameValues(back.read(), host, 'device 0 -> 1 -> 0');
    const metrics = pool.metrics();
    expect(metrics.map((m) => m.operations)).toEqual([2, 1]);
  }, 60_000);
});
