import FFT from 'fft.js';
import { execa } from 'execa';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import wavefile from 'wavefile';
import { afterAll, describe, expect, it } from 'vitest';
import { readSignal } from '../../../src/cli/signal-input.js';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { spectralGeometry, STFT_DEFAULTS } from '../../../src/signal/geometry.js';
import { getWindow } from '../../../src/signal/window.js';
import { stft } from '../../../src/signal/stft.js';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

const FS = 8000;
const N = 32768; // a power of two: fft.js takes the whole signal for the band references
const NPERSEG = 512;
const BANDS: [number, number][] = [
  [300, 600],
  [1000, 1500],
];

function relL2(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num += (a[i]! - b[i]!) ** 2;
    den += b[i]! ** 2;
  }
  return a.length === b.length ? Math.sqrt(num / den) : Infinity;
}

/** scipy.signal.stft's |Zxx| (hann, boundary zeros, padded, scaling spectrum) in float64, frequency-major. */
function referenceMagnitude(x: Float64Array): { values: Float64Array; freqs: number; frames: number } {
  const g = spectralGeometry(x.length, { fs: FS, nperseg: NPERSEG }, STFT_DEFAULTS);
  const w = getWindow('hann', NPERSEG);
  let wsum = 0;
  for (const v of w) wsum += v;
  const ext = new Float64Array(g.extendedLength);
  ext.set(x, g.extension); // zeros before (boundary) and after (boundary + padding)
  const fft = new FFT(NPERSEG);
  const out = fft.createComplexArray() as number[];
  const freqs = NPERSEG / 2 + 1;
  const values = new Float64Array(freqs * g.frames);
  for (let t = 0; t < g.frames; t++) {
    const seg = Array.from({ length: NPERSEG }, (_, i) => ext[t * g.hop + i]! * w[i]!);
    fft.realTransform(out, seg);
    for (let f = 0; f < freqs; f++) values[f * g.frames + t] = Math.hypot(out[2 * f]!, out[2 * f + 1]!) / wsum;
  }
  return { values, freqs, frames: g.frames };
}

/** Whole-signal FFT references: one-sided Parseval band power and the FFT-mask band-passed wave. */
function bandReferences(x: Float64Array, band: [number, number]): { power: number; wave: Float64Array } {
  const n = x.length;
  const fft = new FFT(n);
  const spec = fft.createComplexArray() as number[];
  fft.realTransform(spec, Array.from(x));
  fft.completeSpectrum(spec);
  let power = 0;
  for (let k = 0; k < n; k++) {
    const m = k <= n / 2 ? k : n - k;
    const f = (m * FS) / n;
    const inside = f >= band[0] && f <= band[1];
    if (inside && k <= n / 2)
      power += ((k === 0 || k === n / 2 ? 1 : 2) * (spec[2 * k]! ** 2 + spec[2 * k + 1]! ** 2)) / (n * n);
    if (!inside) spec[2 * k] = spec[2 * k + 1] = 0;
  }
  const back = fft.createComplexArray() as number[];
  fft.inverseTransform(back, spec);
  return { power, wave: Float64Array.from({ length: n }, (_, i) => back[2 * i]!) };
}

