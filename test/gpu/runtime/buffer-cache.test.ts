/**
 * BufferCache on the GPU: buffers reused by purpose and slot, viewed to the length asked, grown by
 * the growth factor (never shrunk), staged pairs that round-trip fresh data, and the bytes it holds.
 */
import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { BufferCache } from '../../../src/runtime/memory/buffer-cache.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import { expectSameValues } from '../exact.js';
import { gpu } from '../gpu-available.js';
import { poison, randomF32 } from '../helpers.js';

describe.skipIf(!gpu.available)(`BufferCache${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  it('reuses a stream buffer by purpose, viewed to the length asked, and grows it by the growth factor', async () => {
    using stream = new Stream({ label: 'cache stream' });
    const cache = new BufferCache({ stream, label: 'cache' });
    expect(cache.context).toBe(stream.context);
    const a = cache.device('x', 'f32', 100);
    expect(a.length).toBe(100);
    const smaller = cache.device('x', 'f32', 60);
    expect(smaller.length).toBe(60);
    expect(smaller.address).toBe(a.address);
    expect(cache.deviceBytes).toBe(400);
    // Another dtype or purpose is another buffer.
    cache.device('x', 'f64', 10);
    cache.device('y', 'f32', 10);
    expect(cache.deviceBytes).toBe(400 + 80 + 40);
    // A bigger request grows to max(asked, 1.25 x what it had): 125 elements, not 110.
    const grown = cache.device('x', 'f32', 110);
    expect(grown.length).toBe(110);
    expect(cache.deviceBytes).toBe(500 + 80 + 40);
    cache.dispose();
    expect(cache.deviceBytes).toBe(0);
    expect(() => cache.device('x', 'f32', 1)).toThrow(DisposedError);
    await stream.done();
  });

  it('keeps slot buffers and pinned staging per slot; data round-trips through them', async () => {
    using stream = new Stream({ label: 'cache copies' });
    using cache = new BufferCache({ stream, label: 'slots' });
    const n = 4099;
    const data = [randomF32(n), randomF32(n)];
    for (const slot of [0, 1]) {
      const host = cache.host('input', 'f32', n, slot);
      host.array.set(data[slot]!);
      cache.device('input', 'f32', n, { slot }).write(host, { stream, length: n });
    }
    expect(cache.device('input', 'f32', n, { slot: 0 }).address).not.toBe(
      cache.device('input', 'f32', n, { slot: 1 }).address,
    );
    expect(cache.host('input', 'f32', n, 0)).not.toBe(cache.host('input', 'f32', n, 1));
    for (const slot of [0, 1]) {
      const out = cache.host('output', 'f32', n, slot);
      poison(out.array);
      cache.device('input', 'f32', n, { slot }).read(out, { stream, length: n });
    }
    await stream.done();
    for (const slot of [0, 1])
      expectSameValues(cache.host('output', 'f32', n, slot).array.subarray(0, n), data[slot]!, `slot ${slot}`);
    expect(cache.hostBytes).toBe(4 * 4 * n);
    expect(cache.deviceBytes).toBe(2 * 4 * n);
  });

  it('grows staged pairs per slot (growth 2) and round-trips a prefix through them', async () => {
    using stream = new Stream({ label: 'staged' });
    using cache = new BufferCache({ device: Device.get(0), growth: 2, label: 'staged cache' });
    const first = cache.staged('in', 'f32', 8, 0);
    expect(cache.staged('in', 'f32', 5, 0)).toBe(first);
    const grown = cache.staged('in', 'f32', 9, 0);
    expect(grown).not.toBe(first);
    expect(first.disposed).toBe(true);
    expect(grown.length).toBe(16);
    expect(cache.deviceBytes).toBe(64);
    expect(cache.hostBytes).toBe(64);
    const data = randomF32(9);
    grown.array.set(data);
    grown.upload(stream, { length: 9 });
    grown.array.fill(Number.NaN);
    grown.download(stream, { length: 9 });
    await stream.done();
    expectSameValues(grown.array.subarray(0, 9), data, 'staged prefix');
  });

  it('refuses a device buffer without a slot when it has no stream, and a growth below 1', () => {
    using cache = new BufferCache({ label: 'no stream' });
    expect(() => cache.device('x', 'f32', 4)).toThrow(/needs a slot/);
    expect(cache.device('x', 'f32', 4, { slot: 0 }).length).toBe(4);
    expect(() => new BufferCache({ growth: 0.5 })).toThrow(RangeError);
  });
});
