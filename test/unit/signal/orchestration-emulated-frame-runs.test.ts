// A long STFT run in pieces of whole frames, as the engine's framed jobs and `tscuda stft` run it:
// each piece is the one geometry restricted to its frames (framesGeometry) over the samples they
// span of the extended, padded series, handed to stftWithGeometry without framing it again; the
// pieces put together must equal the one-shot stft, and istftWithGeometry of a piece (its inverse
// geometry derived, NOLA not checked again) must equal istft of it. On the CPU (the kernels are
// signal.cu compiled by g++, emulation/); skipped, with the reason, where g++ is missing.
import './emulation/emulate-runtime.js';
import { describe, expect, it } from 'vitest';
import { extendSignal, frameChunks } from '../../../src/cli/commands/stft-plan.js';
import { randomSeries, relativeL2 } from '../../gpu/signal/scipy.js';
import { emulatedKernels } from './emulation/fake-runtime.js';
import { asDevice, host, upload } from './emulation/orchestration-fixture.js';

const { framesGeometry } = await import('../../../src/signal/geometry.js');
const { istftGeometryOf } = await import('../../../src/signal/inverse-geometry.js');
const { stft, stftGeometry, stftWithGeometry } = await import('../../../src/signal/stft.js');
const { istft, istftWithGeometry } = await import('../../../src/signal/istft.js');

const skip = emulatedKernels().reason;

describe.skipIf(!!skip)(
  `stft in runs of frames equals the one-shot stft, emulated on the CPU${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 180_000 },
  () => {
    const batch = 2;
    const n = 211;
    const cases = [
      { nperseg: 32, noverlap: 24, boundary: 'zeros', padded: true, scaling: 'spectrum', detrend: 'linear' },
      { nperseg: 31, noverlap: 9, nfft: 40, boundary: 'odd', padded: true, scaling: 'psd', fs: 7, window: 'hamming' },
      { nperseg: 17, noverlap: 4, boundary: null, padded: false, detrend: 'constant', window: ['tukey', 0.4] },
      { nperseg: 20, boundary: 'even', padded: false, returnOnesided: false, window: 'blackman' },
    ] as const;
    for (const p of ['f32', 'f64'] as const)
      for (const [c, o] of cases.entries())
        it(`${p}, case ${c}: ${JSON.stringify(o)}`, () => {
          const x64 = randomSeries(batch * n);
          const g = stftGeometry(n, o);
          const whole = host(stft(asDevice(upload(p, x64)), { ...o, batch }).Zxx);
          // Each series extended and padded as the geometry says (the host side of `tscuda stft`).
          const series = Array.from({ length: batch }, (_, b) => extendSignal(x64.subarray(b * n, (b + 1) * n), g));
          const freqs = g.freqs;
          const pieces = new Float64Array(whole.length).fill(Number.NaN);
          for (const run of frameChunks(g, 5)) {
            const input = new Float64Array(batch * run.inputLength);
            series.forEach((s, b) =>
              input.set(s.subarray(run.inputStart, run.inputStart + run.inputLength), b * run.inputLength),
            );
            const rg = framesGeometry(g, run.count);
            const scaling = 'scaling' in o ? o.scaling : 'spectrum';
            const zxx = stftWithGeometry(asDevice(upload(p, input)), rg, { batch, scaling }).Zxx;
            const z = host(zxx);
            // Zxx is B x freqs x frames of complex values: the run's frames go to columns [start, start + count).
            for (let b = 0; b < batch; b++)
              for (let f = 0; f < freqs; f++)
                for (let t = 0; t < run.count; t++)
                  for (const part of [0, 1])
                    pieces[2 * ((b * freqs + f) * g.frames + run.start + t) + part] =
                      z[2 * ((b * freqs + f) * run.count + t) + part]!;
            // The piece's inverse from its derived geometry equals istft resolving its own.
            const inverse = istftGeometryOf(rg, { boundary: false, scaling });
            const derived = host(istftWithGeometry(zxx, inverse, { batch }).x);
            const afresh = host(
              istft(zxx, {
                frames: run.count,
                batch,
                fs: rg.fs,
                window: rg.windowSpec,
                nperseg: rg.nperseg,
                noverlap: rg.noverlap,
                nfft: rg.nfft,
                inputOnesided: rg.onesided,
                boundary: false,
                scaling,
              }).x,
            );
            expect(derived).toEqual(afresh);
          }
          expect(pieces.some(Number.isNaN), 'every value of Zxx written by one piece').toBe(false);
          expect(relativeL2(pieces, whole)).toBeLessThanOrEqual(p === 'f32' ? 1e-6 : 1e-13);
        });
  },
);
