import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { BATCH_SIGNATURES, SIGNAL_SIGNATURES, SOS_SIGNATURES } from '../../../src/kernels/launchers.generated.js';
import { bindKernels, loadKernelModule } from '../../../src/kernels/load.js';
import { gpu } from '../gpu-available.js';
import { poison, randomF32 } from '../helpers.js';

// A checkout without nvcc has no kernels/build: the product kernels must then come from their .cu through NVRTC.
describe.skipIf(!gpu.available)(
  `product kernels without built fatbins (NVRTC fallback)${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    const root = mkdtempSync(join(tmpdir(), 'tscuda-nofatbin-'));
    const emptyBuildDir = join(root, 'kernels', 'build');
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('compiles signal.cu, batch.cu and sos.cu with NVRTC and binds every kernel the launchers name', () => {
      for (const [name, signatures] of [
        ['signal', SIGNAL_SIGNATURES],
        ['batch', BATCH_SIGNATURES],
        ['sos', SOS_SIGNATURES],
      ] as const) {
        const module = loadKernelModule(name, {}, emptyBuildDir);
        try {
          const kernels = bindKernels(module, signatures);
          expect(new Set(Object.keys(kernels))).toEqual(new Set(Object.keys(signatures)));
        } finally {
          module.dispose();
        }
      }
    });

    it('an NVRTC-compiled kernel (lerp_f32) matches a float64 CPU reference', async () => {
      const module = loadKernelModule('batch', {}, emptyBuildDir);
      try {
        const { lerp_f32 } = bindKernels(module, BATCH_SIGNATURES);
        const dim = 257;
        const count = 1031;
        const a = randomF32(dim * count);
        const b = randomF32(dim * count);
        const t = randomF32(count);
        using s = new Stream();
        using da = DeviceBuffer.from('f32', a);
        using db = DeviceBuffer.from('f32', b);
        using dt = DeviceBuffer.from('f32', t);
        using out = DeviceBuffer.from('f32', poison(new Float32Array(dim * count)));
        lerp_f32.launch({ grid: Math.ceil((dim * count) / 256), block: 256, stream: s }, da, db, dt, out, dim, count);
        await s.done();
        const got = out.read(poison(new Float32Array(dim * count)));
        let worst = 0;
        for (let k = 0; k < dim * count; k++) {
          const tt = t[Math.floor(k / dim)]!;
          const want = a[k]! + tt * (b[k]! - a[k]!);
          const err = Math.abs(got[k]! - want);
          if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
        }
        expect(worst).toBeLessThan(1e-5);
      } finally {
        module.dispose();
      }
    });
  },
);