describe.skipIf(!gpu.available)(`tscuda stft${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-stft-gpu-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a spectrogram matching signal.stft and a float64 reference, band powers and band-passed WAVs', async () => {
    // A fresh stereo 24-bit WAV: tones in each band, a chirp and noise; the command averages the channels.
    const left: number[] = [];
    const right: number[] = [];
    const phase = Math.random() * 2 * Math.PI;
    for (let i = 0; i < N; i++) {
      const t = i / FS;
      const common =
        0.3 * Math.sin(2 * Math.PI * 440 * t + phase) +
        0.2 * Math.cos(2 * Math.PI * 1234 * t) +
        0.1 * Math.sin(2 * Math.PI * (100 * t + 400 * t * t));
      left.push(Math.round((common + 0.05 * (Math.random() * 2 - 1)) * 8388607 * 0.8));
      right.push(Math.round((common + 0.05 * (Math.random() * 2 - 1)) * 8388607 * 0.8));
    }
    const w = new wavefile.WaveFile();
    w.fromScratch(2, FS, '24', [left, right]);
    const file = join(dir, 'mix.wav');
    writeFileSync(file, w.toBuffer());
    const out = join(dir, 'out');
    const args = [
      join(ROOT, 'bin', 'tscuda.js'),
      'stft',
      file,
      '--nperseg',
      String(NPERSEG),
      ...BANDS.flatMap(([lo, hi]) => ['--band', `${lo}:${hi}`]),
      '--chunk-frames',
      '10',
      '--save-magnitude',
      '--quiet',
      '--out',
      out,
    ];
    const r = await execa('node', args, { cwd: ROOT, reject: false, timeout: 120_000 });
    console.log(r.stdout);
    if (r.exitCode !== 0) console.log(r.stderr);
    expect(r.stderr).not.toMatch(/tscuda stft:/);
    expect(r.exitCode).toBe(0);

    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      stft: { freqs: number; frames: number };
      channels: string;
      fs: number;
      image: { width: number; height: number };
      files: string[];
      devices: { device: number; chunks: number; frames: number }[];
    };
    expect(summary.channels).toBe('mean of 2 channels');
    expect(summary.fs).toBe(FS);
    const { freqs, frames } = summary.stft;
    // Every GPU by default: the chunks (10 frames each) spread over all of them and cover every frame once.
    expect(summary.devices.map((d) => d.device)).toEqual(Array.from({ length: Device.count() }, (_, i) => i));
    for (const d of summary.devices) expect(d.chunks, `chunks on GPU ${d.device}`).toBeGreaterThan(0);
    expect(summary.devices.reduce((n, d) => n + d.frames, 0)).toBe(frames);
    const mag = new Float32Array(new Uint8Array(readFileSync(join(out, 'stft-magnitude.f32'))).buffer);
    expect(mag.length).toBe(freqs * frames);

    // The same samples through signal.stft in one call in this process (the command ran 10 frames
    // per call: the chunks must stitch exactly), and through a float64 CPU stft.
    const input = readSignal(file);
    const ref = referenceMagnitude(input.samples);
    expect([ref.freqs, ref.frames]).toEqual([freqs, frames]);
    expect(relL2(mag, ref.values)).toBeLessThan(1e-5);
    const stream = new Stream({ device: Device.get(0), label: 'stft test' });
    try {
      const x = DeviceBuffer.from('f32', Float32Array.from(input.samples), { stream });
      const s = stft(x, { fs: FS, nperseg: NPERSEG, stream });
      await stream.done();
      const z = s.Zxx.read();
      const direct = Float32Array.from({ length: z.length / 2 }, (_, i) => Math.hypot(z[2 * i]!, z[2 * i + 1]!));
      expect(relL2(mag, direct)).toBeLessThan(1e-6);
      s.Zxx.dispose();
      x.dispose();
    } finally {
      stream.dispose();
    }

    const png = PNG.sync.read(readFileSync(join(out, 'spectrogram.png')));
    expect([png.width, png.height]).toEqual([summary.image.width, summary.image.height]);
    expect([png.width, png.height]).toEqual([1100, 560]); // the figure: map, axes, colour bar
    const figure = readFileSync(join(out, 'spectrogram.svg'), 'utf8');
    for (const title of ['time (s)', 'frequency (Hz)', '|Zxx| (dB)']) expect(figure).toContain(`>${title}</text>`);

    const bands = JSON.parse(readFileSync(join(out, 'bands.json'), 'utf8')) as {
      bands: { lowHz: number; highHz: number; power: number; relative: number }[];
    };
    const csv = readFileSync(join(out, 'bands.csv'), 'utf8').trim().split('\n');
    expect(csv).toHaveLength(BANDS.length + 1);
    BANDS.forEach((band, j) => {
      const expected = bandReferences(input.samples, band);
      expect(bands.bands[j]!.lowHz).toBe(band[0]);
      expect(Math.abs(bands.bands[j]!.power / expected.power - 1)).toBeLessThan(1e-4);
      const name = `band-${band[0]}-${band[1]}Hz.wav`;
      expect(existsSync(join(out, name))).toBe(true);
      const wave = readSignal(join(out, name));
      expect(wave.fs).toBe(FS);
      expect(wave.encoding).toBe('32f');
      expect(relL2(wave.samples, expected.wave)).toBeLessThan(1e-4);
    });
  });

  it('refuses a band above fs/2 with status 2 and one line, before using the GPU', async () => {
    const w = new wavefile.WaveFile();
    w.fromScratch(
      1,
      FS,
      '16',
      Array.from({ length: 4096 }, () => Math.round((Math.random() * 2 - 1) * 10000)),
    );
    const file = join(dir, 'short.wav');
    writeFileSync(file, w.toBuffer());
    const r = await execa('node', [join(ROOT, 'bin', 'tscuda.js'), 'stft', file, '--band', '100:5000'], {
      cwd: ROOT,
      reject: false,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^tscuda stft: --band 100:5000: the high edge is above fs\/2 = 4000 Hz/);
  });
});
