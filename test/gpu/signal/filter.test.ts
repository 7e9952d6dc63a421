/**
 * Filtering against scipy.signal run on this host: the CPU designs (butter, cheby1, cheby2 as
 * SOS rows, firwin taps, sosfilt_zi) and the GPU filters (sosfilt with zi chunking, sosfiltfilt,
 * FIR lfilter with zi, FIR filtfilt, hilbert) on fresh random inputs in f32 and f64, into
 * NaN-poisoned outputs, over lengths 1 and 2, odd and even lengths, taps longer than the signal
 * and 7-chunk filtering. Tolerances (relative L2): designs 1e-10 per row (same pairing as scipy,
 * so rows compare one to one); f64 filtering 1e-11; f32 filtering 1e-5 (float64 arithmetic inside,
 * so only the f32 input/output rounding and, across chunks, the f32 state remain).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import {
  butter,
  cheby1,
  cheby2,
  clearSignalCaches,
  FilterCoefficientError,
  filtfilt,
  firwin,
  hilbert,
  lfilter,
  SignalLengthError,
  sosfilt,
  sosfiltfilt,
  sosfiltZi,
  type RealBuffer,
  type Sos,
} from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from './scipy.js';

type P = Precision;
const TOL: Record<P, number> = { f32: 1e-5, f64: 1e-11 };
const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

/** Every buffer a test makes, disposed after it. */
const made: DeviceBuffer<P | 'c64' | 'c128'>[] = [];
function keep<T extends DeviceBuffer<P | 'c64' | 'c128'>>(b: T): T {
  made.push(b);
  return b;
}
const upload = (p: P, x: Float64Array): RealBuffer =>
  keep(p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x)) : DeviceBuffer.from('f64', x));
/** The values the GPU sees, as float64 (f32 inputs rounded): what scipy is given. */
const seen = (p: P, x: Float64Array): Float64Array => (p === 'f32' ? Float64Array.from(Float32Array.from(x)) : x);
function poisoned(dtype: P | 'c64' | 'c128', length: number): DeviceBuffer<P | 'c64' | 'c128'> {
  const n = dtype === 'c64' || dtype === 'c128' ? 2 * length : length;
  return keep(
    DeviceBuffer.from(
      dtype,
      (dtype === 'f32' || dtype === 'c64' ? new Float32Array(n) : new Float64Array(n)).fill(Number.NaN) as never,
    ),
  );
}
function readAll(b: DeviceBuffer<P | 'c64' | 'c128'>): Float64Array {
  const n = b.dtype === 'c64' || b.dtype === 'c128' ? 2 * b.length : b.length;
  const host = b.dtype === 'f32' || b.dtype === 'c64' ? new Float32Array(n) : new Float64Array(n);
  (b as DeviceBuffer<'f32'>).read(host as Float32Array);
  return Float64Array.from(host);
}
const call = (
  id: string,
  fn: string,
  args: unknown[],
  kwargs: Record<string, unknown> = {},
  input?: Float64Array,
  shape: number[] = [],
): ScipyCase => ({
  id,
  op: 'call',
  params: { fn, args, kwargs },
  ...(input ? { input, shape } : { shape }),
});

