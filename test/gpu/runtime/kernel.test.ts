import type { Kernel } from '../../../src/runtime/kernel.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Module } from '../../../src/runtime/module.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { BASIC_FATBIN, loadBasicModule } from '../helpers.js';
import { readFileSync } from 'node:fs';

describe.skipIf(!gpu.available)(`modules and kernels${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let mod!: Module;
  beforeAll(() => {
    mod = loadBasicModule();
  });

  it('loads from bytes as well as a path, and lists kernels', () => {
    using fromBytes = Module.load({ data: readFileSync(BASIC_FATBIN), label: 'bytes' });
    expect(fromBytes.kernel('fill_f32', ['ptr', 'f32', 'i32']).name).toBe('fill_f32');
    expect(mod.kernelNames()).toEqual(expect.arrayContaining(['saxpy_f32', 'fill_f32', 'empty']));
  });

  it('checks the declared signature against the driver and the arguments per launch', () => {
    expect(() => mod.kernel('saxpy_f32', ['i32', 'f32', 'ptr'])).toThrow(/more than the 3/);
    expect(() => mod.kernel('saxpy_f32', ['i32', 'f64', 'ptr', 'ptr'])).toThrow(/parameter 1/);
    const k = mod.kernel('saxpy_f32', ['i32', 'f32', 'ptr', 'ptr']);
    using x = DeviceBuffer.alloc('f32', 16);
    // From JavaScript (or through a cast) the arity is checked at run time too.
    expect(() => (k as Kernel).launch({ grid: 1, block: 16 }, 16, 1, x)).toThrow(/takes 4 argument/);
    expect(() => k.launch({ grid: 1, block: 2048 }, 16, 1, x, x)).toThrow(/exceeds/);
    expect(() => k.launch({ grid: 0, block: 32 }, 16, 1, x, x)).toThrow(/positive integers/);
    expect(() => k.launch({ grid: 1, block: 32, sharedMemBytes: 10 ** 7 }, 16, 1, x, x)).toThrow(/shared memory/);
    expect(() => k.launch({ grid: 1, block: 32 }, 1.5, 1, x, x)).toThrow(/integer/);
    const gone = DeviceBuffer.alloc('f32', 4, { label: 'gone' });
    gone.dispose();
    expect(() => k.launch({ grid: 1, block: 32 }, 4, 1, gone, x)).toThrow(/"gone" was disposed/);
    expect(() => k.launch({ grid: 1, block: 32 }, 4, 1, undefined as never, x)).toThrow(
      /DeviceBuffer or a device address/,
    );
  });

  it('reports attributes and occupancy', () => {
    const k = mod.kernel('saxpy_f32', ['i32', 'f32', 'ptr', 'ptr']);
    const a = k.attributes;
    expect(a.registers).toBeGreaterThan(0);
    expect(a.maxThreadsPerBlock).toBeGreaterThan(0);
    expect(a.binaryVersion).toBeGreaterThanOrEqual(80);
    const s = k.suggestedLaunch();
    expect(s.blockSize).toBeGreaterThan(0);
    expect(s.minGridSize).toBeGreaterThan(0);
    expect(k.maxActiveBlocksPerMultiprocessor(256)).toBeGreaterThan(0);
  });

  it('launches with clusters and cooperatively (cuLaunchKernelEx)', async () => {
    const fill = mod.kernel('fill_f32', ['ptr', 'f32', 'i32']);
    using s = new Stream();
    using buf = DeviceBuffer.alloc('f32', 4096);
    const v = Math.random() + 3;
    if (Device.get(0).properties.clusterLaunch) {
      fill.launchEx({ grid: 16, block: 256, cluster: 2, stream: s }, buf, v, 4096);
      await s.done();
      expect(buf.read().every((x) => x === Math.fround(v))).toBe(true);
    }
    fill.launchEx({ grid: 16, block: 256, cooperative: true, stream: s }, buf, v + 1, 4096);
    await s.done();
    expect(buf.read().every((x) => x === Math.fround(v + 1))).toBe(true);
  });
});
