import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Device } from '../../../src/runtime/device.js';
import type { Module } from '../../../src/runtime/module.js';
import { CompileError, nvrtcVersion, Program } from '../../../src/runtime/program.js';
import { cacheDirectory, clearProgramMemoryCache } from '../../../src/runtime/program-cache.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { randomF32, randomF64 } from '../helpers.js';

const HEADER = `
#pragma once
__device__ inline float axpy(float a, float x, float y) { return a * x + y; }
`;

const SAXPY = `
#include "axpy.cuh"
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = axpy(a, x[i], y[i]);
}
`;

const TEMPLATE = `
template <typename T>
__global__ void scale(T* out, const T* in, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}
`;

const saxpyProgram = (extra = ''): Program =>
  new Program({ source: SAXPY + extra, name: 'saxpy.cu', headers: { 'axpy.cuh': HEADER } });

/** A nonzero factor, so a kernel that did nothing cannot pass. */
const factor = (): number => (Math.random() < 0.5 ? -1 : 1) * (0.5 + 2 * Math.random());

/**
 * Runs saxpy from `module` on fresh random data and returns the worst error against the CPU. y has
 * a poisoned tail past n that the kernel must leave alone.
 */
async function runSaxpy(module: Module, n = 100_003): Promise<number> {
  const tail = 77;
  const x = randomF32(n);
  const y = new Float32Array(n + tail);
  y.set(randomF32(n));
  y.fill(Number.NaN, n);
  const a = Math.fround(factor());
  using s = new Stream();
  using dx = DeviceBuffer.alloc('f32', n).write(x, { stream: s });
  using dy = DeviceBuffer.alloc('f32', n + tail).write(y, { stream: s });
  module
    .kernel('saxpy', ['i32', 'f32', 'ptr', 'ptr'])
    .launch({ grid: Math.ceil(n / 256), block: 256, stream: s }, n, a, dx, dy);
  await s.done();
  const got = dy.read();
  let worst = 0;
  for (let i = 0; i < n; i++) {
    const ref = a * x[i]! + y[i]!; // exact product of two floats, one rounding: what fmaf gives, to half an ulp
    const err = Math.abs(got[i]! - ref) / (1 + Math.abs(ref));
    if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
  }
  for (let i = n; i < n + tail; i++) if (!Number.isNaN(got[i]!)) return Infinity; // wrote past n
  return worst;
}

