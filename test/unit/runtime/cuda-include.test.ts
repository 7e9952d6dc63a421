import { describe, expect, it } from 'vitest';
import { includesToolkitHeader, withToolkitInclude } from '../../../src/runtime/cuda-include.js';

describe("NVRTC and the toolkit's device headers", () => {
  it('sees an #include of a cuda_*.h device header, not of a user header or a comment', () => {
    expect(includesToolkitHeader('#include <cuda_fp16.h>\n__global__ void k() {}')).toBe(true);
    expect(includesToolkitHeader('  #  include <cuda_bf16.h>')).toBe(true);
    expect(includesToolkitHeader('#include "cuda_fp16.h"')).toBe(false);
    expect(includesToolkitHeader('// uses half: #include <cuda_fp16.h> is not needed here')).toBe(false);
    expect(includesToolkitHeader('extern "C" __global__ void k(float* p) {}')).toBe(false);
  });

  it('adds the include folder once, only when a source needs it and none was given', () => {
    const dir = (): string => '/opt/cuda/include';
    const flags = ['--gpu-architecture=sm_90', '-std=c++17'];
    expect(withToolkitInclude(flags, ['#include <cuda_fp16.h>'], dir)).toEqual([
      ...flags,
      '--include-path=/opt/cuda/include',
    ]);
    expect(withToolkitInclude(flags, ['plain', '#include <cuda_bf16.h>'], dir)).toEqual([
      ...flags,
      '--include-path=/opt/cuda/include',
    ]);
    expect(withToolkitInclude(flags, ['plain'], dir)).toEqual(flags);
    expect(withToolkitInclude([...flags, '-I/mine'], ['#include <cuda_fp16.h>'], dir)).toEqual([...flags, '-I/mine']);
    expect(withToolkitInclude(flags, ['#include <cuda_fp16.h>'], () => null)).toEqual(flags);
  });
});
