import type { Kernel } from '../../../src/runtime/kernel.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Module } from '../../../src/runtime/module.js';
import { Device, driverVersion } from '../../../src/runtime/device.js';
import { Event, EventPool } from '../../../src/runtime/event.js';
import { Stream } from '../../../src/runtime/stream.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { gpu } from '../gpu-available.js';
import { loadBasicModule } from '../helpers.js';

describe.skipIf(!gpu.available)(
  `devices, contexts, streams and events${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let mod!: Module;
    beforeAll(() => {
      mod = loadBasicModule();
    });
    const spin = {
      launch: (...a: Parameters<Kernel['launch']>): void => (mod.kernel('spin_ns', ['u64']) as Kernel).launch(...a),
      launchEx: (...a: Parameters<Kernel['launchEx']>): void =>
        (mod.kernel('spin_ns', ['u64']) as Kernel).launchEx(...a),
    };
    const fill = {
      launch: (...a: Parameters<Kernel['launch']>): void =>
        (mod.kernel('fill_f32', ['ptr', 'f32', 'i32']) as Kernel).launch(...a),
      launchEx: (...a: Parameters<Kernel['launchEx']>): void =>
        (mod.kernel('fill_f32', ['ptr', 'f32', 'i32']) as Kernel).launchEx(...a),
    };

    it('reports the device and its properties', () => {
      expect(Device.count()).toBeGreaterThan(0);
      expect(driverVersion()).toBeGreaterThanOrEqual(12000);
      const device = Device.get(0);
      const ctx = device.context;
      const p = device.properties;
      expect(p.name).toMatch(/NVIDIA/);
      expect(p.computeCapability.major).toBeGreaterThanOrEqual(8);
      expect(p.multiprocessorCount).toBeGreaterThan(0);
      expect(p.totalMemoryBytes).toBeGreaterThan(1e9);
      expect(p.pciBusId).toMatch(/^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.\d$/i);
      expect(p.maxThreadsPerBlock).toBe(1024);
      expect(device.arch).toBe(`sm_${p.computeCapability.major}${p.computeCapability.minor}`);
      const mem = ctx.memoryInfo();
      expect(mem.freeBytes).toBeGreaterThan(0);
      expect(mem.totalBytes).toBeGreaterThanOrEqual(mem.freeBytes);
      expect(() => Device.get(Device.count())).toThrow(RangeError);
    });

    it('maps stream priorities onto the context range', () => {
      const { least, greatest } = Device.get(0).context.streamPriorityRange;
      using high = new Stream({ priority: 'high', label: 'hi' });
      using low = new Stream({ priority: 'low' });
      using normal = new Stream({ priority: 'normal' });
      expect(high.priority).toBe(greatest);
      expect(low.priority).toBe(least);
      expect(normal.priority).toBeGreaterThanOrEqual(greatest);
      expect(normal.priority).toBeLessThanOrEqual(least);
      expect(high.label).toBe('hi');
      expect(() => new Stream({ priority: 1.5 })).toThrow(/priority/);
    });

    it('done() resolves after the work, query() and synchronize() agree', async () => {
      using s = new Stream();
      spin.launch({ grid: 1, block: 1, stream: s }, 20_000_000n);
      expect(s.query()).toBe(false);
      const t0 = performance.now();
      await s.done();
      expect(performance.now() - t0).toBeGreaterThan(10);
      expect(s.query()).toBe(true);
      s.synchronize();
    });

    it('onComplete fires in submission order', async () => {
      using s = new Stream();
      const order: number[] = [];
      for (let i = 0; i < 5; i++) {
        spin.launch({ grid: 1, block: 1, stream: s }, 200_000n);
        s.onComplete(() => order.push(i));
      }
      await s.done();
      await new Promise((r) => setImmediate(r));
      expect(order).toEqual([0, 1, 2, 3, 4]);
    });

    it('waitEvent orders work across streams without a host sync', async () => {
      using a = new Stream({ label: 'producer' });
      using b = new Stream({ label: 'consumer' });
      using buf = DeviceBuffer.alloc('f32', 1 << 20);
      using ev = new Event();
      const out = new Float32Array(1 << 20);
      spin.launch({ grid: 1, block: 1, stream: a }, 30_000_000n);
      const value = Math.random() + 1;
      fill.launch({ grid: 4096, block: 256, stream: a }, buf, value, buf.length);
      ev.record(a);
      b.waitEvent(ev);
      const host = new Float32Array(1 << 20).fill(Number.NaN);
      void host;
      buf.read(out, { stream: b });
      await b.done();
      expect(out.every((x) => x === Math.fround(value))).toBe(true);
    });

    it('times with events and reuses pooled events', async () => {
      using s = new Stream();
      using start = new Event({ timing: true });
      using end = new Event({ timing: true });
      start.record(s);
      spin.launch({ grid: 1, block: 1, stream: s }, 5_000_000n);
      end.record(s);
      await end.done();
      expect(end.query()).toBe(true);
      const ms = Event.elapsedMs(start, end);
      expect(ms).toBeGreaterThan(4);
      expect(ms).toBeLessThan(50);
      using untimed = new Event();
      untimed.record(s);
      untimed.synchronize();
      expect(() => untimed.elapsedSince(start)).toThrow(/timing: true/);
      using pool = new EventPool();
      const e1 = pool.acquire();
      pool.release(e1);
      expect(pool.acquire()).toBe(e1);
      expect(pool.size).toBe(1);
    });

    it('throws a clear error when a disposed object is used', () => {
      const s = new Stream({ label: 'gone' });
      s.dispose();
      expect(() => s.query()).toThrow(DisposedError);
      expect(() => s.query()).toThrow(/Stream "gone" was disposed/);
      const e = new Event({ label: 'old' });
      e.dispose();
      expect(() => e.record(new Stream())).toThrow(/Event "old" was disposed/);
    });
  },
);
