/**
 * sosfilt and sosfiltfilt run whole on the CPU: src/signal/iir.ts and sos-pipeline.ts as they are, the
 * device buffers replaced by emulation/fake-runtime.ts and the kernels by filter.cu compiled by g++,
 * its warps' lanes run as fibers that shuffle values as on the GPU. Against float64 references written
 * from the definitions (filter-references.ts): direct form I, transposed form II sample after sample
 * with scipy's zi, filtfilt's recipe. Lengths 1, 2 and odd, one tile, a tile and one sample, full and
 * partial last tiles and groups; zi in and zf out (also carried across calls and in place); a cascade
 * longer than one launch; narrow high-order band-passes over long series, whose error must stay at the
 * level of the sequential recurrence. Skipped, with the reason, where g++ is missing.
 */
import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { emulatedKernels, FakeDeviceBuffer } from './emulation/fake-runtime.js';
import { filtfiltReference, sosfiltSequential, sosReference } from './emulation/filter-references.js';
import { TILE } from '../../../src/signal/sos-scan.js';
import type { Sos } from '../../../src/signal/index.js';

const signal = await import('../../../src/signal/index.js');

type P = 'f32' | 'f64';
type Buf = ReturnType<typeof FakeDeviceBuffer.alloc>;
const emu = emulatedKernels();
/** Relative L2 tolerances: float32 series round their input and output; the arithmetic is float64 in both. */
const TOL: Record<P, number> = { f32: 1e-6, f64: 1e-12 };
// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const upload = (p: P, x: ArrayLike<number>): any => FakeDeviceBuffer.from(p, p === 'f32' ? Float32Array.from(x) : x);
const held = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);
const host = (b: unknown): Float64Array => Float64Array.from((b as Buf).host as ArrayLike<number>);
const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() - 0.4);

/** ‖a − b‖₂ / ‖b‖₂ (Infinity for a NaN: a sample never written keeps the fake buffer's NaN). */
function relL2(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num += (a[i]! - b[i]!) ** 2;
    den += b[i]! ** 2;
  }
  const r = Math.sqrt(num / (den || 1));
  return Number.isNaN(r) ? Infinity : r;
}

/** Series b of `batch` in scipy's state layout (sections, batch, 2), as sections × 2 values. */
const stateOf = (state: ArrayLike<number>, sections: number, batch: number, b: number): Float64Array =>
  Float64Array.from({ length: 2 * sections }, (_, i) => state[(Math.floor(i / 2) * batch + b) * 2 + (i % 2)]!);

/** sosfilt of every series by the sequential recurrence from zi (scipy's layout; zeros without): y and zf in the same layouts. */
function sequential(
  sos: Sos,
  x: Float64Array,
  batch: number,
  zi?: Float64Array,
): { y: Float64Array; zf: Float64Array } {
  const n = x.length / batch;
  const y = new Float64Array(x.length);
  const zf = new Float64Array(sos.length * batch * 2);
  for (let b = 0; b < batch; b++) {
    const r = sosfiltSequential(sos, x.subarray(b * n, (b + 1) * n), zi && stateOf(zi, sos.length, batch, b));
    y.set(r.y, b * n);
    r.zf.forEach((v, i) => (zf[(Math.floor(i / 2) * batch + b) * 2 + (i % 2)] = v));
  }
  return { y, zf };
}

// One tile, a tile and one sample, two full tiles, 3 tiles in one group, 10 tiles in 3 full groups,
// 20 tiles in groups of 5, 5, 5 and 4 with a partial last tile.
const LENGTHS = [1, 2, 7, 33, TILE - 1, TILE, TILE + 1, 2 * TILE, 3001, 10 * TILE, 19 * TILE + 5];

