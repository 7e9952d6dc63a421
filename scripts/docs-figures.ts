/**
 * `npx tsx scripts/docs-figures.ts [out-dir]`: draws the README's sample pictures
 * (docs/images/spectrogram.png, band-powers.{png,svg}; the spectrogram's SVG, 0.5 MB of embedded map, is left out) with the demo's own figure code
 * (src/cli/commands/demo-figures.ts) from the demo's own signal, with the STFT and band powers
 * computed on the CPU (fft.js), so the pictures can be redrawn on a machine without a GPU. On a GPU,
 * `tscuda demo` draws the same figures from the GPU's results. Also docs/signal.md's band-passed
 * chirp, before and after (docs-figures/chirp.ts), through the same renderer.
 */
import FFT from 'fft.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoBandPowers, demoSpectrogram } from '../src/cli/commands/demo-figures.js';
import { DEMO_FS, plantedCycles, synthesizeDemo } from '../src/cli/commands/demo-plan.js';
import { bandPassedChirp } from './docs-figures/chirp.js';
import { cpuStftMagnitude } from './docs-figures/cpu-stft.js';

const out = process.argv[2] ?? join(import.meta.dirname, '..', 'docs', 'images');
const n = 65536;
const batch = 8;
const planted = plantedCycles(n, DEMO_FS);
const signal = synthesizeDemo(batch, n);

// scipy.signal.stft(x, fs, nperseg=1024, noverlap=768, detrend='linear'), as the demo asks of tscuda/signal's stft.
const nperseg = 1024;
const noverlap = 768;
const { magnitude, f, t } = cpuStftMagnitude(signal.subarray(0, n), {
  fs: DEMO_FS,
  nperseg,
  noverlap,
  detrend: 'linear',
});
const frames = t.length;
const freqs = f.length;

// Band powers (one-sided Parseval) of each series after a linear detrend, as the engine's cycles flag computes them.
const whole = new FFT(n);
const powers = new Float64Array(batch * planted.length);
for (let s = 0; s < batch; s++) {
  const x = signal.subarray(s * n, (s + 1) * n);
  const mean = x.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (i - (n - 1) / 2) * (x[i]! - mean);
    sxx += (i - (n - 1) / 2) ** 2;
  }
  const slope = sxy / sxx;
  const input = whole.createComplexArray();
  for (let i = 0; i < n; i++) input[2 * i] = x[i]! - mean - slope * (i - (n - 1) / 2);
  const X = whole.createComplexArray();
  whole.transform(X, input);
  planted.forEach((p, j) => {
    let sum = 0;
    for (let k = 1; k <= n / 2; k++) {
      const hz = (k * DEMO_FS) / n;
      if (hz >= p.band[0] && hz <= p.band[1])
        sum += ((k === n / 2 ? 1 : 2) * (X[2 * k]! ** 2 + X[2 * k + 1]! ** 2)) / (n * n);
    }
    powers[s * planted.length + j] = sum;
  });
}

mkdirSync(out, { recursive: true });
const spectrogram = demoSpectrogram({
  magnitude,
  f,
  t,
  length: n,
  nperseg,
  noverlap,
  planted,
  series: 0,
  device: 'drawn on the CPU by scripts/docs-figures.ts',
});
writeFileSync(join(out, 'spectrogram.png'), spectrogram.png);
const bands = demoBandPowers(powers, batch, planted);
writeFileSync(join(out, 'band-powers.png'), bands.png);
writeFileSync(join(out, 'band-powers.svg'), bands.svg);
const chirp = bandPassedChirp();
writeFileSync(join(out, 'chirp-bandpass.png'), chirp.png);
console.log(
  `wrote ${out}: spectrogram.png (${frames} frames x ${freqs} bins), band-powers.png/.svg, chirp-bandpass.png (${chirp.description})`,
);
