/**
 * sosfilt run whole on the CPU (device buffers and kernels replaced by emulation/fake-runtime.ts;
 * the kernels are filter.cu and sos.cu compiled by g++, a block's threads real threads): the
 * sequential path just below MIN_SCAN_LENGTH and the parallel one from it, with and without zi, the
 * state carried in place (zf = zi) and y written over x, against the float64 recurrence. Checks
 * iir.ts's launches (argument order, tree size, launch shapes). Skipped, with the reason, where g++
 * is missing.
 */
import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { emulatedKernels, FakeDeviceBuffer } from './emulation/fake-runtime.js';
import { sosStateReference } from './emulation/sos-reference.js';

const signal = await import('../../../src/signal/index.js');
const { MIN_SCAN_LENGTH, SCAN_CHUNK, SCAN_THREADS } = await import('../../../src/signal/sos-scan.js');

type P = 'f32' | 'f64';
type Buf = ReturnType<typeof FakeDeviceBuffer.alloc>;
const TOL: Record<P, number> = { f32: 2e-6, f64: 1e-11 };
const emu = emulatedKernels();
// The fakes stand in for DeviceBuffer: the casts below are the test's, not the library's.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const upload = (p: P, x: Float64Array): any => FakeDeviceBuffer.from(p, p === 'f32' ? Float32Array.from(x) : x);
const held = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);
const host = (b: unknown): Float64Array => Float64Array.from((b as Buf).host as ArrayLike<number>);
const random = (n: number): Float64Array => Float64Array.from({ length: n }, () => Math.random() * 2 - 0.6);

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

describe.skipIf(!emu.so)(
  `sosfilt orchestration, emulated on the CPU${emu.so ? '' : ` (skipped: ${emu.reason})`}`,
  { timeout: 60_000 },
  () => {
    const sos = signal.butter(8, [0.1, 0.25], { btype: 'bandpass' }); // the bench's filter, 8 sections
    const batch = 2;
    for (const p of ['f32', 'f64'] as const)
      it(`(${p}) sequential and parallel lengths, zi carried in place, y over x`, () => {
        for (const n of [MIN_SCAN_LENGTH - 1, MIN_SCAN_LENGTH, SCAN_CHUNK * SCAN_THREADS + 3]) {
          const x64 = random(batch * n);
          const plain = signal.sosfilt(sos, upload(p, x64), { batch });
          expect(relErr(host(plain), sosStateReference(sos, held(p, x64), batch).y), `n ${n}`).toBeLessThan(TOL[p]);
          const zi64 = random(sos.length * batch * 2);
          const ref = sosStateReference(sos, held(p, x64), batch, held(p, zi64));
          const x = upload(p, x64);
          const state = upload(p, zi64);
          const r = signal.sosfilt(sos, x, { batch, zi: state, zf: state, output: x });
          expect(r.y).toBe(x);
          expect(r.zf).toBe(state);
          expect(relErr(host(x), ref.y), `n ${n} zi`).toBeLessThan(TOL[p]);
          expect(relErr(host(state), ref.zf), `n ${n} zf`).toBeLessThan(TOL[p]);
        }
      });
  },
);
