// A short-time Fourier transform (scipy.signal.stft's parameters) of a tone that jumps from
// 50 Hz to 120 Hz halfway: the strongest frequency of the first and last frames.
// Run: npx tsx examples/stft.ts   (in your project: import from 'tscuda' and 'tscuda/signal')
import { Device, DeviceBuffer, Stream } from '../src/index.js';
import { stft } from '../src/signal/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['cufft'] });
if (!gpu.ok) {
  console.error(`stft: ${gpu.reason}`);
  process.exit(1);
}

const fs = 1000;
const seconds = 2;
const n = fs * seconds;
const tone = Float32Array.from({ length: n }, (_, i) => Math.sin(2 * Math.PI * (i < n / 2 ? 50 : 120) * (i / fs)));

using stream = new Stream({ label: 'stft' });
using x = DeviceBuffer.alloc('f32', n, { stream }).write(tone, { stream });
const { f, t, Zxx } = stft(x, { fs, nperseg: 200, stream });
using spectrum = Zxx as DeviceBuffer<'c64'>; // f32 in, c64 out: freqs x frames complex values
const z = spectrum.read(new Float32Array(2 * spectrum.length), { stream });
await stream.done();

const frames = t.length;
function strongest(frame: number): number {
  let best = 0;
  let bestPower = -1;
  for (let k = 0; k < f.length; k++) {
    const i = 2 * (k * frames + frame);
    const power = z[i]! ** 2 + z[i + 1]! ** 2;
    if (power > bestPower) [best, bestPower] = [k, power];
  }
  return f[best]!;
}
console.log(
  `${f.length} frequencies x ${frames} frames; strongest at t=${t[1]!.toFixed(2)} s: ${strongest(1)} Hz, at t=${t[frames - 2]!.toFixed(2)} s: ${strongest(frames - 2)} Hz`,
);
