import type { Kernel } from '../../../src/runtime/kernel.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Module } from '../../../src/runtime/module.js';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { ManagedBuffer } from '../../../src/runtime/memory/managed-buffer.js';
import { MemoryPool } from '../../../src/runtime/memory/memory-pool.js';
import { allocPitched, copy2D } from '../../../src/runtime/memory/copy-2d.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { loadBasicModule, poison, randomF32, randomF64 } from '../helpers.js';

describe.skipIf(!gpu.available)(`memory${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let mod!: Module;
  beforeAll(() => {
    mod = loadBasicModule();
  });
  const scale = {
    launch: (...a: Parameters<Kernel['launch']>): void =>
      (mod.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']) as Kernel).launch(...a),
    launchEx: (...a: Parameters<Kernel['launchEx']>): void =>
      (mod.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']) as Kernel).launchEx(...a),
  };

  it('round-trips every dtype synchronously', () => {
    const n = 10_007;
    const cases = [
      ['f32', randomF32(n)],
      ['f64', randomF64(n)],
      ['i32', Int32Array.from({ length: n }, () => (Math.random() * 2 ** 31) | 0)],
      ['u8', Uint8Array.from({ length: n }, () => (Math.random() * 256) | 0)],
      ['i64', BigInt64Array.from({ length: n }, () => BigInt(Math.floor(Math.random() * 2 ** 52)) - 2n ** 51n)],
      ['c64', randomF32(2 * n)],
    ] as const;
    for (const [dtype, data] of cases) {
      using buf = DeviceBuffer.from(dtype, data as never);
      expect(buf.length).toBe(n);
      const back = buf.read();
      expect(back).toEqual(data);
    }
  });

  it('a stream-less write, copy or memset is in place when it returns: work queued next on a non-blocking stream sees it', async () => {
    // cuMemcpyHtoD from pageable memory returns once staged; DtoD and memset do not wait at all.
    // 32 MiB leaves the DMA far behind the return unless the library waits for it.
    const n = 8 << 20;
    using s = new Stream();
    using a = DeviceBuffer.alloc('f32', n);
    using b = DeviceBuffer.alloc('f32', n);
    using seen = DeviceBuffer.alloc('f32', n);
    using out = HostBuffer.alloc('f32', n);
    const firstMismatch = (want: (i: number) => number): number => {
      for (let i = 0; i < n; i++) if (out.array[i] !== want(i)) return i;
      return -1;
    };
    const check = async (what: string, from: DeviceBuffer<'f32'>, want: (i: number) => number): Promise<void> => {
      seen.copyFrom(from, { stream: s });
      poison(out.array);
      seen.read(out, { stream: s });
      await s.done();
      expect(firstMismatch(want), what).toBe(-1);
    };
    for (let round = 0; round < 3; round++) {
      const data = randomF32(n);
      a.write(data);
      await check(`write, round ${round}`, a, (i) => data[i]!);
      b.copyFrom(a);
      await check(`copyFrom, round ${round}`, b, (i) => data[i]!);
      const bits = (0x3f000000 + round * 0x10000 + ((Math.random() * 0xffff) | 0)) >>> 0;
      b.memset(bits);
      const value = new Float32Array(new Uint32Array([bits]).buffer)[0]!;
      await check(`memset, round ${round}`, b, () => value);
    }
  });

  it('copies ranges, views and device-to-device, asynchronously through pinned memory', async () => {
    using s = new Stream();
    const n = 1 << 20;
    using host = HostBuffer.alloc('f32', n);
    host.array.set(randomF32(n));
    using a = DeviceBuffer.alloc('f32', n, { stream: s });
    using b = DeviceBuffer.alloc('f32', n);
    a.write(host, { stream: s });
    b.copyFrom(a, { stream: s });
    using out = HostBuffer.alloc('f32', n);
    poison(out.array);
    b.read(out, { stream: s });
    await s.done();
    expect(out.array).toEqual(host.array);
    const view = b.view(1000, 24);
    const part = view.read();
    expect(part).toEqual(host.array.subarray(1000, 1024));
    const small = new Float32Array(8).fill(Number.NaN);
    b.read(small, { otherOffset: 2, offset: 500, length: 4 });
    expect(small.subarray(2, 6)).toEqual(host.array.subarray(500, 504));
    expect(Number.isNaN(small[0]!)).toBe(true);
  });

  it('rejects out-of-bounds copies, wrong element types and bad sizes before the driver', () => {
    using buf = DeviceBuffer.alloc('f32', 100, { label: 'small' });
    expect(() => buf.write(new Float32Array(200))).not.toThrow();
    expect(() => buf.write(new Float32Array(10), { offset: 95, length: 10 })).toThrow(/outside "small"/);
    expect(() => buf.write(new Float32Array(10), { otherOffset: 8, length: 5 })).toThrow(/outside the other side/);
    expect(() => buf.write(new Float64Array(10) as never)).toThrow(/Float32Array/);
    expect(() => buf.view(90, 20)).toThrow(RangeError);
    expect(() => DeviceBuffer.alloc('f32', 0)).toThrow(/positive integer/);
    expect(() => DeviceBuffer.alloc('f32', -3)).toThrow(/positive integer/);
    expect(() => DeviceBuffer.alloc('f32', 1.5)).toThrow(/positive integer/);
    using other = DeviceBuffer.alloc('f64', 100);
    expect(() => buf.copyFrom(other as never)).toThrow(/element types differ/);
  });

  it('memsets 8, 16 and 32 bits', () => {
    using s = new Stream();
    using b = DeviceBuffer.alloc('u32', 1000);
    b.memset(0xdeadbeef, { stream: s });
    s.synchronize();
    expect(b.read().every((x) => x === 0xdeadbeef)).toBe(true);
    b.memset(0xab, { width: 8 });
    expect(b.read().every((x) => x === 0xabababab)).toBe(true);
    b.memset(0x1234, { width: 16 });
    expect(b.read().every((x) => x === 0x12341234)).toBe(true);
    expect(() => b.memset(256, { width: 8 })).toThrow(/does not fit/);
  });

  it('allocates from a memory pool, reports usage and trims', async () => {
    using pool = new MemoryPool({ releaseThreshold: 64 << 20, label: 'test pool' });
    expect(pool.releaseThreshold).toBe(64 << 20);
    using s = new Stream();
    const bufs = Array.from({ length: 8 }, () => DeviceBuffer.alloc('f64', 1 << 17, { pool, stream: s }));
    const usage = pool.usage();
    expect(usage.usedBytes).toBeGreaterThanOrEqual(8 * (1 << 20));
    const data = randomF64(1 << 17);
    bufs[3]!.write(data, { stream: s });
    await s.done();
    expect(bufs[3]!.read()).toEqual(data);
    for (const b of bufs) b.dispose();
    await s.done();
    expect(pool.usage().usedBytes).toBe(0);
    const reserved = pool.usage().reservedBytes;
    expect(reserved).toBeGreaterThan(0);
    pool.releaseThreshold = 0;
    Device.get(0).context.synchronize();
    pool.trim(0);
    console.log(`pool reserved before trim ${reserved}, after ${pool.usage().reservedBytes}`);
    expect(pool.usage().reservedBytes).toBeLessThan(reserved);
  });

  it('pins user memory (register) and maps host memory into the device', async () => {
    const n = 4096;
    const mine = randomF32(n);
    using reg = HostBuffer.register('f32', mine);
    using d = DeviceBuffer.alloc('f32', n);
    using s = new Stream();
    d.write(reg, { stream: s });
    await s.done();
    expect(d.read()).toEqual(mine);
    using mapped = HostBuffer.alloc('f32', n, { mapped: true });
    mapped.array.set(randomF32(n));
    using out = DeviceBuffer.alloc('f32', n);
    const a = Math.random() + 0.5;
    scale.launch({ grid: 16, block: 256, stream: s }, out, mapped.devicePointer, a, n);
    await s.done();
    const got = out.read();
    for (let i = 0; i < n; i++) expect(got[i]).toBe(Math.fround(Math.fround(a) * mapped.array[i]!));
  });

  it('managed memory is shared by host and device, with prefetch and advice', async () => {
    using s = new Stream();
    const n = 1 << 16;
    using m = ManagedBuffer.alloc('f32', n);
    const src = randomF32(n);
    m.array.set(src);
    m.advise('readMostly', Device.get(0));
    m.prefetch(Device.get(0), s);
    using out = DeviceBuffer.alloc('f32', n);
    scale.launch({ grid: 64, block: 256, stream: s }, out, m, 2, n);
    m.prefetch('host', s);
    await s.done();
    const got = out.read();
    for (let i = 0; i < n; i += 97) expect(got[i]).toBe(Math.fround(2 * src[i]!));
    expect(m.array[5]).toBe(src[5]);
  });

  it('copies pitched 2D rectangles', () => {
    const w = 300;
    const h = 40;
    const p = allocPitched('f32', w, h);
    expect(p.pitchBytes).toBeGreaterThanOrEqual(w * 4);
    using host = HostBuffer.alloc('f32', w * h);
    host.array.set(randomF32(w * h));
    copy2D({
      src: host,
      srcPitchBytes: w * 4,
      dst: p.buffer,
      dstPitchBytes: p.pitchBytes,
      widthBytes: w * 4,
      height: h,
    });
    using back = HostBuffer.alloc('f32', w * h);
    poison(back.array);
    copy2D({
      src: p.buffer,
      srcPitchBytes: p.pitchBytes,
      dst: back,
      dstPitchBytes: w * 4,
      widthBytes: w * 4,
      height: h,
    });
    expect(back.array).toEqual(host.array);
    expect(() =>
      copy2D({ src: host, srcPitchBytes: 4, dst: p.buffer, dstPitchBytes: p.pitchBytes, widthBytes: w * 4, height: h }),
    ).toThrow(/pitch/);
    p.buffer.dispose();
  });
});
