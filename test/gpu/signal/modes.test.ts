/**
 * spectrogram's modes other than psd, and welch's median average, on the GPU against
 * scipy.signal on fresh random inputs (the same cases the CPU emulation checks in CI).
 */
import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { spectrogram, welch } from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { randomSeries, relativeL2, scipy, scipyReference, type ScipyCase } from './scipy.js';

const skip = !gpu.available ? gpu.reason : !scipy.ok ? scipy.reason : '';
const TOL = { f32: 1e-5, f64: 1e-12 } as const;

function circle(a: ArrayLike<number>): Float64Array {
  const out = new Float64Array(2 * a.length);
  for (let i = 0; i < a.length; i++) [out[2 * i], out[2 * i + 1]] = [Math.cos(a[i]!), Math.sin(a[i]!)];
  return out;
}

describe.skipIf(!!skip)(
  `spectrogram modes and welch median vs scipy${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 120_000 },
  () => {
    for (const p of ['f32', 'f64'] as const) {
      it(`magnitude, complex, angle, phase and median (${p})`, async () => {
        using stream = new Stream({ label: `modes-${p}` });
        const batch = 2;
        const n = 1501;
        const raw = randomSeries(batch * n);
        const x64 = p === 'f32' ? Float64Array.from(Float32Array.from(raw)) : raw;
        using x = p === 'f32' ? DeviceBuffer.from('f32', Float32Array.from(raw)) : DeviceBuffer.from('f64', raw);
        const cases: ScipyCase[] = [];
        const outs: { buf: DeviceBuffer; kind: 'values' | 'circle' }[] = [];
        for (const [mode, kind] of [
          ['magnitude', 'values'],
          ['complex', 'values'],
          ['angle', 'circle'],
          ['phase', 'circle'],
        ] as const) {
          outs.push({
            buf: spectrogram(x, { nperseg: 36, noverlap: 12, scaling: 'spectrum', fs: 3, mode, batch, stream }).Sxx,
            kind,
          });
          cases.push({
            id: `m-${mode}`,
            op: 'spectrogram',
            input: x64,
            shape: [batch, n],
            params: { fs: 3, nperseg: 36, noverlap: 12, scaling: 'spectrum', mode },
          });
        }
        for (const nperseg of [32, 41]) {
          outs.push({ buf: welch(x, { nperseg, average: 'median', batch, stream }).Pxx, kind: 'values' });
          cases.push({
            id: `med-${nperseg}`,
            op: 'welch',
            input: x64,
            shape: [batch, n],
            params: { nperseg, average: 'median' },
          });
        }
        await stream.done();
        const ref = await scipyReference(cases);
        cases.forEach((c, k) => {
          const { buf, kind } = outs[k]!;
          const got = buf.read() as ArrayLike<number>;
          const want = ref.get(c.id)!.values;
          if (kind === 'values') expect(relativeL2(got, want), c.id).toBeLessThanOrEqual(TOL[p]);
          else expect(relativeL2(circle(got), circle(want)), c.id).toBeLessThanOrEqual(p === 'f32' ? 1e-4 : 1e-10);
          buf.dispose();
        });
      });
    }
  },
);