describe.skipIf(!gpu.available)(`NVRTC programs${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let dir = '';
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.TSCUDA_CACHE_DIR;
    dir = mkdtempSync(join(tmpdir(), 'tscuda-nvrtc-'));
    process.env.TSCUDA_CACHE_DIR = dir;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.TSCUDA_CACHE_DIR;
    else process.env.TSCUDA_CACHE_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports its version', () => {
    expect(nvrtcVersion()).toMatch(/^\d+\.\d+$/);
  });

  it("compiles a saxpy with a header to a cubin for the device's architecture, which loads and matches the CPU", async () => {
    const compiled = saxpyProgram().compile({ cache: false });
    expect(compiled.kind).toBe('cubin');
    expect(compiled.arch).toBe(Device.get(0).arch);
    expect(compiled.fromCache).toBe(false);
    expect(Array.from(compiled.image.subarray(0, 4))).toEqual([0x7f, 0x45, 0x4c, 0x46]); // ELF
    using module = compiled.load();
    expect(await runSaxpy(module)).toBeLessThan(1e-6);
  });

  it('compiles to PTX for a virtual architecture, which the driver JIT-compiles at load', async () => {
    const arch = Device.get(0).arch.replace(/^sm_/, 'compute_');
    const compiled = saxpyProgram().compile({ arch, cache: false });
    expect(compiled.kind).toBe('ptx');
    const text = Buffer.from(compiled.image).toString('latin1');
    expect(text).toContain('.entry saxpy');
    expect(text).toMatch(/\.target\s+sm_\d+/);
    using module = compiled.load();
    expect(await runSaxpy(module, 4099)).toBeLessThan(1e-6);
  });

  it('lowers template instantiations given as name expressions', async () => {
    const compiled = new Program({ source: TEMPLATE, name: 'scale.cu' }).compile({
      nameExpressions: ['scale<float>', 'scale<double>'],
      cache: false,
    });
    const f32Name = compiled.lowered('scale<float>');
    const f64Name = compiled.lowered('scale<double>');
    expect(f32Name).toMatch(/^_Z/);
    expect(f64Name).toMatch(/^_Z/);
    expect(f32Name).not.toBe(f64Name);
    expect([...compiled.loweredNames.keys()]).toEqual(['scale<float>', 'scale<double>']);
    expect(() => compiled.lowered('scale<int>')).toThrow(/not among the name expressions/);

    using module = compiled.load();
    const n = 5000;
    using s = new Stream();

    const x64 = randomF64(n);
    const k64 = factor();
    using in64 = DeviceBuffer.alloc('f64', n).write(x64, { stream: s });
    using out64 = DeviceBuffer.alloc('f64', n).memset(0xffffffff, { width: 32, stream: s });
    module
      .kernel(f64Name, ['ptr', 'ptr', 'f64', 'i32'])
      .launch({ grid: Math.ceil(n / 128), block: 128, stream: s }, out64, in64, k64, n);

    const x32 = randomF32(n);
    const k32 = Math.fround(factor());
    using in32 = DeviceBuffer.alloc('f32', n).write(x32, { stream: s });
    using out32 = DeviceBuffer.alloc('f32', n).memset(0xffffffff, { width: 32, stream: s });
    module
      .kernel(f32Name, ['ptr', 'ptr', 'f32', 'i32'])
      .launch({ grid: Math.ceil(n / 128), block: 128, stream: s }, out32, in32, k32, n);

    await s.done();
    // One IEEE multiplication each: bit-exact on both sides.
    expect(Array.from(out64.read())).toEqual(Array.from(x64, (v) => v * k64));
    expect(Array.from(out32.read())).toEqual(Array.from(x32, (v) => Math.fround(v * k32)));
  });

  it("throws CompileError carrying NVRTC's whole log", () => {
    const bad = new Program({
      source: 'extern "C" __global__ void k(float* p) {\n  p[0] = undefined_identifier_xyz;\n}\n',
      name: 'bad.cu',
    });
    let error: unknown;
    try {
      bad.compile({ cache: false });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CompileError);
    const e = error as CompileError;
    expect(e.status).toBe('NVRTC_ERROR_COMPILATION');
    expect(e.log).toContain('undefined_identifier_xyz');
    expect(e.log).toContain('bad.cu');
    expect(e.message).toContain(e.log);
    // A failed compile caches nothing: the same source fails again.
    expect(() => bad.compile()).toThrow(CompileError);
  });

  it('rejects an unknown option with CompileError too', () => {
    expect(() => saxpyProgram().compile({ options: ['--no-such-option-tscuda'], cache: false })).toThrow(CompileError);
  });

  it('caches in memory and on disk; a corrupt disk entry is compiled again', async () => {
    const p = saxpyProgram(`// cache test ${Math.random()}\n`);
    const first = p.compile();
    expect(first.fromCache).toBe(false);
    expect(first.cacheKey).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheDirectory()).toBe(dir);
    const bin = join(dir, `${first.cacheKey}.bin`);
    expect(existsSync(bin) && existsSync(join(dir, `${first.cacheKey}.json`))).toBe(true);

    const fromMemory = p.compile();
    expect(fromMemory.fromCache).toBe(true);
    expect(Buffer.from(fromMemory.image).equals(Buffer.from(first.image))).toBe(true);

    clearProgramMemoryCache();
    const fromDisk = p.compile();
    expect(fromDisk.fromCache).toBe(true);
    expect(Buffer.from(fromDisk.image).equals(Buffer.from(first.image))).toBe(true);
    using module = fromDisk.load();
    expect(await runSaxpy(module, 1000)).toBeLessThan(1e-6);

    // Other options, another entry.
    expect(p.compile({ options: ['--use_fast_math'] }).fromCache).toBe(false);
    // cache: false always compiles.
    expect(p.compile({ cache: false }).fromCache).toBe(false);

    // A corrupt entry is ignored, recompiled and rewritten.
    writeFileSync(bin, 'not a cubin');
    clearProgramMemoryCache();
    const again = p.compile();
    expect(again.fromCache).toBe(false);
    expect(again.kind).toBe('cubin');
    clearProgramMemoryCache();
    expect(p.compile().fromCache).toBe(true);
  });

  it('keeps lowered names with the cached entry', () => {
    const p = new Program({ source: `${TEMPLATE}// names ${Math.random()}\n`, name: 'scale.cu' });
    const names = ['scale<float>', 'scale<double>'];
    const first = p.compile({ nameExpressions: names });
    clearProgramMemoryCache();
    const fromDisk = p.compile({ nameExpressions: names });
    expect(fromDisk.fromCache).toBe(true);
    expect(fromDisk.lowered('scale<double>')).toBe(first.lowered('scale<double>'));
    expect(fromDisk.lowered('scale<float>')).toBe(first.lowered('scale<float>'));
    // Other name expressions are another key.
    expect(p.compile({ nameExpressions: ['scale<float>'] }).fromCache).toBe(false);
  });

  it('compileAsync() compiles off the event loop: timers keep firing while NVRTC works, and the result runs', async () => {
    // Heavy enough to take a few hundred ms: many unrolled template instantiations.
    const source = `${HEAVY_SOURCE}\n// ${Math.random()}\n`;
    const p = new Program({ source, name: 'heavy.cu' });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    try {
      const compiled = await p.compileAsync({ cache: false });
      const ms = performance.now() - started;
      expect(compiled.fromCache).toBe(false);
      // A blocked loop would fire the timer at most once after the compile; a free one about ms/5 times.
      expect(ticks).toBeGreaterThan(Math.min(20, ms / 20));
      using module = compiled.load();
      const k = module.kernel('heavy', ['ptr', 'i32']);
      using s = new Stream();
      using out = DeviceBuffer.alloc('f32', 256, { stream: s }).memset(0xffffffff, { width: 32, stream: s });
      k.launch({ grid: 1, block: 256, stream: s }, out, 256);
      const host = new Float32Array(256);
      out.read(host, { stream: s });
      await s.done();
      for (let i = 0; i < 256; i++) expect(host[i]).toBeCloseTo(heavyExpected(i), 2);
    } finally {
      clearInterval(timer);
    }
  });

  it('compileAsync() rejects with CompileError, and hits the cache without a thread hop', async () => {
    const bad = new Program({
      source: 'extern "C" __global__ void k(float* p) { p[0] = nope_' + String(Math.random()).slice(2) + '; }',
      name: 'bad-async.cu',
    });
    await expect(bad.compileAsync({ cache: false })).rejects.toBeInstanceOf(CompileError);
    const p = saxpyProgram(`// async ${Math.random()}\n`);
    const first = await p.compileAsync();
    expect(first.fromCache).toBe(false);
    const second = await p.compileAsync();
    expect(second.fromCache).toBe(true);
  });
});

/** 40 template instantiations of an unrolled polynomial: a compile of a few hundred ms. */
const HEAVY_SOURCE = `
template <int K> __device__ float term(float x) {
  float acc = 0.0f;
  #pragma unroll
  for (int i = 0; i < 64; i++) acc += __sinf(x * (K + i) * 1e-3f) * 1e-3f;
  return acc + term<K - 1>(x);
}
template <> __device__ float term<0>(float x) { return x; }
extern "C" __global__ void heavy(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = term<40>((float)i) - term<40>((float)i) + (float)i * 0.5f;
}`;

function heavyExpected(i: number): number {
  return i * 0.5;
}
