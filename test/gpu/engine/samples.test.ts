/**
 * JobEngine with 16-bit samples: i16 (scaled), f16 and bf16 data in, f32 or f16/bf16 waves out.
 * Tolerances (docs/16-bit-samples.md):
 * - 16-bit input, f32 results: relative L2 <= 5e-5 against a float64 reference of the quantized
 *   values (the f32 path's tolerance), and <= 1e-6 against the f32 path run on those values.
 * - f16 waves: <= 1e-3 against the reference (f16 keeps 11 significant bits: 2^-11 relative per
 *   sample); bf16: <= 8e-3 (8 bits: 2^-8). Each rounded value is within one unit in the last
 *   place of the f32 path's value rounded on the host.
 * Fresh random inputs each run; `into` arrays are poisoned (NaN bits), so a value the GPU skips fails.
 */
import { describe, expect, it } from 'vitest';
import { bf16Bits, bf16Value, f16Bits, f16Value } from '../../../src/runtime/memory/half.js';
import { getWindow } from '../../../src/signal/window.js';
import { JobEngine, JobValidationError, type JobResult, type JobSpec } from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { BANDS, engineFactory } from './engines.js';
import {
  framedReference,
  hannPeriodic,
  referenceRow,
  relL2,
  rows,
  testSeries,
  type ReferenceRow,
} from './reference.js';

const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;
const engine = engineFactory('test 16-bit');

type In = 'i16' | 'f16' | 'bf16';
type Half = 'f16' | 'bf16';
const decode = (half: Half, bits: ArrayLike<number>): Float64Array =>
  Float64Array.from(Array.from(bits, (b) => (half === 'f16' ? f16Value(b) : bf16Value(b))));
const encode = (half: Half, x: number): number => (half === 'f16' ? f16Bits(x) : bf16Bits(x));

/**
 * Fresh test series (testSeries: noise, trend, DC, a strong cosine at `bin`; |x| < ~7) divided by
 * `shrink`, quantized to `dtype`: the job's data and the values it stands for (times `scale`).
 */
function quantize(
  dtype: In,
  batch: number,
  n: number,
  bin: number,
  scale: number,
  shrink: number,
): { data: Int16Array | Uint16Array; values: Float64Array } {
  const x = testSeries(batch, n, bin, Float64Array).map((v) => v / shrink);
  const values = new Float64Array(x.length);
  if (dtype === 'i16') {
    const data = new Int16Array(x.length);
    for (let i = 0; i < x.length; i++) {
      data[i] = Math.max(-32768, Math.min(32767, Math.round(x[i]! / scale)));
      values[i] = data[i]! * scale;
    }
    return { data, values };
  }
  const data = new Uint16Array(x.length);
  for (let i = 0; i < x.length; i++) {
    data[i] = encode(dtype, x[i]!);
    values[i] = (dtype === 'f16' ? f16Value(data[i]!) : bf16Value(data[i]!)) * scale;
  }
  return { data, values };
}

function reference(
  values: Float64Array,
  batch: number,
  spec: Pick<JobSpec, 'fs' | 'passBand' | 'previewBins' | 'bands'>,
): ReferenceRow[] {
  const n = values.length / batch;
  const fs = spec.fs ?? 1;
  return Array.from({ length: batch }, (_, b) =>
    referenceRow(values.subarray(b * n, (b + 1) * n), {
      fs,
      detrend: 'linear',
      window: hannPeriodic(n),
      passBand: spec.passBand ?? [0, fs / 2],
      previewBins: spec.previewBins ?? Math.min(256, Math.floor(n / 2) + 1),
      bands: spec.bands ?? [],
    }),
  );
}

