/**
 * sosfilt's parallel-in-time path (src/kernels/sos.cu) at the sizes it is for, against the float64
 * recurrence on the host (test/unit/signal/emulation/sos-reference.ts, from the definition): the
 * bench's shape (16 series of 2^20 float32 samples through butter(8, [0.1, 0.25]) band-pass), the
 * narrow band-pass butter(8, [0.1, 0.102]) over 2^20 float64 samples with zi (poles near the unit
 * circle: what a float32 scan once failed), zi and zf carried in place through 7 pieces that cross
 * tile boundaries, y written over x. Fresh random inputs (never zero), NaN-poisoned outputs.
 * Tolerances: max |error| / max |y|, f64 1e-11 (docs/signal.md), f32 2e-6 (the f32 output's rounding;
 * the arithmetic is float64).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { butter, clearSignalCaches, sosfilt, type RealBuffer } from '../../../src/signal/index.js';
import { MIN_SCAN_LENGTH, SCAN_CHUNK, SCAN_THREADS, usesScan } from '../../../src/signal/sos-scan.js';
import { sosStateReference } from '../../unit/signal/emulation/sos-reference.js';
import { gpu } from '../gpu-available.js';

type P = Precision;
const TOL: Record<P, number> = { f32: 2e-6, f64: 1e-11 };
const TILE = SCAN_CHUNK * SCAN_THREADS;

const made: DeviceBuffer<P>[] = [];
function keep<T extends DeviceBuffer<P>>(b: T): T {
  made.push(b);
  return b;
}
const upload = (p: P, x: Float64Array): RealBuffer =>
  keep(p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x)) : DeviceBuffer.from('f64', x));
/** The values the GPU holds, as float64 (f32 rounded): what the reference is given. */
const seen = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);
const poisoned = (p: P, n: number): RealBuffer => upload(p, new Float64Array(n).fill(Number.NaN));
function readAll(b: DeviceBuffer<P>): Float64Array {
  const host = b.dtype === 'f32' ? new Float32Array(b.length) : new Float64Array(b.length);
  (b as DeviceBuffer<'f32'>).read(host as Float32Array);
  return Float64Array.from(host);
}
/** Uniform in [-0.7, 1.3): never zero, with a mean. */
const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() * 2 - 0.7);

/** max |a − b| / max |b|. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return Number.isNaN(num) ? Infinity : num / (den || 1);
}

const skip = gpu.available ? '' : gpu.reason;

describe.skipIf(!!skip)(
  `sosfilt in parallel along time${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 120_000 },
  () => {
    const stream = skip ? undefined : new Stream({ label: 'sos scan test' });
    afterEach(async () => {
      await stream?.done();
      for (const b of made.splice(0)) if (!b.disposed) b.dispose();
    });
    afterAll(() => {
      if (skip) return;
      clearSignalCaches();
      stream!.dispose();
    });

    it("the bench's shape: 16 × 2^20 f32 through butter(8, [0.1, 0.25]) band-pass", async () => {
      const sos = butter(8, [0.1, 0.25], { btype: 'bandpass' });
      const [batch, n] = [16, 1 << 20];
      expect(usesScan(n, sos.length)).toBe(true);
      const x64 = random(batch * n);
      const y = poisoned('f32', batch * n);
      sosfilt(sos, upload('f32', x64), { batch, stream, output: y });
      await stream!.done();
      expect(relErr(readAll(y), sosStateReference(sos, seen('f32', x64), batch).y)).toBeLessThan(TOL.f32);
    });

    for (const p of ['f64', 'f32'] as const)
      it(`(${p}) a narrow band-pass (butter(8, [0.1, 0.102])) over 2^20 samples with zi, and its zf`, async () => {
        const sos = butter(8, [0.1, 0.102], { btype: 'bandpass' });
        const [batch, n] = [2, 1 << 20];
        const x64 = random(batch * n);
        const zi64 = random(sos.length * batch * 2);
        const r = sosfilt(sos, upload(p, x64), { batch, stream, zi: upload(p, zi64), output: poisoned(p, batch * n) });
        keep(r.zf);
        await stream!.done();
        const ref = sosStateReference(sos, seen(p, x64), batch, seen(p, zi64));
        expect(relErr(readAll(r.y), ref.y), 'y').toBeLessThan(TOL[p]);
        expect(relErr(readAll(r.zf), ref.zf), 'zf').toBeLessThan(TOL[p]);
      });

    for (const p of ['f32', 'f64'] as const)
      it(`(${p}) 7 pieces across tile edges, zi/zf carried in place, y over x, equal one call and the recurrence`, async () => {
        const sos = butter(4, [0.05, 0.3], { btype: 'bandpass' });
        const batch = 3;
        const cuts = [
          0,
          1,
          MIN_SCAN_LENGTH,
          MIN_SCAN_LENGTH + TILE,
          3 * TILE - 1,
          3 * TILE,
          5 * TILE + 17,
          9 * TILE + 5,
        ];
        const n = cuts.at(-1)!;
        const x64 = random(batch * n);
        const zi64 = random(sos.length * batch * 2);
        const whole = sosfilt(sos, upload(p, x64), { batch, stream, zi: upload(p, zi64) });
        keep(whole.y);
        keep(whole.zf);
        const state = upload(p, zi64);
        const joined = new Float64Array(batch * n);
        for (let c = 0; c + 1 < cuts.length; c++) {
          const len = cuts[c + 1]! - cuts[c]!;
          const piece = new Float64Array(batch * len);
          for (let b = 0; b < batch; b++) piece.set(x64.subarray(b * n + cuts[c]!, b * n + cuts[c + 1]!), b * len);
          const x = upload(p, piece);
          sosfilt(sos, x, { batch, stream, zi: state, zf: state, output: x });
          await stream!.done();
          const y = readAll(x);
          for (let b = 0; b < batch; b++) joined.set(y.subarray(b * len, (b + 1) * len), b * n + cuts[c]!);
        }
        await stream!.done();
        const ref = sosStateReference(sos, seen(p, x64), batch, seen(p, zi64));
        expect(relErr(readAll(whole.y), ref.y), 'one call').toBeLessThan(TOL[p]);
        expect(relErr(readAll(whole.zf), ref.zf), 'one call zf').toBeLessThan(TOL[p]);
        expect(relErr(joined, ref.y), 'pieces').toBeLessThan(TOL[p] * 5);
        expect(relErr(readAll(state), ref.zf), 'pieces zf').toBeLessThan(TOL[p] * 5);
      });
  },
);
