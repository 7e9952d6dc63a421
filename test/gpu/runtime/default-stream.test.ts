/**
 * The context's default stream (`context.defaultStream`, CUDA's legacy NULL stream): what a call
 * that names no stream runs on. A launch, copy or memset without `{ stream }` must be ordered
 * exactly as the same call given `{ stream: context.defaultStream }`: each case puts slow work on
 * one spelling and the next step on the other, so a missing stream resolved to anything else (a
 * new stream, another context's) reads a poisoned buffer.
 */
import type { Kernel } from '../../../src/runtime/kernel.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Module } from '../../../src/runtime/module.js';
import { Device } from '../../../src/runtime/device.js';
import { Graph } from '../../../src/runtime/graph.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { loadBasicModule, maxRelativeError, poison, randomF32 } from '../helpers.js';

/** How long the slow producer spins before it copies: far longer than the host takes to enqueue the next step. */
const SPIN_NS = 30_000_000n;

/** The first index where `got` differs from `want` (NaN differs from everything), or -1. */
function firstMismatch(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return 0;
  for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) return i;
  return -1;
}

describe.skipIf(!gpu.available)(`the default stream${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let mod!: Module;
  beforeAll(() => {
    mod = loadBasicModule();
  });
  const slowCopy = (): Kernel => mod.kernel('spin_then_copy_f32', ['ptr', 'ptr', 'i32', 'u64']) as Kernel;
  const scale = (): Kernel => mod.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']) as Kernel;

  it('is one Stream per context over the legacy NULL stream, which dispose() leaves usable', async () => {
    const context = Device.get(0).context;
    const d = context.defaultStream;
    expect(d).toBeInstanceOf(Stream);
    expect(context.defaultStream).toBe(d);
    expect(d.handle).toBeNull();
    expect(d.isDefault).toBe(true);
    expect(d.context).toBe(context);
    expect(d.label).toMatch(/default stream of device 0/);
    using own = new Stream();
    expect(own.isDefault).toBe(false);
    d.dispose();
    expect(d.disposed).toBe(false);
    using x = DeviceBuffer.from('f32', randomF32(1024));
    x.memset(0, { stream: d });
    await d.done();
    expect(d.query()).toBe(true);
    expect(() => Graph.capture(d, () => {})).toThrow(/cannot be captured/);
  });

  it('a launch without a stream runs after slow work enqueued on context.defaultStream, and the other way round', () => {
    const n = 1 << 20;
    const context = Device.get(0).context;
    for (const producerOn of ['explicit', 'omitted'] as const) {
      const x = randomF32(n);
      const a = Math.random() + 0.5;
      using src = DeviceBuffer.from('f32', x);
      using mid = DeviceBuffer.from('f32', poison(new Float32Array(n)));
      using out = DeviceBuffer.from('f32', poison(new Float32Array(n)));
      const producer = producerOn === 'explicit' ? { stream: context.defaultStream } : {};
      const consumer = producerOn === 'explicit' ? {} : { stream: context.defaultStream };
      slowCopy().launch({ grid: 256, block: 256, ...producer }, src, mid, n, SPIN_NS);
      scale().launch({ grid: 256, block: 256, ...consumer }, out, mid, a, n);
      // A read without a stream is synchronous on the default stream: it waits for both launches.
      const got = out.read();
      const want = Float64Array.from(x, (v) => Math.fround(a) * v);
      expect(maxRelativeError(got, want), `producer ${producerOn}`).toBeLessThan(1e-6);
    }
  });

  it('a write and a memset without a stream wait for slow work on the default stream that reads or writes the buffer', () => {
    const n = 1 << 20;
    const context = Device.get(0).context;
    const before = randomF32(n);
    const after = randomF32(n);
    using a = DeviceBuffer.from('f32', before);
    using seen = DeviceBuffer.from('f32', poison(new Float32Array(n)));
    // The slow kernel reads `a` on the default stream; the write must land after that read.
    slowCopy().launch({ grid: 256, block: 256, stream: context.defaultStream }, a, seen, n, SPIN_NS);
    a.write(after);
    expect(firstMismatch(seen.read(), before)).toBe(-1);
    expect(firstMismatch(a.read(), after)).toBe(-1);
    // The slow kernel writes `a` on the default stream; the memset must land after that write.
    using b = DeviceBuffer.from('f32', poison(new Float32Array(n)));
    slowCopy().launch({ grid: 256, block: 256, stream: context.defaultStream }, seen, b, n, SPIN_NS);
    b.memset(0);
    expect(firstMismatch(b.read(), new Float32Array(n))).toBe(-1);
  });

  it('a copy given { stream: context.defaultStream } is synchronous, as one given no stream', () => {
    const n = 1 << 20;
    const context = Device.get(0).context;
    const x = randomF32(n);
    using src = DeviceBuffer.from('f32', x);
    using mid = DeviceBuffer.from('f32', poison(new Float32Array(n)));
    // Pinned memory: an asynchronous copy into it would return before the slow kernel ends.
    using host = HostBuffer.alloc('f32', n);
    poison(host.array);
    slowCopy().launch({ grid: 256, block: 256 }, src, mid, n, SPIN_NS);
    mid.read(host, { stream: context.defaultStream });
    expect(firstMismatch(host.array, x)).toBe(-1);
  });
});
