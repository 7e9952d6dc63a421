import { describe, expect, it } from 'vitest';
import { checkFftBuffers, type FftBufferLike, fftGeometry, fftPlanKey } from '../../../../src/runtime/fft/geometry.js';
import type { DType } from '../../../../src/runtime/memory/dtype.js';

/** A stand-in for a DeviceBuffer: what the pure checks read. */
function buf(dtype: DType, length: number, address = 0x7f00_0000_0000, label = `${dtype}[${length}]`): FftBufferLike {
  return { dtype, length, address, label };
}

describe('fftGeometry: validation', () => {
  it('accepts 1 to 3 positive integer dimensions and a positive batch', () => {
    expect(fftGeometry({ shape: [8], type: 'C2C' }).rank).toBe(1);
    expect(fftGeometry({ shape: [4, 6, 8], type: 'Z2Z', batch: 3 }).batch).toBe(3);
  });
  it.each([
    [{ shape: [], type: 'C2C' }, /1 to 3 dimensions/],
    [{ shape: [2, 2, 2, 2], type: 'C2C' }, /1 to 3 dimensions/],
    [{ shape: [0], type: 'C2C' }, /shape\[0\] must be a positive/],
    [{ shape: [16, 2.5], type: 'C2C' }, /shape\[1\] must be a positive/],
    [{ shape: [16], type: 'C2C', batch: 0 }, /batch must be a positive/],
    [{ shape: [16], type: 'C2C', istride: -1 }, /istride must be a positive/],
    [{ shape: [16], type: 'C2C', odist: 1.5 }, /odist must be a positive/],
    [{ shape: [16, 16], type: 'C2C', inembed: [16] }, /inembed must have one size per dimension \(2\)/],
    [{ shape: [16, 16], type: 'C2C', onembed: [16, 8] }, /onembed\[1\] = 8 is smaller than the 16/],
    [{ shape: [2 ** 31], type: 'C2C' }, /32-bit/],
  ])('rejects %j', (d, message) => {
    expect(() => fftGeometry(d as never)).toThrow(RangeError);
    expect(() => fftGeometry(d as never)).toThrow(message);
  });
  it('rejects unknown types with the list of known ones', () => {
    expect(() => fftGeometry({ shape: [8], type: 'X2Y' as never })).toThrow(
      /one of C2C, Z2Z, R2C, D2Z, C2R, Z2D, got X2Y/,
    );
    expect(() => fftGeometry({ shape: [8], type: 'toString' as never })).toThrow(TypeError);
  });
});

describe('fftGeometry: elements each side touches', () => {
  it('basic layout: contiguous batches', () => {
    const g = fftGeometry({ shape: [4096], type: 'C2C', batch: 8 });
    expect(g.advanced).toBe(false);
    expect([g.inputElements, g.outputElements]).toEqual([4096 * 8, 4096 * 8]);
    expect([g.idist, g.odist]).toEqual([4096, 4096]);
  });
  it('real transforms keep n/2+1 complex elements in the last dimension', () => {
    const r2c = fftGeometry({ shape: [1536], type: 'R2C', batch: 2 });
    expect([r2c.inputElements, r2c.outputElements]).toEqual([3072, 2 * 769]);
    const c2r = fftGeometry({ shape: [64, 48], type: 'C2R' });
    expect([c2r.inputElements, c2r.outputElements]).toEqual([64 * 25, 64 * 48]);
    const odd = fftGeometry({ shape: [1155], type: 'D2Z' });
    expect(odd.outputElements).toBe(578);
  });
  it('in place, real transforms use the padded rows of the basic layout', () => {
    const r2c = fftGeometry({ shape: [64, 48], type: 'R2C', batch: 2 });
    expect(r2c.inPlaceInputElements).toBe(2 * 64 * 2 * 25); // reals, rows padded to 50
    expect(r2c.inPlaceOutputElements).toBe(2 * 64 * 25);
    const z2d = fftGeometry({ shape: [1000], type: 'Z2D' });
    expect([z2d.inPlaceInputElements, z2d.inPlaceOutputElements]).toEqual([501, 1002]);
    const c2c = fftGeometry({ shape: [1000], type: 'C2C' });
    expect([c2c.inPlaceInputElements, c2c.inPlaceOutputElements]).toEqual([1000, 1000]);
  });
  it('interleaved signals: stride = batch, distance = 1', () => {
    const g = fftGeometry({ shape: [256], type: 'Z2Z', batch: 3, istride: 3, idist: 1, ostride: 3, odist: 1 });
    expect(g.advanced).toBe(true);
    expect(g.inembed).toEqual([256]);
    expect(g.inputElements).toBe(2 * 1 + 255 * 3 + 1);
    expect(g.outputElements).toBe(768);
  });
  it('padded rows through the distance; the other side defaults to packed', () => {
    const g = fftGeometry({ shape: [1000], type: 'C2C', batch: 5, idist: 1024 });
    expect(g.inputElements).toBe(4 * 1024 + 1000);
    expect([g.ostride, g.odist, g.outputElements]).toEqual([1, 1000, 5000]);
  });
  it('embeds set the pitch of every dimension but the first', () => {
    const g = fftGeometry({ shape: [64, 48], type: 'C2C', inembed: [70, 50] });
    expect(g.idist).toBe(70 * 50);
    expect(g.inputElements).toBe(63 * 50 + 47 + 1);
    const r2c = fftGeometry({ shape: [8, 6], type: 'R2C', ostride: 2 });
    expect(r2c.onembed).toEqual([8, 4]); // the complex side's own logical shape
    expect(r2c.outputElements).toBe((7 * 4 + 3) * 2 + 1);
  });
  it('default distances are stride × product(embed)', () => {
    const g = fftGeometry({ shape: [10, 10], type: 'Z2Z', batch: 2, istride: 2 });
    expect(g.idist).toBe(200);
    expect(g.inputElements).toBe(200 + 99 * 2 + 1);
  });
});

