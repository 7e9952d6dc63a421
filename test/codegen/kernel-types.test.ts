import { join } from 'node:path';
import { Project } from 'ts-morph';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const ARGUMENT_TYPE = 2345; // Argument of type X is not assignable to parameter of type Y.
const ARGUMENT_COUNT = 2554; // Expected N arguments, but got M.

describe('kernels typed from their parameter list', () => {
  const project = new Project({ tsConfigFilePath: join(root, 'tsconfig.json'), skipAddingFilesFromTsConfig: true });
  const check = (body: string): number[] => {
    const file = project.createSourceFile(
      join(root, 'test/codegen/__kernel_probe.ts'),
      `import { Program, type DeviceBuffer } from '../../src/index.js';
       declare const dx: DeviceBuffer<'f32'>; declare const dy: DeviceBuffer<'f32'>; declare const n: number;
       const program = new Program({ source: 'extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {}' });
       const saxpy = program.kernel('saxpy', ['i32', 'f32', 'ptr', 'ptr']);
       const cfg = { grid: 1, block: 256 };
       ${body}`,
      { overwrite: true },
    );
    return file.getPreEmitDiagnostics().map((d) => d.getCode());
  };

  it("accepts the README's saxpy launch", () => {
    expect(check('saxpy.launch(cfg, n, 2.0, dx, dy);')).toEqual([]);
  });

  it('makes swapped or missing arguments a tsc error', () => {
    expect(check('saxpy.launch(cfg, dx, 2.0, n, dy);')).toContain(ARGUMENT_TYPE);
    expect(check('saxpy.launch(cfg, n, dx, 2.0, dy);')).toContain(ARGUMENT_TYPE);
    expect(check('saxpy.launch(cfg, n, 2.0, dx);')).toContain(ARGUMENT_COUNT);
    expect(check('saxpy.launch(cfg, 10n, 2.0, dx, dy);')).toContain(ARGUMENT_TYPE);
  });
});
