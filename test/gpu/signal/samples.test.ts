/**
 * 16-bit samples in the signal layer: i16 (scaled), f16 and bf16 device buffers read by the first
 * kernel (detrend/window, framing) give what the f32 path gives on the same values (every 16-bit
 * value times its scale is exact in float32, and both paths convert to double as they load: the
 * results agree to float32 rounding, relative L2 <= 1e-6), and stft matches an independent float64
 * DFT of the quantized values (relative L2 <= 1e-5, the f32 path's tolerance). narrow() rounds like
 * the host encoders (round to nearest even), bit for bit from f32. Fresh random inputs each run;
 * outputs written into NaN-poisoned buffers.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { bf16Bits, bf16Value, f16Bits, f16Value } from '../../../src/runtime/memory/half.js';
import { Stream } from '../../../src/runtime/stream.js';
import {
  clearSignalCaches,
  detrendWindow,
  getWindow,
  narrow,
  spectrogram,
  stft,
  welch,
  type SampleDType,
} from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';

const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;

/** Fresh random series (a trend, DC, a cosine, noise) quantized to `dtype`: the bits and the values they stand for (times `scale`). */
function quantized(
  dtype: SampleDType,
  n: number,
  scale: number,
): { bits: Int16Array | Uint16Array; values: Float64Array } {
  const values = new Float64Array(n);
  const bits = dtype === 'i16' ? new Int16Array(n) : new Uint16Array(n);
  const phase = Math.random() * 2 * Math.PI;
  const dc = Math.random() - 0.5;
  for (let t = 0; t < n; t++) {
    const x = dc + (0.3 * t) / n + 0.5 * Math.cos((2 * Math.PI * 17 * t) / n + phase) + 0.2 * (Math.random() * 2 - 1);
    if (dtype === 'i16') {
      const q = Math.max(-32768, Math.min(32767, Math.round(x / scale)));
      bits[t] = q;
      values[t] = q * scale;
    } else if (dtype === 'f16') {
      bits[t] = f16Bits(x);
      values[t] = f16Value(bits[t]!) * scale;
    } else {
      bits[t] = bf16Bits(x);
      values[t] = bf16Value(bits[t]!) * scale;
    }
  }
  return { bits, values };
}

function upload16(
  dtype: SampleDType,
  bits: Int16Array | Uint16Array,
): DeviceBuffer<'i16'> | DeviceBuffer<'f16'> | DeviceBuffer<'bf16'> {
  if (dtype === 'i16') return DeviceBuffer.from('i16', bits as Int16Array);
  return dtype === 'f16'
    ? DeviceBuffer.from('f16', bits as Uint16Array)
    : DeviceBuffer.from('bf16', bits as Uint16Array);
}

function poisoned<T extends 'f32' | 'c64'>(dtype: T, length: number): DeviceBuffer<T> {
  const b = DeviceBuffer.alloc(dtype, length);
  b.write(new Float32Array(length * (dtype === 'c64' ? 2 : 1)).fill(Number.NaN) as never);
  return b;
}

function relL2(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    const d = a[i]! - b[i]!;
    if (Number.isNaN(d)) return Infinity;
    num += d * d;
    den += b[i]! ** 2;
  }
  return Math.sqrt(num / Math.max(den, 1e-300));
}

/** scipy.signal.stft(x, window='hann', nperseg, noverlap, detrend=False, boundary='zeros', padded=True, scaling='spectrum') by direct float64 DFT: [freq][frame] interleaved re/im. */
function stftReference(x: Float64Array, nperseg: number, noverlap: number): { Zxx: Float64Array; frames: number } {
  const step = nperseg - noverlap;
  const ext = Math.floor(nperseg / 2);
  const extended = x.length + 2 * ext;
  const mod = (a: number, m: number): number => ((a % m) + m) % m;
  const padded = extended + mod(mod(-(extended - nperseg), step), nperseg);
  const xp = new Float64Array(padded);
  xp.set(x, ext);
  const frames = Math.floor((padded - noverlap) / step);
  const w = getWindow('hann', nperseg);
  const wsum = w.reduce((a, b) => a + b, 0);
  const freqs = Math.floor(nperseg / 2) + 1;
  const Z = new Float64Array(2 * freqs * frames);
  for (let f = 0; f < frames; f++)
    for (let k = 0; k < freqs; k++) {
      let re = 0;
      let im = 0;
      for (let j = 0; j < nperseg; j++) {
        const v = xp[f * step + j]! * w[j]!;
        const a = (-2 * Math.PI * ((j * k) % nperseg)) / nperseg;
        re += v * Math.cos(a);
        im += v * Math.sin(a);
      }
      Z[2 * (k * frames + f)] = re / wsum;
      Z[2 * (k * frames + f) + 1] = im / wsum;
    }
  return { Zxx: Z, frames };
}