describe.skipIf(!emu.so)(
  `sosfilt and sosfiltfilt, emulated on the CPU${emu.so ? '' : ` (skipped: ${emu.reason})`}`,
  { timeout: 120_000 },
  () => {
    const sos = signal.cheby1(4, 0.5, [0.15, 0.4], { btype: 'bandpass' });
    const batch = 3;

    for (const p of ['f32', 'f64'] as const) {
      it(`sosfilt (${p}) from a zero state: every length against direct form I`, () => {
        for (const n of LENGTHS) {
          const x = random(batch * n);
          const y = host(signal.sosfilt(sos, upload(p, x), { batch }));
          const want = Float64Array.from(
            Array.from({ length: batch }, (_, b) =>
              Array.from(sosReference(sos, held(p, x).subarray(b * n, (b + 1) * n))),
            ).flat(),
          );
          expect(relL2(y, want), `length ${n}`).toBeLessThan(TOL[p]);
        }
      });

      it(`sosfilt (${p}) with zi: y and zf against the sequential recurrence, every length`, () => {
        for (const n of LENGTHS) {
          const x = random(batch * n);
          const zi = random(sos.length * batch * 2);
          const r = signal.sosfilt(sos, upload(p, x), { batch, zi: upload(p, zi) });
          const want = sequential(sos, held(p, x), batch, held(p, zi));
          expect(relL2(host(r.y), want.y), `y, length ${n}`).toBeLessThan(TOL[p]);
          expect(relL2(host(r.zf), want.zf), `zf, length ${n}`).toBeLessThan(TOL[p]);
        }
      });

      it(`sosfilt (${p}): chunks carried through zi/zf in place equal one call; in place on x`, () => {
        const cuts = [0, 1, 3, 1030, 1031, 2100, 5000];
        const n = cuts.at(-1)!;
        const x = random(batch * n);
        const whole = host(signal.sosfilt(sos, upload(p, x), { batch }));
        const state = upload(p, new Float64Array(sos.length * batch * 2));
        const joined = new Float64Array(batch * n);
        for (let c = 0; c + 1 < cuts.length; c++) {
          const len = cuts[c + 1]! - cuts[c]!;
          const chunk = new Float64Array(batch * len);
          for (let b = 0; b < batch; b++) chunk.set(x.subarray(b * n + cuts[c]!, b * n + cuts[c + 1]!), b * len);
          const part = upload(p, chunk);
          signal.sosfilt(sos, part, { batch, zi: state, zf: state, output: part }); // y over x, the state over zi
          for (let b = 0; b < batch; b++) joined.set(host(part).subarray(b * len, (b + 1) * len), b * n + cuts[c]!);
        }
        expect(relL2(joined, whole)).toBeLessThan(TOL[p]);
        expect(relL2(host(state), sequential(sos, held(p, x), batch).zf)).toBeLessThan(TOL[p]);
      });

      it(`sosfilt (${p}): 20 sections run as two launches, zi and zf across both`, () => {
        const long = signal.butter(40, 0.3);
        expect(long.length).toBe(20);
        for (const n of [5, 3 * TILE + 17]) {
          const x = random(batch * n);
          const zi = random(long.length * batch * 2);
          const r = signal.sosfilt(long, upload(p, x), { batch, zi: upload(p, zi) });
          const want = sequential(long, held(p, x), batch, held(p, zi));
          expect(relL2(host(r.y), want.y), `y, length ${n}`).toBeLessThan(TOL[p]);
          expect(relL2(host(r.zf), want.zf), `zf, length ${n}`).toBeLessThan(TOL[p]);
        }
      });

      it(`sosfilt (${p}): narrow 16-pole band-passes over ${1 << 16} samples stay at the sequential recurrence's error`, () => {
        const n = 1 << 16;
        const x = random(n);
        for (const narrow of [
          signal.butter(8, [0.1, 0.12], { btype: 'bandpass' }),
          signal.cheby1(8, 1, [0.1, 0.12], { btype: 'bandpass' }),
        ]) {
          const y = host(signal.sosfilt(narrow, upload(p, x)));
          const input = held(p, x);
          // Two float64 recurrences (direct form I, transposed form II) differ by the rounding itself.
          const floor = relL2(sosfiltSequential(narrow, input).y, sosReference(narrow, input));
          const error = relL2(y, sosReference(narrow, input));
          expect(error).toBeLessThan(p === 'f32' ? 1e-7 : Math.max(10 * floor, 1e-14));
        }
      });

      it(`sosfiltfilt (${p}): every padtype against the recipe, over several tiles`, () => {
        const n = 2500;
        const x = random(batch * n);
        const edge = signal.sosfiltfiltPadlen(sos);
        for (const [padtype, pad] of [
          ['odd', edge],
          ['even', edge],
          ['constant', edge],
          [null, 0],
        ] as const) {
          const y = host(signal.sosfiltfilt(sos, upload(p, x), { batch, padtype }));
          const want = Float64Array.from(
            Array.from({ length: batch }, (_, b) =>
              Array.from(
                filtfiltReference(
                  (v) => sosReference(sos, v),
                  held(p, x).subarray(b * n, (b + 1) * n),
                  pad,
                  padtype ?? 'odd',
                ),
              ),
            ).flat(),
          );
          expect(relL2(y, want), String(padtype)).toBeLessThan(p === 'f32' ? 1e-5 : 1e-9);
        }
      });
    }

    it('butter designs filter as their own recurrence predicts (sanity across families)', () => {
      for (const s of [signal.butter(5, 0.25), signal.cheby2(6, 40, [0.2, 0.5], { btype: 'bandstop' })]) {
        const x = random(4 * TILE + 3);
        expect(relL2(host(signal.sosfilt(s, upload('f64', x))), sosReference(s, x))).toBeLessThan(1e-12);
      }
    });
  },
);
