import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Project } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { emitLaunchers, mapParam, parseKernels } from '../../codegen/kernels/launchers.js';

const root = join(import.meta.dirname, '..', '..');

describe('typed kernel launchers', () => {
  it('reproduces the committed launchers from kernels/*.cu', () => {
    const { text, kernels } = emitLaunchers(join(root, 'kernels'));
    expect(kernels).toBeGreaterThanOrEqual(16);
    expect(text).toBe(readFileSync(join(root, 'src/runtime/kernels/launchers.generated.ts'), 'utf8'));
  });

  it('maps C parameter types to buffer dtypes, numbers and bigints', () => {
    expect(mapParam('const float* __restrict__ x', 'k').mapping).toEqual({ param: 'ptr', ts: "DeviceBuffer<'f32'>" });
    expect(mapParam('double *y', 'k').mapping.ts).toBe("DeviceBuffer<'f64'>");
    expect(mapParam('unsigned char* bytes', 'k').mapping.ts).toBe("DeviceBuffer<'u8'>");
    expect(mapParam('cuDoubleComplex* z', 'k').mapping.ts).toBe("DeviceBuffer<'c128'>");
    expect(mapParam('void* any', 'k').mapping.ts).toBe('DeviceBuffer<DType>');
    expect(mapParam('int n', 'k').mapping).toEqual({ param: 'i32', ts: 'number' });
    expect(mapParam('unsigned int n', 'k').mapping).toEqual({ param: 'u32', ts: 'number' });
    expect(mapParam('float a', 'k').mapping).toEqual({ param: 'f32', ts: 'number' });
    expect(mapParam('long long offset', 'k').mapping).toEqual({ param: 'i64', ts: 'bigint' });
    expect(mapParam('size_t bytes', 'k').mapping).toEqual({ param: 'u64', ts: 'bigint' });
    expect(() => mapParam('struct Foo* f', 'weird')).toThrow(/kernel weird: no launcher type for parameter f/);
  });

  it('parses multi-line signatures and ignores commented-out kernels', () => {
    const sigs = parseKernels(`
      // extern "C" __global__ void hidden(int n) {}
      extern "C" __global__ void two(
        const float* __restrict__ x,
        int n) {}
      extern "C" __global__ void none() {}`);
    expect(sigs.map((s) => s.name)).toEqual(['two', 'none']);
    expect(sigs[0]!.params.map((p) => p.mapping.param)).toEqual(['ptr', 'i32']);
  });

  it('makes a mismatched launch a tsc error', () => {
    const project = new Project({ tsConfigFilePath: join(root, 'tsconfig.json'), skipAddingFilesFromTsConfig: true });
    project.addSourceFilesAtPaths(join(root, 'src/runtime/kernels/*.ts'));
    const check = (body: string): string[] => {
      const file = project.createSourceFile(
        join(root, 'test/codegen/__launcher_probe.ts'),
        `import type { BasicKernels } from '../../src/runtime/kernels/index.js';
         import type { DeviceBuffer } from '../../src/runtime/device-buffer.js';
         declare const k: BasicKernels; declare const f32: DeviceBuffer<'f32'>; declare const f64: DeviceBuffer<'f64'>; declare const i32: DeviceBuffer<'i32'>;
         const cfg = { grid: 1, block: 32 };
         ${body}`,
        { overwrite: true },
      );
      return file.getPreEmitDiagnostics().map((d) => String(d.getMessageText()));
    };
    expect(check('k.saxpy_f32(cfg, 10, 2, f32, f32); k.saxpy_f64(cfg, 10, 2, f64, f64); k.oob_write(cfg, f32, 5n); k.write_index_i32(cfg, i32, 3);')).toEqual([]);
    expect(check('k.saxpy_f32(cfg, 10, 2, f64, f32);').length).toBeGreaterThan(0);
    expect(check('k.oob_write(cfg, f32, 5);').length).toBeGreaterThan(0);
    expect(check('k.saxpy_f32(cfg, f32, 2, f32, f32);').length).toBeGreaterThan(0);
    expect(check('k.saxpy_f32(cfg, 10, 2, f32);').length).toBeGreaterThan(0);
    expect(check('k.write_index_i32(cfg, f32, 3);').length).toBeGreaterThan(0);
  });
});
