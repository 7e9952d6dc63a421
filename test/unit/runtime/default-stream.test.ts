/**
 * The context's default stream and the one rule that resolves a missing `{ stream }` to it
 * (resolveStream), with no GPU: the raw driver is fake-driver.ts's, which records every call. A
 * call given no stream and the same call given `{ stream: context.defaultStream }` must make the
 * same driver calls (synchronous copies and memsets, cuMemAlloc), and a call given a stream of its
 * own the asynchronous ones.
 */
import { describe, expect, it, vi } from 'vitest';
import { calls } from './fake-driver.js';

vi.mock('../../../src/ffi/api.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  ...(await import('./fake-driver.js')).fakeApi(),
}));

const { Context, Device, DeviceBuffer, MemoryPool, Stream, resolveStream } =
  await import('../../../src/runtime/index.js');

/** The driver calls `run` makes, by name, in order (cuCtxSetCurrent aside: it depends on the context the previous call left current). */
function callsOf(run: () => unknown): string[] {
  calls.length = 0;
  run();
  return calls.filter((name) => name !== 'cuCtxSetCurrent');
}

describe('the default stream (fake driver)', () => {
  const context = Device.get(0).context;

  it('is one Stream per context over the NULL stream, labelled after its context', () => {
    const d = context.defaultStream;
    expect(d).toBeInstanceOf(Stream);
    expect(context.defaultStream).toBe(d);
    expect(d.handle).toBeNull();
    expect(d.isDefault).toBe(true);
    expect(d.context).toBe(context);
    expect(d.label).toBe('default stream of device 0 primary context');
    expect(Device.get(1).context.defaultStream).not.toBe(d);
    using own = new Stream({ device: 0 });
    expect(own.isDefault).toBe(false);
    expect(own.handle).not.toBeNull();
  });

  it('resolveStream gives the stream given, else the context default stream', () => {
    using own = new Stream({ device: 0 });
    expect(resolveStream(context, own)).toBe(own);
    expect(resolveStream(context, undefined)).toBe(context.defaultStream);
  });

  it('is left usable by dispose() (no driver call) and disposed with its context', () => {
    const d = context.defaultStream;
    expect(callsOf(() => d.dispose())).toEqual([]);
    expect(d.disposed).toBe(false);
    const other = Context.retainPrimary(Device.get(1));
    const hers = other.defaultStream;
    other.dispose();
    expect(hers.disposed).toBe(true);
  });

  it('a copy, memset or allocation without a stream makes the same driver calls as one given the default stream', () => {
    const d = context.defaultStream;
    const data = new Float32Array(64).fill(1);
    expect(callsOf(() => DeviceBuffer.alloc('f32', 64).dispose())).toEqual(
      callsOf(() => DeviceBuffer.alloc('f32', 64, { stream: d }).dispose()),
    );
    using b = DeviceBuffer.alloc('f32', 64);
    using c = DeviceBuffer.alloc('f32', 64);
    const cases: [string, () => unknown, () => unknown, string][] = [
      ['write', () => b.write(data), () => b.write(data, { stream: d }), 'cuMemcpyHtoD'],
      ['read', () => b.read(), () => b.read(new Float32Array(64), { stream: d }), 'cuMemcpyDtoH'],
      ['copyFrom', () => b.copyFrom(c), () => b.copyFrom(c, { stream: d }), 'cuMemcpyDtoD'],
      ['memset', () => b.memset(0), () => b.memset(0, { stream: d }), 'cuMemsetD32'],
    ];
    for (const [what, omitted, given, call] of cases) {
      const made = callsOf(omitted);
      expect(made, what).toContain(call);
      expect(made, what).not.toContain(`${call}Async`);
      expect(callsOf(given), what).toEqual(made);
    }
  });

  it('a stream of its own makes the asynchronous calls; a pool without a stream allocates on the default stream', () => {
    using s = new Stream({ device: 0 });
    using b = DeviceBuffer.alloc('f32', 64);
    expect(callsOf(() => b.write(new Float32Array(64), { stream: s }))).toContain('cuMemcpyHtoDAsync');
    expect(callsOf(() => b.memset(0, { stream: s }))).toContain('cuMemsetD32Async');
    expect(callsOf(() => DeviceBuffer.alloc('f32', 64, { stream: s }).dispose())).toEqual([
      'cuMemAllocAsync',
      'cuMemFreeAsync',
    ]);
    using pool = new MemoryPool({ device: 0 });
    expect(callsOf(() => DeviceBuffer.alloc('f32', 64, { pool }).dispose())).toContain('cuMemAllocFromPoolAsync');
  });

  it("refuses another context's default stream", () => {
    using b = DeviceBuffer.alloc('f32', 64);
    expect(() => b.write(new Float32Array(64), { stream: Device.get(1).context.defaultStream })).toThrow(
      /belongs to device 0 primary context, not to device 1 primary context/,
    );
  });
});
