/**
 * The bench's fault-run worker (never part of the product): the serve worker plus a stage
 * `fault` that launches test/kernels' oob_write with a huge offset, a sticky
 * CUDA_ERROR_ILLEGAL_ADDRESS. A request with `flags=stft,fault` triggers it.
 */
import { Device } from '../../src/runtime/device.js';
import type { DeviceBuffer } from '../../src/runtime/memory/device-buffer.js';
import { buildGpuParts } from '../../src/server/gpu-parts.js';
import { runWorker } from '../../src/server/worker.js';
import { loadBasicKernels } from '../../test/kernels/launchers.generated.js';

await runWorker({
  async build(config) {
    const parts = await buildGpuParts(config);
    const kernels = loadBasicKernels({ context: Device.get(config.device ?? 0).context });
    parts.engine.registerStage('fault', {
      after: 'fft',
      run(ctx) {
        kernels.oob_write({ grid: 1, block: 1, stream: ctx.stream }, ctx.input as DeviceBuffer<'f32'>, 1n << 40n);
        return null;
      },
    });
    return { ...parts, extraFlags: ['fault'] };
  },
});
