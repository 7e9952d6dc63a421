import { execa } from 'execa';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  DeclarationError,
  parseDeclarations,
  type BufferArgs,
  type DeclaredDType,
  type ScalarArgs,
} from '../../../src/kernels/declarations.js';
import {
  elementwise,
  elementwiseParams,
  elementwiseSource,
  parseElementwise,
  type ElementwiseArgs,
} from '../../../src/kernels/elementwise.js';
import {
  parseReduction,
  reduction,
  reductionGeometry,
  reductionParams,
  reductionSource,
  MAX_CHUNKS,
} from '../../../src/kernels/reduction.js';
import type { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import type { DType } from '../../../src/runtime/memory/dtype.js';

describe('C declarations', () => {
  it('parses types, names and const, normalizing whitespace', () => {
    expect(parseDeclarations(' const float x,\n unsigned  long long  k, T y', 'inputs')).toEqual([
      { name: 'x', type: 'float', dtype: 'f32', isConst: true },
      { name: 'k', type: 'unsigned long long', dtype: 'u64', isConst: false },
      { name: 'y', type: 'T', dtype: undefined, isConst: false },
    ]);
    expect(parseDeclarations('__half h, __nv_bfloat16 b, float2 c', 'x').map((d) => d.dtype)).toEqual([
      'f16',
      'bf16',
      'c64',
    ]);
    expect(parseDeclarations('  ', 'params')).toEqual([]);
  });
  it('rejects unknown types, missing names, reserved and duplicate names, naming the list', () => {
    expect(() => parseDeclarations('flaot x', 'inputs')).toThrow(/inputs: unknown type "flaot" of x/);
    expect(() => parseDeclarations('float', 'inputs')).toThrow(DeclarationError);
    expect(() => parseDeclarations('float i', 'outputs')).toThrow(/outputs: the name "i" is reserved/);
    expect(() => parseDeclarations('float _x', 'outputs')).toThrow(/reserved/);
    expect(() => parseElementwise({ inputs: 'float x', outputs: 'float x', operation: 'x = 1' })).toThrow(
      /x is declared twice/,
    );
    expect(() => parseElementwise({ inputs: 'float x', outputs: 'const float z', operation: 'z = x' })).toThrow(
      /output z cannot be const/,
    );
    expect(() =>
      parseElementwise({ inputs: 'float x', outputs: 'float z', params: 'float2 c', operation: 'z = x' }),
    ).toThrow(/complex/);
    expect(() => parseElementwise({ inputs: 'float x', outputs: 'float z', operation: ' ' })).toThrow(/operation/);
    expect(() =>
      parseElementwise({ inputs: 'float x', outputs: 'float z', operation: 'z = x', name: 'bad-name' }),
    ).toThrow(/C identifier/);
  });
  it('types arguments from the declaration strings', () => {
    expectTypeOf<DeclaredDType<'const float x'>>().toEqualTypeOf<'f32'>();
    expectTypeOf<DeclaredDType<'unsigned long long k'>>().toEqualTypeOf<'u64'>();
    expectTypeOf<DeclaredDType<'__half h'>>().toEqualTypeOf<'f16'>();
    expectTypeOf<DeclaredDType<'T y'>>().toEqualTypeOf<DType>();
    expectTypeOf<BufferArgs<'const float x, const double y'>>().toEqualTypeOf<
      [DeviceBuffer<'f32'>, DeviceBuffer<'f64'>]
    >();
    expectTypeOf<ScalarArgs<'float a, long long k'>>().toEqualTypeOf<[number, number | bigint]>();
    expectTypeOf<ScalarArgs<''>>().toEqualTypeOf<[]>();
    expectTypeOf<ElementwiseArgs<'const float x, const float y', 'float z', 'float a'>>().toEqualTypeOf<
      | [DeviceBuffer<'f32'>, DeviceBuffer<'f32'>, number, DeviceBuffer<'f32'>]
      | [
          DeviceBuffer<'f32'>,
          DeviceBuffer<'f32'>,
          number,
          DeviceBuffer<'f32'>,
          { stream?: import('../../../src/runtime/stream.js').Stream | undefined; block?: number | undefined },
        ]
    >();
  });
  it('makes swapped or mistyped arguments a tsc error', () => {
    const saxpy = elementwise({
      name: 'saxpy',
      inputs: 'const float x, const float y',
      params: 'float a',
      outputs: 'float z',
      operation: 'z = a * x + y',
    });
    const sum = reduction({ inputs: 'const double x', output: 'double y', map: 'x', reduce: 'a + b', identity: '0' });
    expect(saxpy.kernelName).toBe('saxpy');
    // Never called: these lines only have to (not) type-check.
    const typeOnly = (f32: DeviceBuffer<'f32'>, f64: DeviceBuffer<'f64'>): void => {
      saxpy(f32, f32, 2, f32);
      saxpy(f32, f32, 2, f32, {});
      // @ts-expect-error the scalar and an output swapped
      saxpy(f32, f32, f32, 2);
      // @ts-expect-error an f64 buffer where float is declared
      saxpy(f64, f32, 2, f32);
      // @ts-expect-error an argument missing
      saxpy(f32, f32, f32);
      sum(f64, f64);
      // @ts-expect-error an f32 output where double is declared
      sum(f64, f32);
    };
    expect(typeof typeOnly).toBe('function');
  });
});

describe('elementwise code generation', () => {
  const saxpy = parseElementwise({
    name: 'saxpy',
    inputs: 'const T x, const T y',
    params: 'T a, long long k',
    outputs: 'T z',
    operation: 'z = a * x + y',
  });
  it('generates a grid-stride kernel with inputs as values and outputs as references', () => {
    const src = elementwiseSource(saxpy, new Map([['T', 'f32']]));
    expect(src).toContain('typedef float T;');
    expect(src).toContain(
      'extern "C" __global__ void saxpy(const float* __restrict__ _in_x, const float* __restrict__ _in_y, const float a, const long long k, float* _out_z, const long long n)',
    );
    expect(src).toContain('const float x = _in_x[i];');
    expect(src).toContain('float& z = _out_z[i];');
    expect(src).toContain('z = a * x + y;');
    expect(src).not.toContain('cuda_fp16');
    expect(elementwiseParams(saxpy, new Map([['T', 'f32']]))).toEqual(['ptr', 'ptr', 'f32', 'i64', 'ptr', 'i64']);
  });
  it('includes cuda_fp16.h / cuda_bf16.h and passes half scalars as bits', () => {
    const f16 = elementwiseSource(saxpy, new Map([['T', 'f16']]));
    expect(f16).toContain('#include <cuda_fp16.h>');
    expect(f16).toContain('const __half a = __ushort_as_half(_bits_a);');
    expect(elementwiseParams(saxpy, new Map([['T', 'f16']]))).toEqual(['ptr', 'ptr', 'u16', 'i64', 'ptr', 'i64']);
    const bf16 = elementwiseSource(saxpy, new Map([['T', 'bf16']]));
    expect(bf16).toContain('#include <cuda_bf16.h>');
    expect(bf16).toContain('__ushort_as_bfloat16(_bits_a)');
  });
});

describe('reduction code generation', () => {
  const l2 = parseReduction({
    name: 'l2',
    inputs: 'const T x',
    output: 'T y',
    params: 'float s',
    map: 'x * x',
    reduce: 'a + b',
    identity: '0',
    post: 'y = sqrt(a) * s',
  });
  it('accumulates in the output type, or float for f16/bf16, or the accumulator given', () => {
    expect(reductionSource(l2, new Map([['T', 'f64']]))).toContain('typedef double _acc_t;');
    expect(reductionSource(l2, new Map([['T', 'f16']]))).toContain('typedef float _acc_t;');
    expect(reductionSource(l2, new Map([['T', 'bf16']]))).toContain('typedef float _acc_t;');
    const wide = parseReduction({
      inputs: 'const int x',
      output: 'int y',
      accumulator: 'long long',
      map: 'x',
      reduce: 'a + b',
      identity: '0',
    });
    expect(reductionSource(wide, new Map())).toContain('typedef long long _acc_t;');
    expect(() =>
      parseReduction({
        inputs: 'const int x',
        output: 'int y',
        accumulator: 'long  double',
        map: 'x',
        reduce: 'a + b',
        identity: '0',
      }),
    ).toThrow(/accumulator/);
  });
  it('has a partial and a final kernel with post applied once per row', () => {
    const src = reductionSource(l2, new Map([['T', 'f32']]));
    expect(src).toContain(
      'extern "C" __global__ void l2_partial(const float* __restrict__ _in_x, const float s, float* _out_y, _acc_t* _partial, const long long k, const int _final)',
    );
    expect(src).toContain(
      'extern "C" __global__ void l2_final(const _acc_t* __restrict__ _partial, const float s, float* _out_y, const int _chunks)',
    );
    expect(src.match(/y = sqrt\(a\) \* s;/g)).toHaveLength(2);
    expect(reductionParams(l2, new Map([['T', 'f32']]))).toEqual({
      partial: ['ptr', 'f32', 'ptr', 'ptr', 'i64', 'i32'],
      final: ['ptr', 'f32', 'ptr', 'i32'],
    });
    expect(() =>
      parseReduction({ inputs: 'const float x', output: 'float y, float z', map: 'x', reduce: 'a + b', identity: '0' }),
    ).toThrow(/exactly one/);
    expect(() =>
      parseReduction({ inputs: 'const float a', output: 'float y', map: 'a', reduce: 'a + b', identity: '0' }),
    ).toThrow(/reserved/);
  });
  it('splits rows into chunks to fill the device, one pass for small rows', () => {
    expect(reductionGeometry(1, 1000, 132).chunks).toBe(1);
    expect(reductionGeometry(1, 1 << 26, 132).chunks).toBe(528);
    expect(reductionGeometry(10_000, 1 << 20, 132).chunks).toBe(1);
    expect(reductionGeometry(1, 2 ** 40, 100_000).chunks).toBe(MAX_CHUNKS);
  });
});

/** nvcc here, when there is one: the generated sources are compile-checked for every dtype. */
function findNvcc(): string | undefined {
  const dirs = [
    ...(process.env.PATH ?? '').split(':'),
    ...[process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda']
      .filter((p): p is string => !!p)
      .map((p) => join(p, 'bin')),
  ];
  return dirs.map((d) => join(d, 'nvcc')).find((p) => existsSync(p));
}
const nvcc = findNvcc();

describe.runIf(nvcc)('generated sources compile with nvcc (f16, bf16, f64, u8)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-ew-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('elementwise and reduction, f16/bf16 included', async () => {
    const ew = parseElementwise({
      name: 'axpby',
      inputs: 'const T x, const T y',
      params: 'T a, T b2',
      outputs: 'T z',
      operation: 'z = a * x + b2 * y',
    });
    const r = parseReduction({
      name: 'sumsq',
      inputs: 'const T x',
      output: 'T y',
      map: 'x * x',
      reduce: 'a + b',
      identity: '0',
    });
    const sources: string[] = [];
    for (const t of ['f16', 'bf16', 'f64', 'u8'] as const) {
      sources.push(elementwiseSource(ew, new Map([['T', t]])), reductionSource(r, new Map([['T', t]])));
    }
    const files = sources.map((s, i) => {
      const f = join(dir, `k${i}.cu`);
      writeFileSync(f, s);
      return f;
    });
    await Promise.all(files.map((f) => execa(nvcc!, ['-arch=sm_80', '-std=c++17', '-c', '-o', `${f}.o`, f])));
  }, 120_000);
});
