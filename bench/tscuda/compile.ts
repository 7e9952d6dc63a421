/**
 * compile_event_loop_lag_p99_ms: how late a chain of 1 ms timers fires while
 * `Program.compileAsync()` runs a compile of about a second (issue 10: NVRTC off the event loop).
 *
 * The source is N kernels of unrolled transcendental math, N doubled until one synchronous
 * compile (cache off) takes at least COMPILE_TARGET_MS; then compiles of that size run through
 * compileAsync() with the probe on. The synchronous compile's lag is noted for contrast.
 */
import { Program } from '../../src/runtime/index.js';
import { startLagProbe } from '../harness/lag.js';
import { lagPass } from './pipeline.js';
import type { MeasuredMetric, TscudaBenchmark } from './types.js';

const COMPILE_TARGET_MS = 1000;
const ASYNC_COMPILES = 3;

/** `kernels` kernels whose unrolled loops make NVRTC work; a salt keeps every source distinct (no cache can answer). */
function heavySource(kernels: number, salt: number): string {
  const body = (k: number): string => `
extern "C" __global__ void heavy_${k}(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i] + ${salt}.0f;
  #pragma unroll
  for (int j = 0; j < 48; j++) v = sinf(v * ${(k % 7) + 1}.013f + j) * expf(-v * 0.5f) + cosf(v + ${k});
  x[i] = v;
}`;
  return Array.from({ length: kernels }, (_, k) => body(k)).join('\n');
}

export const COMPILE_BENCHMARK: TscudaBenchmark = {
  names: ['compile_event_loop_lag_p99_ms'],
  run: async (ctx) => {
    let salt = Math.floor(Math.random() * 1e6);
    const probeProgram = (kernels: number): Program =>
      new Program({ source: heavySource(kernels, salt++), name: 'lag-probe.cu', label: 'compile lag probe' });
    const compileSync = (kernels: number): number => {
      using program = probeProgram(kernels);
      const t0 = performance.now();
      program.compile({ device: ctx.device, cache: false });
      return performance.now() - t0;
    };
    // Warm-up: NVRTC's own start-up and the worker thread's, outside the measured compiles.
    compileSync(1);
    {
      using warm = probeProgram(1);
      await warm.compileAsync({ device: ctx.device, cache: false });
    }
    let kernels = 4;
    let syncMs = compileSync(kernels);
    while (syncMs < COMPILE_TARGET_MS && kernels < 4096) {
      kernels *= 2;
      syncMs = compileSync(kernels);
    }
    const lags: number[] = [];
    const asyncMs: number[] = [];
    for (let i = 0; i < ASYNC_COMPILES; i++) {
      using program = probeProgram(kernels);
      const probe = startLagProbe(1);
      const t0 = performance.now();
      await program.compileAsync({ device: ctx.device, cache: false });
      asyncMs.push(performance.now() - t0);
      lags.push(...probe.stop());
    }
    // For contrast: the blocking compile holds the loop for its whole length.
    const blocking = startLagProbe(1);
    compileSync(kernels);
    await new Promise((resolve) => setTimeout(resolve, 2));
    const blockingMax = Math.max(...blocking.stop());
    const metric: MeasuredMetric = {
      pass: lagPass(lags),
      notes: [
        `${ASYNC_COMPILES} compileAsync() runs of ${kernels} unrolled kernels (cache off), ${asyncMs.map((ms) => ms.toFixed(0)).join('/')} ms each; ${lags.length} ticks of a 1 ms timer`,
        `the same compile through the blocking compile() (${syncMs.toFixed(0)} ms) made a timer ${blockingMax.toFixed(0)} ms late`,
      ],
    };
    return { compile_event_loop_lag_p99_ms: metric };
  },
};
