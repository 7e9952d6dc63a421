/**
 * sosfilt's parallel-in-time path on the GPU (tiles of 1024 samples a warp, a scan of the tiles'
 * states; src/signal/sos-pipeline.ts) against scipy.signal run on this host, on fresh random inputs
 * into NaN-poisoned outputs: one long series through narrow 16-pole band-passes (butter and cheby1
 * over 1M samples, where the float64 error must stay at the level of scipy's own sequential
 * recurrence), thousands of short series, zi in and zf out over long series and lengths around a
 * tile, a cascade of 20 sections (two launches), in place, and sosfiltfilt over long series.
 * Tolerances (relative L2): f32 1e-7 where the filter alone is compared (the arithmetic is float64:
 * only the output rounds), 1e-5 for sosfiltfilt; f64 1e-12.
 */
import { describe, expect, it } from 'vitest';
import type { Precision } from '../../../src/runtime/fft/precision.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import {
  butter,
  cheby1,
  sosfilt,
  sosfiltfilt,
  type FilteredWithState,
  type RealBuffer,
  type Sos,
} from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { asHeld, gpuTestScope, hostValues, randomSeries, relativeL2, scipy, scipyReference } from './scipy.js';

type P = Precision;
const TOL: Record<P, number> = { f32: 1e-7, f64: 1e-12 };
const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';

const upload = (p: P, x: Float64Array): RealBuffer =>
  p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(x)) : DeviceBuffer.from('f64', x);
const poisoned = (p: P, n: number): RealBuffer =>
  p === 'f32'
    ? DeviceBuffer.from('f32', new Float32Array(n).fill(NaN))
    : DeviceBuffer.from('f64', new Float64Array(n).fill(NaN));
/** scipy's zi (sections, batch, 2) as nested lists, from the flat layout the GPU takes. */
const nestedState = (flat: Float64Array, sections: number, batch: number): number[][][] =>
  Array.from({ length: sections }, (_, s) =>
    Array.from({ length: batch }, (_, b) => [flat[(s * batch + b) * 2]!, flat[(s * batch + b) * 2 + 1]!]),
  );
/** scipy.signal.<fn>(sos, x, **kwargs) of x (float64, shape), its tuple element `result` (sosfilt with zi: 0 y, 1 zf). */
const callCase = (id: string, fn: string, sos: Sos, x: Float64Array, shape: number[], kwargs = {}, result = 0) => ({
  id,
  op: 'call' as const,
  input: x,
  shape,
  params: { fn, args: [sos, '$x'], kwargs, result },
});

