/**
 * A long STFT run in pieces of whole frames on the GPU, as the engine's framed jobs and `tscuda
 * stft` run it: each piece is the one geometry restricted to its frames (framesGeometry) over the
 * samples they span of the extended, padded series (frameSpan), handed to stftWithGeometry into a
 * poisoned output. The pieces put together must equal scipy.signal.stft of the whole series, and
 * istftWithGeometry of a piece (istftGeometryOf: its inverse derived, NOLA not checked again) must
 * equal scipy.signal.istft of that piece's Zxx. Fresh random inputs, float32 and float64.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { extendSignal, frameChunks } from '../../../src/cli/commands/stft-plan.js';
import type { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { framesGeometry, spectralGeometry, STFT_DEFAULTS } from '../../../src/signal/geometry.js';
import { istftGeometryOf } from '../../../src/signal/inverse-geometry.js';
import { istftWithGeometry } from '../../../src/signal/istft.js';
import { clearSignalCaches, type ComplexBuffer, type StftOptions } from '../../../src/signal/index.js';
import { stftWithGeometry } from '../../../src/signal/stft.js';
import { randomSeries, relativeL2, scipyReference, type ScipyCase } from './scipy.js';
import {
  TOL,
  istftConditioning,
  poisoned,
  readAll,
  seen,
  skip,
  suiteName,
  upload,
  weighted,
  windowParam,
} from './scipy-compare-fixture.js';

describe.skipIf(!!skip)(suiteName('stft in runs of whole frames (framesGeometry)'), { timeout: 300_000 }, () => {
  afterAll(() => {
    if (!skip) clearSignalCaches();
  });

  const batch = 3;
  const n = 2999;
  const cases: StftOptions[] = [
    { nperseg: 128, noverlap: 96, boundary: 'zeros', padded: true, detrend: 'linear', fs: 50 },
    { nperseg: 127, noverlap: 40, nfft: 200, boundary: 'odd', padded: true, scaling: 'psd', window: 'hamming' },
    { nperseg: 64, noverlap: 17, boundary: null, padded: false, detrend: 'constant', window: ['kaiser', 7] },
    { nperseg: 90, boundary: 'even', padded: false, returnOnesided: false, window: 'blackman', fs: 3 },
  ];

  for (const p of ['f32', 'f64'] as const)
    it(`${p}: the runs stitch to scipy's stft; each run's istftWithGeometry is scipy's istft of it`, async () => {
      using stream = new Stream({ label: `stft-frame-runs-${p}` });
      const x64 = randomSeries(batch * n);
      const x = seen(p, x64);
      const ref: ScipyCase[] = [];
      const got: Float64Array[] = [];
      const inverses: { id: string; x: DeviceBuffer<'f32' | 'f64'>; conditioning: Float64Array }[] = [];
      for (const [c, o] of cases.entries()) {
        const g = spectralGeometry(n, o, STFT_DEFAULTS);
        const scaling = o.scaling ?? 'spectrum';
        const series = Array.from({ length: batch }, (_, b) => extendSignal(x.subarray(b * n, (b + 1) * n), g));
        const stitched = new Float64Array(2 * batch * g.freqs * g.frames).fill(Number.NaN);
        // Runs of 7 frames (the last shorter), each its own device input and poisoned output.
        for (const run of frameChunks(g, 7)) {
          const input = new Float64Array(batch * run.inputLength);
          series.forEach((s, b) =>
            input.set(s.subarray(run.inputStart, run.inputStart + run.inputLength), b * run.inputLength),
          );
          const rg = framesGeometry(g, run.count);
          using xin = upload(p, input);
          const out = poisoned(p === 'f32' ? 'c64' : 'c128', batch * g.freqs * run.count);
          stftWithGeometry(xin, rg, { batch, scaling, stream, output: out as ComplexBuffer });
          const inverse = istftWithGeometry(out as ComplexBuffer, istftGeometryOf(rg, { boundary: false, scaling }), {
            batch,
            stream,
            output: poisoned(p, batch * run.inputLength) as never,
          });
          await stream.done();
          const z = readAll(out);
          for (let b = 0; b < batch; b++)
            for (let f = 0; f < g.freqs; f++)
              for (let t = 0; t < run.count; t++)
                for (const part of [0, 1])
                  stitched[2 * ((b * g.freqs + f) * g.frames + run.start + t) + part] =
                    z[2 * ((b * g.freqs + f) * run.count + t) + part]!;
          const id = `i${c}-${run.start}`;
          // Weighted by the inverse's conditioning (f32 rounding near a vanishing window edge is amplified).
          const conditioning = istftConditioning(o.window, g.nperseg, g.noverlap, run.count, false);
          inverses.push({ id, x: inverse.x as DeviceBuffer<'f32' | 'f64'>, conditioning });
          ref.push({
            id,
            op: 'istft',
            input: z,
            complex: true,
            shape: [batch, g.freqs, run.count],
            params: {
              fs: g.fs,
              window: windowParam(o.window),
              nperseg: g.nperseg,
              noverlap: g.noverlap,
              nfft: g.nfft,
              input_onesided: g.onesided,
              boundary: false,
              scaling,
            },
          });
          out.dispose();
        }
        got.push(stitched);
        ref.push({
          id: `s${c}`,
          op: 'stft',
          input: x,
          shape: [batch, n],
          params: {
            fs: g.fs,
            window: windowParam(o.window),
            nperseg: o.nperseg,
            noverlap: o.noverlap ?? null,
            nfft: o.nfft ?? null,
            detrend: o.detrend ?? false,
            return_onesided: o.returnOnesided ?? true,
            boundary: o.boundary,
            padded: o.padded,
            scaling,
          },
        });
      }
      const want = await scipyReference(ref);
      got.forEach((stitched, c) => {
        expect(stitched.some(Number.isNaN), `case ${c}: every value written by one run`).toBe(false);
        expect(relativeL2(stitched, want.get(`s${c}`)!.values), `stft case ${c}`).toBeLessThanOrEqual(TOL[p]);
      });
      for (const { id, x: inv, conditioning } of inverses) {
        const w = want.get(id)!;
        const values = w.complex ? w.values.filter((_, k) => k % 2 === 0) : w.values;
        const back = readAll(inv);
        expect(back.length, `istft ${id} length`).toBe(batch * conditioning.length);
        expect(
          relativeL2(weighted(back, conditioning), weighted(values, conditioning)),
          `istft ${id}`,
        ).toBeLessThanOrEqual(TOL[p]);
        inv.dispose();
      }
    });
});
