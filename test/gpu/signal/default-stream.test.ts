/**
 * Signal operations given no `{ stream }` run on the input's context's default stream: after slow
 * work enqueued there explicitly (`context.defaultStream`), with their output (allocated by the
 * operation) readable by a stream-less read once they are done. Each input is written by a kernel
 * that first spins, so an operation resolved onto any other stream reads the poisoned input.
 * Fresh random series, float64 CPU references.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kernel } from '../../../src/runtime/kernel.js';
import type { Module } from '../../../src/runtime/module.js';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { clearSignalCaches, detrend, halfBins, rfft } from '../../../src/signal/index.js';
import { gpu } from '../gpu-available.js';
import { loadBasicModule, poison } from '../helpers.js';
import { relativeL2, randomSeries } from './scipy.js';

const SPIN_NS = 30_000_000n;

/** Each series' one-sided DFT (N/2+1 bins, interleaved re/im), in float64. */
function dftReference(x: Float64Array, batch: number, n: number): Float64Array {
  const bins = halfBins(n);
  const out = new Float64Array(2 * batch * bins);
  for (let b = 0; b < batch; b++)
    for (let k = 0; k < bins; k++) {
      let re = 0;
      let im = 0;
      for (let t = 0; t < n; t++) {
        const phase = (-2 * Math.PI * ((k * t) % n)) / n;
        re += x[b * n + t]! * Math.cos(phase);
        im += x[b * n + t]! * Math.sin(phase);
      }
      out[2 * (b * bins + k)] = re;
      out[2 * (b * bins + k) + 1] = im;
    }
  return out;
}

describe.skipIf(!gpu.available)(
  `signal operations without a stream${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let mod!: Module;
    beforeAll(() => {
      mod = loadBasicModule();
    });
    afterAll(() => clearSignalCaches());

    /** Copies `from` into `x` on the default stream after a spin: x stays poisoned until then (keep `from` alive meanwhile). */
    function copySlowly(from: DeviceBuffer<'f32'>, x: DeviceBuffer<'f32'>): void {
      const spin = mod.kernel('spin_then_copy_f32', ['ptr', 'ptr', 'i32', 'u64']) as Kernel;
      spin.launch({ grid: 64, block: 256, stream: Device.get(0).context.defaultStream }, from, x, x.length, SPIN_NS);
    }

    it('rfft runs after the work queued on the default stream', () => {
      const [batch, n] = [3, 1000];
      const values = Float64Array.from(Float32Array.from(randomSeries(batch * n)));
      using staged = DeviceBuffer.from('f32', Float32Array.from(values));
      using x = DeviceBuffer.from('f32', poison(new Float32Array(batch * n)));
      using spectrum = DeviceBuffer.from('c64', poison(new Float32Array(2 * batch * halfBins(n))));
      // Warm: the plan and its work area are made now, not between the slow copy and the transform.
      rfft(staged, spectrum, { batch, length: n });
      spectrum.write(poison(new Float32Array(2 * batch * halfBins(n))));
      copySlowly(staged, x);
      rfft(x, spectrum, { batch, length: n });
      expect(relativeL2(spectrum.read(), dftReference(values, batch, n))).toBeLessThan(1e-5);
    });

    it('detrend allocates its output and runs after the work queued on the default stream', () => {
      const [batch, n] = [4, 777];
      const values = Float64Array.from(Float32Array.from(randomSeries(batch * n)));
      using staged = DeviceBuffer.from('f32', Float32Array.from(values));
      using x = DeviceBuffer.from('f32', poison(new Float32Array(batch * n)));
      // Warm: the kernels and the statistics scratch exist before the slow copy.
      detrend(staged, 'constant', { batch }).dispose();
      copySlowly(staged, x);
      using y = detrend(x, 'constant', { batch });
      expect(y.context).toBe(x.context);
      const want = new Float64Array(batch * n);
      for (let b = 0; b < batch; b++) {
        const series = values.subarray(b * n, (b + 1) * n);
        const mean = series.reduce((s, v) => s + v, 0) / n;
        for (let t = 0; t < n; t++) want[b * n + t] = series[t]! - mean;
      }
      expect(relativeL2(y.read(), want)).toBeLessThan(1e-5);
    });
  },
);
