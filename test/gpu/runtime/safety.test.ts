/**
 * Memory safety and totality in this process (the crash-risky cases are in test/gpu/fault/):
 * bounded poller lanes, promises that settle when their object is disposed, a healthy context's
 * `lost` staying pending, views rooted at the owning buffer, host arrays outliving dispose().
 */
import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { Event } from '../../../src/runtime/event.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import { loadBasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { randomF32 } from '../helpers.js';

describe.skipIf(!gpu.available)(`runtime safety${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  it('removes a stream lane from the poller once its completions settled (bounded memory)', async () => {
    const k = loadBasicKernels();
    const context = Device.get(0).context;
    const streams = Array.from({ length: 64 }, (_, i) => new Stream({ label: `lane ${i}` }));
    for (const s of streams) k.spin_ns({ grid: 1, block: 1, stream: s }, 50_000_000n);
    const pending = streams.map((s) => s.done());
    expect(context.completion.lanes).toBeGreaterThan(0);
    await Promise.all(pending);
    expect(context.completion.lanes).toBe(0);
    expect(context.completion.pending).toBe(0);
    for (const s of streams) s.dispose();
    k.module.dispose();
  });

  it('settles done() of an event disposed while awaited, and keeps polling the others', async () => {
    const k = loadBasicKernels();
    const s = new Stream();
    k.spin_ns({ grid: 1, block: 1, stream: s }, 100_000_000n);
    const e = new Event({ label: 'dropped' }).record(s);
    const awaited = e.done();
    const other = s.done();
    e.dispose();
    await expect(awaited).rejects.toThrow(/Event "dropped" was disposed while done\(\) was pending/);
    await expect(other).resolves.toBeUndefined();
    k.module.dispose();
  });

  it('rejects done() of a disposed stream instead of hanging or throwing', async () => {
    const s = new Stream({ label: 'gone' });
    s.dispose();
    const p = s.done();
    await expect(p).rejects.toBeInstanceOf(DisposedError);
    s.dispose(); // twice: a no-op
  });

  it("keeps a healthy context's `lost` pending and its stickyError undefined", async () => {
    const context = Device.get(0).context;
    const outcome = await Promise.race([
      context.lost.then(
        () => 'resolved',
        () => 'rejected',
      ),
      new Promise((r) => setTimeout(() => r('pending'), 50)),
    ]);
    expect(outcome).toBe('pending');
    expect(context.stickyError).toBeUndefined();
  });

  it('roots a view of a view at the owning buffer, so its uses order the owner’s free', async () => {
    const s = new Stream();
    const a = DeviceBuffer.alloc('f32', 1024, { stream: s, label: 'owner' });
    const v = a.view(100, 500).view(50, 100);
    expect(v.parent).toBe(a);
    expect(v.address).toBe(a.address + 150 * 4);
    const x = randomF32(100);
    v.write(x, { stream: s });
    const back = new Float32Array(100);
    a.read(back, { stream: s, offset: 150, length: 100 });
    await s.done();
    expect(Array.from(back)).toEqual(Array.from(x));
    a.dispose();
    expect(() => v.read()).toThrow(DisposedError);
  });

  it('frees a HostBuffer disposed under a queued copy only after the copy, so no other buffer receives its bytes', async () => {
    const k = loadBasicKernels();
    const s = new Stream();
    const n = 1 << 20;
    const d = DeviceBuffer.from(
      'f32',
      randomF32(n).map((v) => v + 3),
    );
    const h = HostBuffer.alloc('f32', n, { label: 'disposed under a copy' });
    k.spin_ns({ grid: 1, block: 1, stream: s }, 200_000_000n);
    d.read(h, { stream: s }); // lands after the spin
    h.dispose();
    const others = Array.from({ length: 8 }, () => HostBuffer.alloc('f32', n));
    for (const o of others) o.array.fill(-1);
    await s.done();
    await new Promise((r) => setTimeout(r, 20)); // the deferred free runs after the poller saw the copy complete
    for (const o of others) expect(o.array.every((v) => v === -1)).toBe(true);
    for (const o of others) o.dispose();
    k.module.dispose();
  });

  it('keeps a HostBuffer array usable after dispose(), on pages nothing else is given', async () => {
    const h = HostBuffer.alloc('f32', 1024);
    const a = h.array;
    a.fill(2.5);
    h.dispose();
    expect(() => h.array).toThrow(DisposedError);
    const other = HostBuffer.alloc('f32', 1024);
    other.array.fill(-1);
    expect(a.every((v) => v === 2.5)).toBe(true);
    const d = DeviceBuffer.from('f32', a);
    expect(d.read()[17]).toBe(2.5);
    other.dispose();
  });
});
