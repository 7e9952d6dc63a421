// A real-to-complex FFT with cuFFT: the spectrum of a 50-cycle sine peaks at bin 50.
// Run: npx tsx examples/fft.ts   (in your project: import from 'tscuda')
import { Device, DeviceBuffer, FftPlan, Stream } from '../src/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['cufft'] });
if (!gpu.ok) {
  console.error(`fft: ${gpu.reason}`);
  process.exit(1);
}

const n = 4096;
const cycles = 50;
using stream = new Stream({ label: 'fft' });
const signal = Float32Array.from({ length: n }, (_, i) => Math.sin((2 * Math.PI * cycles * i) / n));

using input = DeviceBuffer.alloc('f32', n, { stream }).write(signal, { stream });
using spectrum = DeviceBuffer.alloc('c64', n / 2 + 1, { stream }); // interleaved (re, im) float32 pairs
using plan = FftPlan.create({ shape: [n], type: 'R2C' });
plan.forward(input, spectrum, { stream });

const bins = spectrum.read(new Float32Array(2 * (n / 2 + 1)), { stream });
await stream.done();
let peak = 0;
const magnitude = (k: number): number => Math.hypot(bins[2 * k]!, bins[2 * k + 1]!);
for (let k = 1; k <= n / 2; k++) if (magnitude(k) > magnitude(peak)) peak = k;
console.log(`peak at bin ${peak} of ${n / 2 + 1}, |X| = ${magnitude(peak).toFixed(1)} (n/2 = ${n / 2})`);
