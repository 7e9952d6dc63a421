import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../src/runtime/device-buffer.js';
import { CompileError, Program, clearProgramMemoryCache } from '../../src/runtime/program.js';
import { Stream } from '../../src/runtime/stream.js';
import { gpu } from './gpu-available.js';
import { poison, randomF32 } from './helpers.js';

const SAXPY = `
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}`;

describe.skipIf(!gpu.available)(`NVRTC programs${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  beforeAll(() => {
    process.env.TSCUDA_CACHE_DIR = mkdtempSync(join(tmpdir(), 'tscuda-nvrtc-'));
  });

  it('compiles CUDA source to a cubin for this device and runs it', async () => {
    const compiled = new Program({ source: SAXPY, name: 'saxpy.cu' }).compile({ cache: false });
    expect(compiled.kind).toBe('cubin');
    const kernel = compiled.load().kernel('saxpy', ['i32', 'f32', 'ptr', 'ptr']);
    const n = 100_003;
    const x = randomF32(n);
    const y = randomF32(n);
    const a = Math.random() * 4 - 2;
    using s = new Stream();
    using dx = DeviceBuffer.from('f32', x);
    using dy = DeviceBuffer.from('f32', y);
    kernel.launch({ grid: Math.ceil(n / 256), block: 256, stream: s }, n, a, dx, dy);
    await s.done();
    const got = poison(new Float32Array(n));
    dy.read(got);
    for (let i = 0; i < n; i++) expect(Math.abs(got[i]! - (Math.fround(a) * x[i]! + y[i]!))).toBeLessThan(1e-5);
  });

  it('lowers template names and compiles to PTX', async () => {
    const src = `template <typename T> __global__ void fill(T* out, T v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = v; }`;
    const compiled = new Program({ source: src }).compile({ arch: 'compute_90', nameExpressions: ['fill<double>'], cache: false });
    expect(compiled.kind).toBe('ptx');
    const name = compiled.lowered('fill<double>');
    expect(name).toMatch(/^_Z/);
    const k = compiled.load().kernel(name, ['ptr', 'f64', 'i32']);
    using buf = DeviceBuffer.alloc('f64', 1000);
    const v = Math.random();
    k.launch({ grid: 4, block: 256 }, buf, v, 1000);
    expect(buf.read().every((x) => x === v)).toBe(true);
  });

  it('reports compile errors with the whole log', () => {
    const bad = new Program({ source: 'extern "C" __global__ void k() { undefined_thing = 1; }', name: 'bad.cu' });
    let error: unknown;
    try {
      bad.compile({ cache: false });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CompileError);
    expect((error as CompileError).log).toContain('undefined_thing');
    expect((error as CompileError).message).toContain('bad.cu');
  });

  it('caches in memory and on disk', () => {
    const p = new Program({ source: SAXPY + '\n// cache test ' + Math.random() });
    expect(p.compile().fromCache).toBe(false);
    expect(p.compile().fromCache).toBe(true);
    clearProgramMemoryCache();
    const fromDisk = p.compile();
    expect(fromDisk.fromCache).toBe(true);
    expect(fromDisk.load().kernel('saxpy', ['i32', 'f32', 'ptr', 'ptr']).name).toBe('saxpy');
    expect(p.compile({ options: ['--use_fast_math'] }).fromCache).toBe(false);
  });
});