/** filtered, spectrum, bandPowers, bandWaves of `r` (waves decoded when 16-bit) against the reference, row by row. */
function expectNear(
  r: JobResult,
  ref: ReferenceRow[],
  tol: { waves: number; rest: number },
  half: Half | undefined,
  what: string,
): void {
  const n = r.length;
  const wave = (a: ArrayLike<number>): ArrayLike<number> => (half ? decode(half, a) : a);
  const nb = ref[0]!.bandPowers.length;
  const p = ref[0]!.spectrum.length;
  for (let b = 0; b < ref.length; b++) {
    const e = ref[b]!;
    if (r.filtered)
      expect(relL2(rows(wave(r.filtered), n, b, 1), e.filtered), `${what} filtered row ${b}`).toBeLessThan(tol.waves);
    if (r.spectrum)
      expect(relL2(rows(r.spectrum, p, b, 1), e.spectrum), `${what} spectrum row ${b}`).toBeLessThan(tol.rest);
    if (r.bandPowers)
      expect(relL2(rows(r.bandPowers, nb, b, 1), e.bandPowers), `${what} band powers row ${b}`).toBeLessThan(tol.rest);
    if (r.bandWaves)
      expect(relL2(rows(wave(r.bandWaves), nb * n, b, 1), e.bandWaves), `${what} band waves row ${b}`).toBeLessThan(
        tol.waves,
      );
    if (r.dominant) expect(r.dominant[b]!.bin, `${what} dominant bin row ${b}`).toBe(e.dominant.bin);
  }
}

/** Every 16-bit value within one unit in the last place of the f32 value rounded on the host. */
function expectRoundedFrom(bits: Uint16Array, f32: Float32Array | Float64Array, half: Half, what: string): void {
  expect(bits.length).toBe(f32.length);
  let worst = 0;
  for (let i = 0; i < bits.length; i++) worst = Math.max(worst, Math.abs(bits[i]! - encode(half, f32[i]!)));
  expect(worst, `${what}: largest difference in units in the last place`).toBeLessThanOrEqual(1);
}

