// Filtering inside engine jobs against scipy: each series filtered on the GPU before the FFT
// (sosfilt / lfilter from a zero state, sosfiltfilt / filtfilt with zeroPhase), then the job's
// spectrum and filtered wave (the float64 DFT reference of reference.ts over scipy's filtered
// series), its envelope (abs(scipy.signal.hilbert)) and its decimation (scipy.signal.decimate,
// ftype 'fir', zero phase). Fresh random series, f32 and f64 engines, result arrays poisoned with
// NaN through `into`, jobs split into chunks of a few series.
import { describe, expect, it } from 'vitest';
import type { JobFilter, JobSpec } from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { asHeld, randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from '../signal/scipy.js';
import { engineFactory } from './engines.js';
import { hannPeriodic, referenceRow, rows } from './reference.js';

const reason = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';
const engine = engineFactory('filter-job');

type P = 'f32' | 'f64';
/** Relative L2 bounds: float32 FFTs and samples, float64 throughout. */
const TOLERANCE: Record<P, number> = { f32: 2e-5, f64: 1e-10 };

const call = (
  id: string,
  fn: string,
  args: unknown[],
  kwargs: Record<string, unknown>,
  input?: Float64Array,
  shape?: number[],
): ScipyCase => ({
  id,
  op: 'call',
  params: { fn, args, kwargs },
  ...(input ? { input, shape: shape! } : { shape: [] }),
});

/** `batch` fresh random series of `n` samples, and the same values as the engine holds them at `p`. */
function series(p: P, batch: number, n: number): { data: Float32Array | Float64Array; held: Float64Array } {
  const x = new Float64Array(batch * n);
  for (let b = 0; b < batch; b++) x.set(randomSeries(n), b * n);
  const held = asHeld(p, x);
  return { data: p === 'f32' ? Float32Array.from(held) : Float64Array.from(held), held };
}

/** A NaN-filled array of the engine's precision (a result the engine does not write stays NaN and fails). */
const poisoned = (p: P, length: number): Float32Array | Float64Array =>
  (p === 'f32' ? new Float32Array(length) : new Float64Array(length)).fill(Number.NaN);

/** The magnitude of an interleaved complex array. */
function modulus(z: Float64Array): Float64Array {
  return Float64Array.from({ length: z.length / 2 }, (_, i) => Math.hypot(z[2 * i]!, z[2 * i + 1]!));
}

describe.skipIf(reason !== '')(
  `filtering in engine jobs vs scipy${reason ? ` (skipped: ${reason})` : ''}`,
  { timeout: 180_000 },
  () => {
    for (const p of ['f32', 'f64'] as const)
      it(`${p}: a butter band-pass designed in the job, then stft, envelope and decimate`, async () => {
        const [batch, n, fs, q, previewBins] = [7, 1000, 500, 4, 64];
        const { data, held } = series(p, batch, n);
        const design = await scipyReference([
          call('sos', 'butter', [4, [20, 80]], { btype: 'bandpass', fs, output: 'sos' }),
        ]);
        const sos = Array.from({ length: 4 }, (_, s) =>
          Array.from(design.get('sos')!.values.subarray(6 * s, 6 * s + 6)),
        );
        const filtered = await scipyReference([call('y', 'sosfilt', [sos, '$x'], {}, held, [batch, n])]);
        const y = filtered.get('y')!.values;
        const after = await scipyReference([
          call('analytic', 'hilbert', ['$x'], {}, y, [batch, n]),
          call('decimated', 'decimate', ['$x', q], { ftype: 'fir', zero_phase: true }, y, [batch, n]),
        ]);
        const spec: JobSpec = {
          data,
          batch,
          fs,
          flags: ['stft', 'envelope', 'decimate'],
          q,
          previewBins,
          filter: { btype: 'bandpass', cutoff: [20, 80], order: 4 },
          into: {
            filtered: poisoned(p, batch * n),
            spectrum: poisoned(p, batch * previewBins),
            envelope: poisoned(p, batch * n),
            decimated: poisoned(p, batch * Math.ceil(n / q)),
          },
        };
        // Lane memory for three series per chunk: the job runs in chunks, each series from its own zero state.
        const perRow = Math.ceil((1 << 30) / engine({ precision: p, lanes: 1 }).chunkRows(spec));
        const small = engine({ precision: p, lanes: 1, laneMemoryBytes: Math.max(1 << 16, Math.floor(3.5 * perRow)) });
        expect(small.chunkRows(spec)).toBeGreaterThanOrEqual(2);
        expect(small.chunkRows(spec)).toBeLessThan(batch);
        const result = await small.submit(spec).result;
        const window = hannPeriodic(n);
        for (let b = 0; b < batch; b++) {
          const ref = referenceRow(y.subarray(b * n, (b + 1) * n), {
            fs,
            detrend: 'linear',
            window,
            passBand: [0, fs / 2],
            previewBins,
            bands: [],
          });
          expect(relativeL2(rows(result.spectrum!, previewBins, b, 1), ref.spectrum), `spectrum ${b}`).toBeLessThan(
            TOLERANCE[p],
          );
          expect(relativeL2(rows(result.filtered!, n, b, 1), ref.filtered), `filtered ${b}`).toBeLessThan(TOLERANCE[p]);
        }
        expect(relativeL2(result.envelope!, modulus(after.get('analytic')!.values))).toBeLessThan(TOLERANCE[p]);
        expect(relativeL2(result.decimated!, after.get('decimated')!.values)).toBeLessThan(TOLERANCE[p]);
      });

    for (const p of ['f32', 'f64'] as const)
      it(`${p}: given sections and taps, forward (sosfilt, lfilter) and zero phase (sosfiltfilt, filtfilt)`, async () => {
        const [batch, n, fs] = [3, 600, 200];
        const { data, held } = series(p, batch, n);
        const sos = [
          [0.02, 0.04, 0.02, 1, -1.56, 0.64],
          [1, -2, 1, 1, -1.8, 0.81],
        ];
        const taps = Array.from({ length: 31 }, () => Math.random() - 0.3);
        const filters: { id: string; filter: JobFilter; ref: ScipyCase }[] = [
          { id: 'sosfilt', filter: { sos }, ref: call('sosfilt', 'sosfilt', [sos, '$x'], {}, held, [batch, n]) },
          { id: 'lfilter', filter: { taps }, ref: call('lfilter', 'lfilter', [taps, [1], '$x'], {}, held, [batch, n]) },
          {
            id: 'sosfiltfilt',
            filter: { sos, zeroPhase: true },
            ref: call('sosfiltfilt', 'sosfiltfilt', [sos, '$x'], {}, held, [batch, n]),
          },
          {
            id: 'filtfilt',
            filter: { taps, zeroPhase: true },
            ref: call('filtfilt', 'filtfilt', [taps, [1], '$x'], {}, held, [batch, n]),
          },
        ];
        const refs = await scipyReference(filters.map((f) => f.ref));
        const analytic = await scipyReference(
          filters.map((f) => call(f.id, 'hilbert', ['$x'], {}, refs.get(f.id)!.values, [batch, n])),
        );
        const e = engine({ precision: p });
        for (const { id, filter } of filters) {
          const y = refs.get(id)!.values;
          const result = await e.submit({
            data,
            batch,
            fs,
            flags: ['stft', 'envelope'],
            previewBins: n / 2 + 1,
            filter,
            into: { spectrum: poisoned(p, batch * (n / 2 + 1)), envelope: poisoned(p, batch * n) },
          }).result;
          for (let b = 0; b < batch; b++) {
            const ref = referenceRow(y.subarray(b * n, (b + 1) * n), {
              fs,
              detrend: 'linear',
              window: hannPeriodic(n),
              passBand: [0, fs / 2],
              previewBins: n / 2 + 1,
              bands: [],
            });
            expect(
              relativeL2(rows(result.spectrum!, n / 2 + 1, b, 1), ref.spectrum),
              `${id} spectrum ${b}`,
            ).toBeLessThan(TOLERANCE[p]);
          }
          expect(relativeL2(result.envelope!, modulus(analytic.get(id)!.values)), `${id} envelope`).toBeLessThan(
            TOLERANCE[p],
          );
        }
      });

    it('f32 and f64: long series (the sections scanned along time) through a cheby1 low-pass, envelope alone', async () => {
      const [batch, n, fs] = [2, 20_000, 1000];
      for (const p of ['f32', 'f64'] as const) {
        const { data, held } = series(p, batch, n);
        const design = await scipyReference([
          call('sos', 'cheby1', [6, 0.5, 120], { btype: 'lowpass', fs, output: 'sos' }),
        ]);
        const flat = design.get('sos')!.values;
        const sos = Array.from({ length: flat.length / 6 }, (_, s) => Array.from(flat.subarray(6 * s, 6 * s + 6)));
        const y = (await scipyReference([call('y', 'sosfilt', [sos, '$x'], {}, held, [batch, n])])).get('y')!.values;
        const analytic = (await scipyReference([call('a', 'hilbert', ['$x'], {}, y, [batch, n])])).get('a')!.values;
        const result = await engine({ precision: p }).submit({
          data,
          batch,
          fs,
          flags: ['envelope'],
          filter: { btype: 'lowpass', cutoff: 120, order: 6, design: 'cheby1', rp: 0.5 },
          into: { envelope: poisoned(p, batch * n) },
        }).result;
        expect(result.spectrum).toBeUndefined();
        // A long IIR run accumulates float32 rounding of the samples it reads: a looser bound there.
        expect(relativeL2(result.envelope!, modulus(analytic)), p).toBeLessThan(p === 'f32' ? 1e-4 : 1e-9);
      }
    });
  },
);
