/**
 * `tscuda stft` on 16-bit input (issue 26): a fresh mono 16-bit PCM WAV goes to the GPU as i16 (no
 * widening on the host) and gives the spectrogram, band powers and band-passed WAVs of the
 * widened path (--dtype float) and of a float64 reference of the same quantized samples.
 */
import FFT from 'fft.js';
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { afterAll, describe, expect, it } from 'vitest';
import { readSignal } from '../../../src/cli/signal-input.js';
import { spectralGeometry, STFT_DEFAULTS } from '../../../src/signal/geometry.js';
import { getWindow } from '../../../src/signal/window.js';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

const FS = 8000;
const N = 16384;
const NPERSEG = 256;

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
function referenceMagnitude(x: Float64Array): Float64Array {
  const g = spectralGeometry(x.length, { fs: FS, nperseg: NPERSEG }, STFT_DEFAULTS);
  const w = getWindow('hann', NPERSEG);
  const wsum = w.reduce((a, b) => a + b, 0);
  const ext = new Float64Array(g.extendedLength);
  ext.set(x, g.extension);
  const fft = new FFT(NPERSEG);
  const out = fft.createComplexArray() as number[];
  const freqs = NPERSEG / 2 + 1;
  const values = new Float64Array(freqs * g.frames);
  for (let t = 0; t < g.frames; t++) {
    fft.realTransform(
      out,
      Array.from({ length: NPERSEG }, (_, i) => ext[t * g.hop + i]! * w[i]!),
    );
    for (let f = 0; f < freqs; f++) values[f * g.frames + t] = Math.hypot(out[2 * f]!, out[2 * f + 1]!) / wsum;
  }
  return values;
}

describe.skipIf(!gpu.available)(
  `tscuda stft with 16-bit samples${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tscuda-stft16-gpu-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('a 16-bit WAV goes to the GPU as i16 and matches the widened path and a float64 reference', async () => {
      const phase = Math.random() * 2 * Math.PI;
      const q = Array.from({ length: N }, (_, i) =>
        Math.round(
          (0.4 * Math.sin((2 * Math.PI * 440 * i) / FS + phase) +
            0.2 * Math.cos((2 * Math.PI * 1234 * i) / FS) +
            0.05 * (Math.random() * 2 - 1)) *
            32767,
        ),
      );
      const w = new wavefile.WaveFile();
      w.fromScratch(1, FS, '16', q);
      const file = join(dir, 'pcm16.wav');
      writeFileSync(file, w.toBuffer());
      const run = async (
        out: string,
        extra: string[],
      ): Promise<{
        mag: Float32Array;
        summary: { samplesToGpu: string };
        bands: { bands: { power: number }[] };
        wave: Float64Array;
      }> => {
        const args = [
          join(ROOT, 'bin', 'tscuda.js'),
          'stft',
          file,
          '--nperseg',
          String(NPERSEG),
          '--band',
          '300:600',
          '--chunk-frames',
          '16',
          '--save-magnitude',
          '--quiet',
          '--out',
          out,
          ...extra,
        ];
        const r = await execa('node', args, { cwd: ROOT, reject: false, timeout: 120_000 });
        if (r.exitCode !== 0) console.log(r.stderr);
        expect(r.exitCode).toBe(0);
        return {
          mag: new Float32Array(new Uint8Array(readFileSync(join(out, 'stft-magnitude.f32'))).buffer),
          summary: JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { samplesToGpu: string },
          bands: JSON.parse(readFileSync(join(out, 'bands.json'), 'utf8')) as { bands: { power: number }[] },
          wave: readSignal(join(out, 'band-300-600Hz.wav')).samples,
        };
      };
      const i16 = await run(join(dir, 'i16'), []);
      const wide = await run(join(dir, 'float'), ['--dtype', 'float']);
      expect(i16.summary.samplesToGpu).toBe(`i16 (scale ${1 / 32768})`);
      expect(wide.summary.samplesToGpu).toBe('f32');
      const values = Float64Array.from(q, (v) => v / 32768);
      expect(relL2(i16.mag, referenceMagnitude(values))).toBeLessThan(1e-5);
      expect(relL2(i16.mag, wide.mag)).toBeLessThan(1e-6);
      expect(Math.abs(i16.bands.bands[0]!.power / wide.bands.bands[0]!.power - 1)).toBeLessThan(1e-5);
      expect(relL2(i16.wave, wide.wave)).toBeLessThan(1e-5);
    });
  },
);
