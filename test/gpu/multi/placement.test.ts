/**
 * The one placement rule on a real machine: every API that takes a device refuses what the
 * machine lacks (naming how many it has), a device listed twice, and two placements naming
 * different devices; nothing falls back to device 0.
 */
import { describe, expect, it } from 'vitest';
import { JobEngine } from '../../../src/engine/index.js';
import { DevicePool } from '../../../src/orchestration/device-pool.js';
import { resolvePlacement } from '../../../src/runtime/defaults.js';
import { Device } from '../../../src/runtime/device.js';
import '../../../src/runtime/index.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { MemoryPool } from '../../../src/runtime/memory/memory-pool.js';
import { PlacementError } from '../../../src/runtime/placement-rules.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { titled, twoGpus } from './multi-available.js';

describe.skipIf(!gpu.ok)(titled('the placement rule on the devices present', gpu), () => {
  it('a device the machine lacks is refused by every API, naming the count', () => {
    const count = Device.count();
    const missing = new RegExp(`device ${count} does not exist .*this machine has ${count} CUDA device`);
    expect(() => resolvePlacement({ device: count }, 'x')).toThrow(missing);
    expect(() => new JobEngine({ devices: [0, count] })).toThrow(missing);
    expect(() => new JobEngine({ device: count })).toThrow(PlacementError);
    expect(() => new DevicePool({ devices: [count] })).toThrow(missing);
    expect(() => new MemoryPool({ device: count })).toThrow(/does not exist/);
  }, 30_000);

  it('duplicates and two placements at once are refused; all and the default resolve as documented', () => {
    expect(() => new JobEngine({ devices: [0, 0] })).toThrow(/device 0 is listed twice/);
    expect(() => new DevicePool({ devices: [0, 0] })).toThrow(/listed twice/);
    expect(() => new JobEngine({ device: 0, devices: [0] })).toThrow(/give one of device, devices and context/);
    expect(resolvePlacement({ devices: 'all' }, 'x').map((d) => d.ordinal)).toEqual(
      Array.from({ length: Device.count() }, (_, i) => i),
    );
    expect(resolvePlacement(undefined, 'x').map((d) => d.ordinal)).toEqual([0]);
    expect(resolvePlacement({ context: Device.get(0).context }, 'x')).toEqual([Device.get(0)]);
    using s = new Stream({ device: 0, context: Device.get(0).context }); // the same device twice: agreed
    expect(s.context.device.ordinal).toBe(0);
  }, 30_000);
});

describe.skipIf(!twoGpus.ok)(titled('the placement rule across two GPUs', twoGpus), () => {
  it("a device beside a stream or context of another device is refused, never overridden by the stream's", () => {
    using s0 = new Stream({ device: 0 });
    expect(() => DeviceBuffer.alloc('f32', 4, { device: 1, stream: s0 })).toThrow(PlacementError);
    expect(() => new Stream({ device: 1, context: Device.get(0).context })).toThrow(/name different devices/);
    using b = DeviceBuffer.alloc('f32', 4, { device: 0, stream: s0 });
    expect(b.context.device.ordinal).toBe(0);
    using pool = new MemoryPool({ device: 1 });
    expect(pool.device.ordinal).toBe(1);
  }, 30_000);
});