describe('checkFftBuffers', () => {
  const c2c = fftGeometry({ shape: [512], type: 'C2C' });
  it('passes matching buffers, in place and out of place', () => {
    const a = buf('c64', 512, 0x1000_0000);
    expect(() => checkFftBuffers(c2c, 'forward', a, a)).not.toThrow();
    expect(() => checkFftBuffers(c2c, 'inverse', a, buf('c64', 600, 0x2000_0000))).not.toThrow();
  });
  it('names the element type a plan needs', () => {
    expect(() => checkFftBuffers(c2c, 'forward', buf('c128', 512), buf('c128', 512))).toThrow(
      /input "c128\[512\]" must hold c64, not c128/,
    );
    const d2z = fftGeometry({ shape: [64], type: 'D2Z' });
    expect(() => checkFftBuffers(d2z, 'forward', buf('f32', 64, 0x1000), buf('c128', 33, 0x9000))).toThrow(
      /must hold f64, not f32/,
    );
    expect(() => checkFftBuffers(d2z, 'forward', buf('f64', 64, 0x1000), buf('c64', 33, 0x9000))).toThrow(
      /output .* must hold c128, not c64/,
    );
  });
  it('refuses the direction a real plan does not have', () => {
    const r2c = fftGeometry({ shape: [64], type: 'R2C' });
    expect(() => checkFftBuffers(r2c, 'inverse', buf('c64', 33), buf('f32', 64, 0x9000))).toThrow(
      /R2C plan only transforms forward.*C2R/,
    );
    const z2d = fftGeometry({ shape: [64], type: 'Z2D' });
    expect(() => checkFftBuffers(z2d, 'forward', buf('c128', 33), buf('f64', 64, 0x9000))).toThrow(
      /Z2D plan only transforms inverse.*D2Z/,
    );
  });
  it('asks for an output buffer when a real transform is called in place on one buffer', () => {
    const r2c = fftGeometry({ shape: [64], type: 'R2C' });
    const x = buf('f32', 200);
    expect(() => checkFftBuffers(r2c, 'forward', x, x)).toThrow(/needs an output buffer of c64/);
  });
  it('checks sizes against what the plan reads and writes', () => {
    const g = fftGeometry({ shape: [100], type: 'C2C', batch: 4 });
    expect(() => checkFftBuffers(g, 'forward', buf('c64', 399, 0x1000), buf('c64', 400, 0x100000))).toThrow(
      /holds 399 c64 elements, the plan reads 400/,
    );
    expect(() => checkFftBuffers(g, 'forward', buf('c64', 400, 0x1000), buf('c64', 100, 0x100000))).toThrow(
      /holds 100 c64 elements, the plan writes 400/,
    );
    // in place real: same address, padded rows
    const r2c = fftGeometry({ shape: [64], type: 'R2C' });
    expect(() => checkFftBuffers(r2c, 'forward', buf('f32', 64, 0x1000), buf('c64', 33, 0x1000))).toThrow(
      /reads 66 in place/,
    );
    expect(() => checkFftBuffers(r2c, 'forward', buf('f32', 66, 0x1000), buf('c64', 33, 0x1000))).not.toThrow();
  });
  it('refuses partly overlapping input and output', () => {
    const g = fftGeometry({ shape: [100], type: 'C2C' });
    expect(() => checkFftBuffers(g, 'forward', buf('c64', 100, 0x1000), buf('c64', 100, 0x1000 + 8 * 50))).toThrow(
      /overlap/,
    );
    expect(() =>
      checkFftBuffers(g, 'forward', buf('c64', 100, 0x1000), buf('c64', 100, 0x1000 + 8 * 100)),
    ).not.toThrow();
  });
});

describe('fftPlanKey', () => {
  const base = { shape: [512], type: 'C2C' } as const;
  it('is the same for equal descriptors, whatever the label', () => {
    expect(fftPlanKey(base, 1)).toBe(fftPlanKey({ ...base, label: 'x', batch: 1 }, 1));
  });
  it('differs by shape, type, batch, layout and context, not by stream', () => {
    const k = fftPlanKey(base, 1);
    const others = [
      fftPlanKey({ ...base, shape: [256] }, 1),
      fftPlanKey({ ...base, shape: [512, 1] }, 1),
      fftPlanKey({ ...base, type: 'Z2Z' }, 1),
      fftPlanKey({ ...base, batch: 2 }, 1),
      fftPlanKey({ ...base, istride: 1 }, 1), // advanced layout (no padding rules) is another plan
      fftPlanKey({ ...base, idist: 600 }, 1),
      fftPlanKey(base, 2),
      fftPlanKey(base, 0),
    ];
    expect(new Set([k, ...others]).size).toBe(others.length + 1);
    const someStream = {} as never;
    expect(fftPlanKey({ ...base, stream: someStream }, 1)).toBe(k);
  });
  it('resolves defaults, so spelling them out hits the same plan', () => {
    expect(fftPlanKey({ ...base, batch: 2, istride: 1 }, 1)).toBe(
      fftPlanKey({ ...base, batch: 2, istride: 1, idist: 512, inembed: [512] }, 1),
    );
  });
});