const CASES: readonly { dtype: SampleDType; scale: number | undefined }[] = [
  { dtype: 'i16', scale: undefined },
  { dtype: 'i16', scale: 1 / 8000 },
  { dtype: 'f16', scale: undefined },
  { dtype: 'bf16', scale: 0.25 },
];
const effectiveScale = (c: { dtype: SampleDType; scale: number | undefined }): number =>
  c.scale ?? (c.dtype === 'i16' ? 1 / 32768 : 1);
const scaleOption = (c: { scale: number | undefined }): { scale?: number } =>
  c.scale === undefined ? {} : { scale: c.scale };

describe.skipIf(!gpu.available)(`16-bit samples in the signal layer${skip}`, () => {
  afterAll(() => clearSignalCaches());

  it('detrendWindow reads i16/f16/bf16 as the f32 path reads their values (linear, constant, none)', async () => {
    const batch = 3;
    const n = 5000;
    for (const c of CASES) {
      const q = quantized(c.dtype, batch * n, c.dtype === 'i16' ? effectiveScale(c) : 1);
      // f16/bf16 bits hold the unscaled values; the kernel multiplies by the scale.
      const values = c.dtype === 'i16' ? q.values : q.values.map((v) => v * effectiveScale(c));
      using s = new Stream({ label: 'samples detrendWindow' });
      using x16 = upload16(c.dtype, q.bits);
      using x32 = DeviceBuffer.from('f32', Float32Array.from(values));
      for (const detrend of ['linear', 'constant', false] as const) {
        using a = poisoned('f32', batch * n);
        using b = poisoned('f32', batch * n);
        detrendWindow(x16, a, { batch, length: n, detrend, window: 'hann', stream: s, ...scaleOption(c) });
        detrendWindow(x32, b, { batch, length: n, detrend, window: 'hann', stream: s });
        await s.done();
        expect(relL2(a.read(), b.read()), `${c.dtype} scale ${c.scale} detrend ${String(detrend)}`).toBeLessThan(1e-6);
      }
    }
  });

  it('stft of 16-bit samples equals a float64 DFT of the quantized values; spectrogram and welch equal the f32 path', async () => {
    const n = 700;
    const nperseg = 64;
    const noverlap = 48;
    for (const c of CASES) {
      const q = quantized(c.dtype, n, c.dtype === 'i16' ? effectiveScale(c) : 1);
      const values = c.dtype === 'i16' ? q.values : q.values.map((v) => v * effectiveScale(c));
      using s = new Stream({ label: 'samples stft' });
      using x16 = upload16(c.dtype, q.bits);
      using x32 = DeviceBuffer.from('f32', Float32Array.from(values));
      const ref = stftReference(values, nperseg, noverlap);
      using Z = poisoned('c64', ref.Zxx.length / 2);
      const r = stft(x16, { nperseg, noverlap, stream: s, output: Z, ...scaleOption(c) });
      expect(r.geometry.frames).toBe(ref.frames);
      const S16 = spectrogram(x16, { nperseg, stream: s, ...scaleOption(c) });
      const S32 = spectrogram(x32, { nperseg, stream: s });
      const W16 = welch(x16, { nperseg, average: 'median', stream: s, ...scaleOption(c) });
      const W32 = welch(x32, { nperseg, average: 'median', stream: s });
      await s.done();
      expect(relL2(Z.read(), ref.Zxx), `${c.dtype} stft vs float64 DFT`).toBeLessThan(1e-5);
      expect(relL2(S16.Sxx.read(), S32.Sxx.read()), `${c.dtype} spectrogram`).toBeLessThan(1e-6);
      expect(relL2(W16.Pxx.read(), W32.Pxx.read()), `${c.dtype} welch`).toBeLessThan(1e-6);
      for (const b of [S16.Sxx, S32.Sxx, W16.Pxx, W32.Pxx]) b.dispose();
    }
  });

  it('16-bit input may run in f64, and refuses a scale or precision that f32/f64 input cannot honour', async () => {
    const q = quantized('i16', 512, 1 / 32768);
    using s = new Stream({ label: 'samples f64' });
    using x16 = DeviceBuffer.from('i16', q.bits as Int16Array);
    using x64 = DeviceBuffer.from('f64', q.values);
    const a = stft(x16, { nperseg: 32, precision: 'f64', stream: s });
    const b = stft(x64, { nperseg: 32, stream: s });
    await s.done();
    expect(a.Zxx.dtype).toBe('c128');
    expect(relL2(a.Zxx.read(), b.Zxx.read())).toBeLessThan(1e-14);
    a.Zxx.dispose();
    b.Zxx.dispose();
    expect(() => stft(x64, { nperseg: 32, scale: 2 })).toThrow(/stft scale applies to 16-bit and I\/Q input only/);
    expect(() => stft(x64, { nperseg: 32, precision: 'f32' })).toThrow(
      /stft precision "f32" differs from the input's f64/,
    );
    expect(() => stft(x16, { nperseg: 32, scale: 0 })).toThrow(/stft scale must be a finite non-zero number, got 0/);
  });

  it('narrow rounds f32 to f16 and bf16 as the host encoders do (nearest even, overflow to infinity), bit for bit', async () => {
    const n = 100_000;
    const x = new Float32Array(n);
    // Magnitudes across the f16 range (subnormals to beyond 65504) and the bf16 range, both signs, and exact ties.
    for (let i = 0; i < n; i++)
      x[i] = (Math.random() < 0.5 ? -1 : 1) * 2 ** (Math.random() * 46 - 28) * (1 + Math.random());
    x.set([
      0,
      -0,
      65504,
      65519.99,
      65520,
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
      2 ** -24,
      2 ** -25,
      3 * 2 ** -25,
      1e30,
      -1e30,
      1 + 2 ** -8,
      1 + 3 * 2 ** -8,
    ]);
    using s = new Stream({ label: 'narrow' });
    using src = DeviceBuffer.from('f32', x);
    using h = DeviceBuffer.alloc('f16', n);
    using b = DeviceBuffer.alloc('bf16', n);
    h.write(new Uint16Array(n).fill(0x7e00));
    b.write(new Uint16Array(n).fill(0x7fc0));
    narrow(src, h, { stream: s });
    narrow(src, b, { stream: s });
    await s.done();
    const hb = h.read(new Uint16Array(n));
    const bb = b.read(new Uint16Array(n));
    let hBad = 0;
    let bBad = 0;
    for (let i = 0; i < n; i++) {
      if (hb[i] !== f16Bits(x[i]!)) hBad++;
      if (bb[i] !== bf16Bits(x[i]!)) bBad++;
    }
    expect(hBad, 'f16 values differing from the host encoder').toBe(0);
    expect(bBad, 'bf16 values differing from the host encoder').toBe(0);
    using wrong = DeviceBuffer.alloc('f32', 4);
    expect(() => narrow(src, wrong as never)).toThrow(/narrow output must be an f16 or bf16 DeviceBuffer, not f32/);
  });

  it('narrow from f64 stays within one unit in the last place of the host encoder', async () => {
    const n = 20_000;
    const x = Float64Array.from({ length: n }, () => (Math.random() * 2 - 1) * 2 ** (Math.random() * 20 - 10));
    using s = new Stream({ label: 'narrow f64' });
    using src = DeviceBuffer.from('f64', x);
    using h = DeviceBuffer.alloc('f16', n);
    using b = DeviceBuffer.alloc('bf16', n);
    narrow(src, h, { stream: s });
    narrow(src, b, { stream: s });
    await s.done();
    const hb = h.read(new Uint16Array(n));
    const bb = b.read(new Uint16Array(n));
    for (let i = 0; i < n; i++) {
      expect(Math.abs(hb[i]! - f16Bits(x[i]!)), `f16 of ${x[i]}`).toBeLessThanOrEqual(1);
      expect(Math.abs(bb[i]! - bf16Bits(x[i]!)), `bf16 of ${x[i]}`).toBeLessThanOrEqual(1);
    }
  });
});