describe.skipIf(!gpu.available)(`JobEngine with 16-bit samples${skip}`, () => {
  const CASES: readonly { dtype: In; scale?: number }[] = [
    { dtype: 'i16' },
    { dtype: 'i16', scale: 1 / 4096 },
    { dtype: 'f16' },
    { dtype: 'bf16', scale: 0.5 },
  ];

  it('i16/f16/bf16 data: stft + cycles equal the float64 reference of the quantized values and the f32 path on them', async () => {
    const e16 = engine({ lanes: 2 });
    const e32 = engine({ lanes: 1 });
    for (const c of CASES) {
      for (const n of [1000, 777]) {
        const scale = c.scale ?? (c.dtype === 'i16' ? 1 / 32768 : 1);
        // i16 at the default scale is full scale +-1: the series are shrunk to fit.
        const { data, values } = quantize(c.dtype, 3, n, 37, scale, c.dtype === 'i16' && c.scale === undefined ? 8 : 1);
        const common = {
          batch: 3,
          fs: 500,
          flags: ['stft', 'cycles'],
          passBand: [20, 120] as const,
          bands: BANDS,
          previewBins: 64,
        };
        const spec: JobSpec = {
          ...common,
          data,
          ...(c.dtype === 'i16' ? {} : { dtype: c.dtype }),
          ...(c.scale === undefined ? {} : { scale: c.scale }),
        };
        const [r, r32] = await Promise.all([
          e16.submit(spec).result,
          e32.submit({ ...common, data: Float32Array.from(values) }).result,
        ]);
        const what = `${c.dtype} scale ${scale} N=${n}`;
        expect(r.filtered, what).toBeInstanceOf(Float32Array);
        expectNear(r, reference(values, 3, common), { waves: 5e-5, rest: 5e-5 }, undefined, what);
        for (const field of ['filtered', 'spectrum', 'bandPowers', 'bandWaves'] as const)
          expect(relL2(r[field]!, r32[field]!), `${what} ${field} vs f32 path`).toBeLessThan(1e-6);
      }
    }
  });

  it('outputDtype f16/bf16: waves rounded on the GPU, within the documented tolerance, into poisoned arrays', async () => {
    const e = engine({ lanes: 2 });
    const e32 = engine({ lanes: 1 });
    const n = 2048;
    const batch = 2;
    for (const half of ['f16', 'bf16'] as const) {
      const q = quantize('i16', batch, n, 100, 1 / 8192, 2);
      const values = q.values;
      const common = {
        batch,
        fs: 1000,
        flags: ['stft', 'cycles'],
        passBand: [50, 300] as const,
        bands: BANDS,
        previewBins: 100,
      };
      const filtered = new Uint16Array(batch * n).fill(0x7e00);
      const bandWaves = new Uint16Array(batch * BANDS.length * n).fill(0x7e00);
      const r = await e.submit({
        ...common,
        data: q.data,
        scale: 1 / 8192,
        outputDtype: half,
        into: { filtered, bandWaves },
      }).result;
      const r32 = await e32.submit({ ...common, data: Float32Array.from(values) }).result;
      expect(r.filtered).toBe(filtered);
      expect(r.bandWaves).toBe(bandWaves);
      expect(r.spectrum).toBeInstanceOf(Float32Array);
      expectNear(r, reference(values, batch, common), { waves: half === 'f16' ? 1e-3 : 8e-3, rest: 5e-5 }, half, half);
      expectRoundedFrom(filtered, r32.filtered as Float32Array, half, `${half} filtered`);
      expectRoundedFrom(bandWaves, r32.bandWaves as Float32Array, half, `${half} band waves`);
    }
  });

  it('lent pinned arrays: i16 data and f16 results cross without a host copy, 2 bytes per sample each way', async () => {
    const e = engine({ lanes: 1 });
    const batch = 4;
    const n = 4096;
    const q = quantize('i16', batch, n, 300, 1 / 8192, 2);
    const data = e.hostBuffer('i16', batch * n);
    data.set(q.data);
    const filtered = e.hostBuffer('f16', batch * n);
    filtered.fill(0x7e00);
    const previewBins = 32;
    const before = e.stats().bytesMoved;
    const r = await e.submit({
      data,
      batch,
      fs: 1,
      flags: ['stft'],
      scale: 1 / 8192,
      outputDtype: 'f16',
      previewBins,
      into: { filtered },
    }).result;
    expect(r.filtered).toBe(filtered);
    expectNear(r, reference(q.values, batch, { fs: 1, previewBins }), { waves: 1e-3, rest: 5e-5 }, 'f16', 'lent');
    // i16 in (2 B), f16 filtered back (2 B), the f32 preview (4 B per bin).
    expect(e.stats().bytesMoved - before).toBe(batch * n * 2 + batch * n * 2 + batch * previewBins * 4);
    expect(e.releaseHostBuffer(data)).toBe(true);
    expect(e.releaseHostBuffer(filtered)).toBe(true);
  });

  it('framed stft (nperseg) of i16 data with bf16 results matches the float64 scipy reference', async () => {
    const e = engine({ lanes: 1 });
    const n = 3000;
    const batch = 2;
    const q = quantize('i16', batch, n, 200, 1 / 8192, 2);
    const spec = {
      batch,
      fs: 1000,
      flags: ['stft'],
      nperseg: 256,
      noverlap: 192,
      passBand: [100, 300] as const,
      previewBins: 40,
      detrend: false as const,
    };
    const poisonF = new Uint16Array(batch * n).fill(0x7fc0);
    const r = await e.submit({
      ...spec,
      data: q.data,
      scale: 1 / 8192,
      outputDtype: 'bf16',
      into: { filtered: poisonF },
    }).result;
    const r32 = await engine({ lanes: 1 }).submit({ ...spec, data: Float32Array.from(q.values) }).result;
    const w = getWindow('hann', 256);
    for (let b = 0; b < batch; b++) {
      const ref = framedReference(q.values.subarray(b * n, (b + 1) * n), { ...spec, window: w, detrend: false });
      expect(r.frames).toBe(ref.frames);
      expect(
        relL2(rows(decode('bf16', r.filtered!), n, b, 1), ref.filtered),
        `framed bf16 filtered row ${b}`,
      ).toBeLessThan(8e-3);
      expect(relL2(rows(r.spectrum!, 40 * ref.frames, b, 1), ref.spectrum), `framed spectrum row ${b}`).toBeLessThan(
        5e-5,
      );
    }
    expectRoundedFrom(poisonF, r32.filtered as Float32Array, 'bf16', 'framed filtered');
    expect(relL2(r.spectrum!, r32.spectrum!)).toBeLessThan(1e-6);
  });

  it('refuses 16-bit data with the wavelet flag, and a Uint16Array without its dtype, at submit', () => {
    const e = engine({ lanes: 1 });
    expect(() => e.submit({ data: new Int16Array(64).fill(3), flags: ['wavelet'], freqs: [0.1] })).toThrow(
      JobValidationError,
    );
    expect(() => e.submit({ data: new Uint16Array(64).fill(0x3c00), flags: ['stft'] })).toThrow(
      /dtype 'f16' or 'bf16'/,
    );
  });
});
