import { describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { HostBuffer } from '../../../src/runtime/memory/host-buffer.js';
import { Program } from '../../../src/runtime/program.js';
import { JobEngine } from '../../../src/engine/index.js';
import { gpu } from '../gpu-available.js';
import { engineFactory } from './engines.js';
import { relL2, rows, testSeries } from './reference.js';
import { skip, referenceOf } from './engine-fixture.js';

const engine = engineFactory('test');

describe.skipIf(!gpu.available)(`JobEngine on the GPU: registered stages${skip}`, () => {
  it('registered stages: an NVRTC kernel after the FFT reads the spectrum; one after the inverse changes the filtered wave', async () => {
    const program = new Program({
      name: 'engine-stages.cu',
      source: `
        extern "C" __global__ void energy(const float2* X, double* out, int batch, int bins) {
          int b = blockIdx.x;
          if (b >= batch) return;
          __shared__ double part[256];
          double acc = 0.0;
          for (int k = threadIdx.x; k < bins; k += blockDim.x) { float2 v = X[(long long)b * bins + k]; acc += (double)v.x * v.x + (double)v.y * v.y; }
          part[threadIdx.x] = acc;
          __syncthreads();
          for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s]; __syncthreads(); }
          if (threadIdx.x == 0) out[b] = part[0];
        }
        extern "C" __global__ void gain(float* y, float k, int n) {
          for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] *= k;
        }`,
    });
    const module = program.compile().load();
    const energy = module.kernel('energy', ['ptr', 'ptr', 'i32', 'i32']);
    const gain = module.kernel('gain', ['ptr', 'f32', 'i32']);
    const e = engine({ lanes: 2 });
    e.registerStage('energy', {
      after: 'fft',
      run(ctx) {
        const out = DeviceBuffer.alloc('f64', ctx.batch, { stream: ctx.stream });
        energy.launch({ grid: ctx.batch, block: 256, stream: ctx.stream }, ctx.spectrum, out, ctx.batch, ctx.bins);
        const host = HostBuffer.alloc('f64', ctx.batch);
        out.read(host, { stream: ctx.stream });
        return ctx.stream.done().then(() => {
          const values = Float64Array.from(host.array);
          host.dispose();
          out.dispose();
          return values;
        });
      },
    });
    e.registerStage('gain', {
      after: 'inverse',
      run(ctx) {
        const k = (ctx.params as { k: number }).k;
        gain.launch({ grid: 64, block: 256, stream: ctx.stream }, ctx.output!, k, ctx.batch * ctx.length);
        return { scaled: k, lane: ctx.lane };
      },
    });
    expect(() => e.registerStage('gain', { after: 'fft', run: () => 0 })).toThrow(/already registered/);
    expect(() => e.registerStage('stft', { after: 'fft', run: () => 0 })).toThrow(/built-in/);
    const spec = {
      data: testSeries(3, 900, 44) as Float32Array,
      batch: 3,
      fs: 900,
      flags: ['stft', 'energy', 'gain'],
      stageParams: { gain: { k: -2.5 } },
      passBand: [10, 200] as const,
    };
    const r = await e.submit(spec).result;
    const ref = referenceOf(spec);
    const energies = r.stages!.energy as Float64Array;
    ref.forEach((row, b) => {
      expect(Math.abs(energies[b]! - row.energy) / row.energy).toBeLessThan(1e-5);
      expect(
        relL2(
          rows(r.filtered!, 900, b, 1),
          row.filtered.map((v) => -2.5 * v),
        ),
      ).toBeLessThan(5e-5);
    });
    expect(r.stages!.gain).toEqual({ scaled: -2.5, lane: r.lane });
    module.dispose();
  });
});
