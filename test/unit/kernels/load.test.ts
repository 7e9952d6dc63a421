import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelSourceFor, nvrtcSource } from '../../../src/kernels/load.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('kernel modules without a built fatbin', () => {
  it('find their source beside the build folder (test kernels) or in src/kernels (product kernels)', () => {
    expect(kernelSourceFor('basic', join(root, 'test', 'kernels', 'build'))).toBe(
      join(root, 'test', 'kernels', 'basic.cu'),
    );
    expect(kernelSourceFor('signal', join(root, 'kernels', 'build'))).toBe(join(root, 'src', 'kernels', 'signal.cu'));
    expect(kernelSourceFor('batch', join(root, 'kernels', 'build'))).toBe(join(root, 'src', 'kernels', 'batch.cu'));
    expect(kernelSourceFor('no_such_module', join(root, 'kernels', 'build'))).toBeUndefined();
  });

  it('drop the host header NVRTC cannot include and keep everything else', () => {
    const src = '#include <cuda_runtime.h>\nextern "C" __global__ void k(float2* p) { p[0].x = 1; }\n';
    const out = nvrtcSource(src);
    expect(out).not.toMatch(/^#include <cuda_runtime\.h>/m);
    expect(out).toContain('extern "C" __global__ void k(float2* p) { p[0].x = 1; }');
    expect(nvrtcSource('#include "mine.cuh"\n')).toBe('#include "mine.cuh"\n');
  });
});