describe.skipIf(!!skip)(
  `filtering vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 60_000 },
  () => {
    const stream = skip ? undefined : new Stream({ label: 'filter test' });
    afterEach(async () => {
      await stream?.done();
      for (const b of made.splice(0)) if (!b.disposed) b.dispose();
    });
    afterAll(() => {
      if (skip) return;
      clearSignalCaches();
      stream!.dispose();
    });

    it('designs the same SOS rows, taps and steady states as scipy', async () => {
      const designs: { id: string; ours: number[][]; fn: string; args: unknown[]; kwargs: Record<string, unknown> }[] =
        [];
      for (const btype of ['lowpass', 'highpass', 'bandpass', 'bandstop'] as const)
        for (const n of [1, 4, 5]) {
          const wn: number | [number, number] = btype.startsWith('band') ? [40, 120] : 75;
          const kwargs = { btype, fs: 500, output: 'sos' };
          designs.push({
            id: `butter-${btype}-${n}`,
            ours: butter(n, wn, { btype, fs: 500 }),
            fn: 'butter',
            args: [n, wn],
            kwargs,
          });
          designs.push({
            id: `cheby1-${btype}-${n}`,
            ours: cheby1(n, 0.8, wn, { btype, fs: 500 }),
            fn: 'cheby1',
            args: [n, 0.8, wn],
            kwargs,
          });
          designs.push({
            id: `cheby2-${btype}-${n}`,
            ours: cheby2(n, 45, wn, { btype, fs: 500 }),
            fn: 'cheby2',
            args: [n, 45, wn],
            kwargs,
          });
        }
      const firs = [
        { id: 'firwin-lp', ours: firwin(31, 0.3), args: [31, 0.3], kwargs: {} },
        {
          id: 'firwin-hp',
          ours: firwin(33, 100, { passZero: false, fs: 1000 }),
          args: [33, 100],
          kwargs: { pass_zero: false, fs: 1000 },
        },
        {
          id: 'firwin-bp',
          ours: firwin(40, [0.2, 0.5], { passZero: false, window: 'hann' }),
          args: [40, [0.2, 0.5]],
          kwargs: { pass_zero: false, window: 'hann' },
        },
        {
          id: 'firwin-kaiser',
          ours: firwin(51, [0.1, 0.3, 0.6], { width: 0.05, scale: false }),
          args: [51, [0.1, 0.3, 0.6]],
          kwargs: { width: 0.05, scale: false },
        },
      ];
      const ziOf = designs.slice(0, 12).map((d) => ({ id: `zi-${d.id}`, ours: sosfiltZi(d.ours), sos: d.ours }));
      const ref = await scipyReference([
        ...designs.map((d) => call(d.id, d.fn, d.args, d.kwargs)),
        ...firs.map((f) => call(f.id, 'firwin', f.args, f.kwargs)),
        ...ziOf.map((z) => call(z.id, 'sosfilt_zi', [z.sos])),
      ]);
      for (const d of [...designs, ...ziOf]) {
        const theirs = ref.get(d.id)!;
        expect(theirs.shape, d.id).toEqual([d.ours.length, d.ours[0]!.length]);
        d.ours.forEach((row, r) =>
          expect(
            relativeL2(row, theirs.values.subarray(r * row.length, (r + 1) * row.length)),
            `${d.id} row ${r}`,
          ).toBeLessThan(1e-10),
        );
      }
      for (const f of firs) expect(relativeL2(f.ours, ref.get(f.id)!.values), f.id).toBeLessThan(1e-12);
    });

    const sos: Sos = butter(4, [0.1, 0.3], { btype: 'bandpass' }); // 8th order, 4 sections
    const batch = 3;

    for (const p of ['f32', 'f64'] as const) {
      it(`sosfilt, sosfiltfilt (${p}): lengths 1, 2, odd and even; every padtype`, async () => {
        const cases: ScipyCase[] = [];
        const ours = new Map<string, DeviceBuffer<P | 'c64' | 'c128'>>();
        for (const n of [1, 2, 101, 1000, 20_001]) {
          const x64 = randomSeries(batch * n);
          const x = upload(p, x64);
          const y = poisoned(p, batch * n) as RealBuffer;
          ours.set(`sosfilt-${n}`, keep(sosfilt(sos, x, { batch, stream, output: y })));
          cases.push(call(`sosfilt-${n}`, 'sosfilt', [sos, '$x'], {}, seen(p, x64), [batch, n]));
          if (n > 27)
            for (const padtype of ['odd', 'even', 'constant', null] as const) {
              const id = `sosfiltfilt-${n}-${padtype}`;
              ours.set(
                id,
                keep(sosfiltfilt(sos, x, { batch, stream, padtype, output: poisoned(p, batch * n) as RealBuffer })),
              );
              cases.push(call(id, 'sosfiltfilt', [sos, '$x'], { padtype }, seen(p, x64), [batch, n]));
            }
          if (n === 101) {
            ours.set('sosfiltfilt-padlen', keep(sosfiltfilt(sos, x, { batch, stream, padlen: 7 })));
            cases.push(call('sosfiltfilt-padlen', 'sosfiltfilt', [sos, '$x'], { padlen: 7 }, seen(p, x64), [batch, n]));
          }
        }
        await stream!.done();
        const ref = await scipyReference(cases);
        for (const [id, buffer] of ours)
          expect(relativeL2(readAll(buffer), ref.get(id)!.values), id).toBeLessThan(TOL[p]);
      });

      // The long case runs the parallel-in-time path (series of >= MIN_SCAN_LENGTH = 2,048 samples, sos.cu)
      // for the whole signal and for four of its chunks; the others run sequentially.
      for (const cuts of [
        [0, 1, 2, 50, 51, 300, 555, 700],
        [0, 1, 9000, 9001, 20_000, 25_000, 28_000, 30_000],
      ])
        it(`sosfilt (${p}): 7 chunks of ${cuts.at(-1)} samples through zi/zf equal one call and scipy's zi`, async () => {
          const n = cuts.at(-1)!;
          const x64 = randomSeries(batch * n);
          const zi64 = Float64Array.from({ length: sos.length * batch * 2 }, () => Math.random() - 0.5);
          const whole = sosfilt(sos, upload(p, x64), { batch, stream, zi: upload(p, zi64) });
          keep(whole.y);
          keep(whole.zf);
          let state = upload(p, zi64);
          const parts: Float64Array[] = [];
          for (let c = 0; c + 1 < cuts.length; c++) {
            const len = cuts[c + 1]! - cuts[c]!;
            const chunk = new Float64Array(batch * len);
            for (let b = 0; b < batch; b++) chunk.set(x64.subarray(b * n + cuts[c]!, b * n + cuts[c + 1]!), b * len);
            const r = sosfilt(sos, upload(p, chunk), { batch, stream, zi: state, zf: state }); // the state carried in place
            await stream!.done();
            parts.push(readAll(keep(r.y)));
            state = r.zf;
          }
          await stream!.done();
          const y = readAll(whole.y);
          const joined = new Float64Array(batch * n);
          for (let b = 0; b < batch; b++) {
            let t = 0;
            parts.forEach((part, c) => {
              const len = cuts[c + 1]! - cuts[c]!;
              joined.set(part.subarray(b * len, (b + 1) * len), b * n + t);
              t += len;
            });
          }
          expect(relativeL2(joined, y)).toBeLessThan(TOL[p]);
          expect(relativeL2(readAll(state), readAll(whole.zf))).toBeLessThan(TOL[p]);
          const zi3 = Array.from({ length: sos.length }, (_, s) =>
            Array.from({ length: batch }, (_, b) => [
              seen(p, zi64)[(s * batch + b) * 2]!,
              seen(p, zi64)[(s * batch + b) * 2 + 1]!,
            ]),
          );
          const ref = await scipyReference([call('zi', 'sosfilt', [sos, '$x'], { zi: zi3 }, seen(p, x64), [batch, n])]);
          expect(relativeL2(y, ref.get('zi')!.values)).toBeLessThan(TOL[p]);
        });

      it(`lfilter and filtfilt with FIR taps (${p}): taps longer than the signal, zi, every padtype`, async () => {
        const taps = firwin(31, [0.15, 0.35], { passZero: false });
        const cases: ScipyCase[] = [];
        const ours = new Map<string, DeviceBuffer<P | 'c64' | 'c128'>>();
        for (const n of [1, 2, 30, 501]) {
          const x64 = randomSeries(batch * n);
          const x = upload(p, x64);
          ours.set(
            `lfilter-${n}`,
            keep(lfilter(taps, 1, x, { batch, stream, output: poisoned(p, batch * n) as RealBuffer })),
          );
          cases.push(call(`lfilter-${n}`, 'lfilter', [Array.from(taps), [1], '$x'], {}, seen(p, x64), [batch, n]));
          const zi64 = Float64Array.from({ length: batch * 30 }, () => Math.random() - 0.5);
          const r = lfilter(taps, [2], x, { batch, stream, zi: upload(p, zi64) });
          keep(r.zf);
          ours.set(`lfilter-zi-${n}`, keep(r.y));
          const zi2 = Array.from({ length: batch }, (_, b) => Array.from(seen(p, zi64).subarray(b * 30, (b + 1) * 30)));
          cases.push(
            call(`lfilter-zi-${n}`, 'lfilter', [Array.from(taps), [2], '$x'], { zi: zi2 }, seen(p, x64), [batch, n]),
          );
          if (n > 93)
            for (const padtype of ['odd', 'even', 'constant', null] as const) {
              const id = `filtfilt-${n}-${padtype}`;
              ours.set(
                id,
                keep(filtfilt(taps, 1, x, { batch, stream, padtype, output: poisoned(p, batch * n) as RealBuffer })),
              );
              cases.push(call(id, 'filtfilt', [Array.from(taps), [1], '$x'], { padtype }, seen(p, x64), [batch, n]));
            }
        }
        await stream!.done();
        const ref = await scipyReference(cases);
        for (const [id, buffer] of ours)
          expect(relativeL2(readAll(buffer), ref.get(id)!.values), id).toBeLessThan(TOL[p]);
      });

      it(`hilbert (${p}): lengths 1, 2, 3, odd and even, N shorter and longer than the series`, async () => {
        const cases: ScipyCase[] = [];
        const ours = new Map<string, DeviceBuffer<P | 'c64' | 'c128'>>();
        for (const [n, N] of [
          [1, undefined],
          [2, undefined],
          [3, undefined],
          [64, undefined],
          [101, undefined],
          [100, 77],
          [100, 128],
          [5, 1],
        ] as const) {
          const x64 = randomSeries(batch * n);
          const id = `hilbert-${n}-${N ?? 'n'}`;
          const out = poisoned(p === 'f32' ? 'c64' : 'c128', batch * (N ?? n));
          ours.set(id, keep(hilbert(upload(p, x64), { batch, stream, N, output: out as DeviceBuffer<'c64'> })));
          cases.push(call(id, 'hilbert', ['$x'], N === undefined ? {} : { N }, seen(p, x64), [batch, n]));
        }
        await stream!.done();
        const ref = await scipyReference(cases);
        for (const [id, buffer] of ours)
          expect(relativeL2(readAll(buffer), ref.get(id)!.values), id).toBeLessThan(p === 'f32' ? 1e-5 : 1e-12);
      });
    }

    it('refuses bad input with a named error before any GPU work', () => {
      const x = keep(DeviceBuffer.from('f32', new Float32Array(20).fill(1)));
      const out = poisoned('f32', 20) as RealBuffer;
      expect(() => sosfiltfilt(sos, x, { output: out })).toThrow(SignalLengthError); // 20 <= padlen 27
      expect(() => filtfilt(firwin(11, 0.3), 1, x, { output: out })).toThrow(SignalLengthError); // 20 <= 33
      expect(() => sosfilt([[1, 0, Number.NaN, 1, 0, 0]], x, { output: out })).toThrow(FilterCoefficientError);
      expect(() => sosfilt([[1, 0, 0, 2, 0, 0]], x, { output: out })).toThrow(/should be all ones/);
      expect(() => sosfiltfilt([[1, 0, 0, 1, -1, 0]], x, { output: out, padlen: 3 })).toThrow(/pole at z = 1/);
      expect(() => lfilter([], 1, x, { output: out })).toThrow(/empty/);
      expect(() => lfilter([1, 2], [1, 0.5], x, { output: out })).toThrow(/only FIR filters/);
      expect(() => sosfilt(sos, x, { batch: 3 })).toThrow(/does not split into 3 series/);
      expect(Number.isNaN(readAll(out)[0]!)).toBe(true); // nothing was written
    });
  },
);