describe.skipIf(!!skip)(
  `sosfilt in parallel along time vs scipy.signal${skip ? ` (skipped: ${skip})` : ` (scipy ${scipy.version})`}`,
  { timeout: 300_000 },
  () => {
    const { stream, keep } = gpuTestScope('sosfilt scan test', skip);
    const narrow: [string, Sos][] = [
      ['butter(8, [0.1, 0.12])', butter(8, [0.1, 0.12], { btype: 'bandpass' })],
      ['cheby1(8, 1, [0.1, 0.12])', cheby1(8, 1, [0.1, 0.12], { btype: 'bandpass' })],
    ];

    for (const p of ['f32', 'f64'] as const) {
      it(`sosfilt (${p}): one series of 1M samples through narrow 16-pole band-passes`, async () => {
        const n = 1 << 20;
        const x64 = randomSeries(n);
        const x = keep(upload(p, x64));
        const ours = narrow.map(([, sos]) => keep(sosfilt(sos, x, { stream, output: keep(poisoned(p, n)) })));
        await stream!.done();
        const ref = await scipyReference(narrow.map(([id, sos]) => callCase(id, 'sosfilt', sos, asHeld(p, x64), [n])));
        narrow.forEach(([id], i) =>
          expect(relativeL2(hostValues(ours[i]!), ref.get(id)!.values), id).toBeLessThan(TOL[p]),
        );
      });

      it(`sosfilt (${p}): 4096 series of 777 samples, 64 of 5000, 3 of 19 tiles and 5 samples`, async () => {
        const sos = butter(4, [0.1, 0.3], { btype: 'bandpass' });
        const shapes = [
          [4096, 777],
          [64, 5000],
          [3, 19 * 1024 + 5],
        ] as const;
        const inputs = shapes.map(([batch, n]) => randomSeries(batch * n));
        const ours = shapes.map(([batch, n], i) =>
          keep(sosfilt(sos, keep(upload(p, inputs[i]!)), { batch, stream, output: keep(poisoned(p, batch * n)) })),
        );
        await stream!.done();
        const ref = await scipyReference(
          shapes.map(([batch, n], i) => callCase(`${batch}x${n}`, 'sosfilt', sos, asHeld(p, inputs[i]!), [batch, n])),
        );
        shapes.forEach(([batch, n], i) =>
          expect(relativeL2(hostValues(ours[i]!), ref.get(`${batch}x${n}`)!.values), `${batch}x${n}`).toBeLessThan(
            TOL[p],
          ),
        );
      });

      it(`sosfilt (${p}) with zi: y and zf over lengths 1, 2, 1023, 1025 and 300,001; 20 sections; in place`, async () => {
        const batch = 3;
        const cases: { id: string; sos: Sos; n: number; inPlace: boolean }[] = [
          ...[1, 2, 1023, 1025, 300_001].map((n) => ({ id: `zi-${n}`, sos: narrow[1]![1], n, inPlace: false })),
          { id: 'twenty-sections', sos: butter(40, 0.3), n: 50_001, inPlace: false },
          { id: 'in-place', sos: narrow[0]![1], n: 100_000, inPlace: true },
        ];
        const runs = cases.map((c) => {
          const x64 = randomSeries(batch * c.n);
          const zi64 = Float64Array.from({ length: c.sos.length * batch * 2 }, () => Math.random() - 0.5);
          const x = keep(upload(p, x64));
          const zf = keep(poisoned(p, zi64.length));
          const output = c.inPlace ? x : keep(poisoned(p, batch * c.n));
          const r: FilteredWithState = sosfilt(c.sos, x, { batch, stream, zi: keep(upload(p, zi64)), zf, output });
          return { ...c, x64, zi64, r };
        });
        await stream!.done();
        const ref = await scipyReference(
          runs.flatMap((c) =>
            [0, 1].map((result) => {
              const zi = nestedState(asHeld(p, c.zi64), c.sos.length, batch);
              return callCase(`${c.id}-${result}`, 'sosfilt', c.sos, asHeld(p, c.x64), [batch, c.n], { zi }, result);
            }),
          ),
        );
        for (const c of runs) {
          expect(relativeL2(hostValues(c.r.y), ref.get(`${c.id}-0`)!.values), `${c.id} y`).toBeLessThan(TOL[p]);
          expect(relativeL2(hostValues(c.r.zf), ref.get(`${c.id}-1`)!.values), `${c.id} zf`).toBeLessThan(TOL[p]);
        }
      });

      it(`sosfiltfilt (${p}): 2 series of 200,001 samples, a narrow band-pass and a 20-section low-pass`, async () => {
        const batch = 2;
        const n = 200_001;
        const x64 = randomSeries(batch * n);
        const x = keep(upload(p, x64));
        const filters: [string, Sos][] = [narrow[0]!, ['butter(40, 0.3)', butter(40, 0.3)]];
        const ours = filters.map(([, sos]) =>
          keep(sosfiltfilt(sos, x, { batch, stream, output: keep(poisoned(p, batch * n)) })),
        );
        await stream!.done();
        const ref = await scipyReference(
          filters.map(([id, sos]) => callCase(id, 'sosfiltfilt', sos, asHeld(p, x64), [batch, n])),
        );
        filters.forEach(([id], i) =>
          expect(relativeL2(hostValues(ours[i]!), ref.get(id)!.values), id).toBeLessThan(p === 'f32' ? 1e-5 : 1e-11),
        );
      });
    }
  },
);
