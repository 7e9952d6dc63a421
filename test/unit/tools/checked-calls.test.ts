import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCheckedCalls } from '../../../tools/checked-calls.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('the checked-call rule of docs/design.md (Errors)', () => {
  it('holds for src/: above src/ffi/, CUDA libraries are called and their statuses made errors only through the checked layer', () => {
    expect(checkCheckedCalls(root).map((v) => v.message)).toEqual([]);
  });

  describe('catches', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tscuda-checked-calls-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    let trees = 0;
    /** A tree with src/ffi/ stubs and the given file at src/runtime/x.ts. */
    const check = (source: string): string[] => {
      const base = join(dir, `t${trees++}`);
      const files: Record<string, string> = {
        'src/ffi/api.ts': 'export const driver = () => ({});',
        'src/ffi/checked.ts': 'export const cu = () => ({});',
        'src/ffi/errors.ts': 'export class CudaError extends Error {}',
        'src/ffi/generated/driver.ts': 'export interface DriverFunctions {}',
        'src/ffi/generated/types.ts': 'export const CUresult = {};',
        'src/runtime/x.ts': source,
      };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(base, path)), { recursive: true });
        writeFileSync(join(base, path), text);
      }
      return checkCheckedCalls(base).map((v) => v.message);
    };

    it('a raw binding imported, under its own name or another', () => {
      expect(check("import { driver } from '../ffi/api.js';")).toEqual([
        expect.stringMatching(/^src\/runtime\/x\.ts:1 imports the raw binding driver from src\/ffi\/api\.ts/),
      ]);
      expect(check("import { cu, driver as raw } from '../ffi/api.js';")).toHaveLength(1);
    });

    it('a generated library module, even for its types', () => {
      expect(check("import type { DriverFunctions } from '../ffi/generated/driver.js';")).toEqual([
        expect.stringMatching(
          /imports src\/ffi\/generated\/driver\.ts: a generated library module is the raw bindings/,
        ),
      ]);
    });

    it('a namespace of a module that exports raw bindings', () => {
      expect(check("import * as ffi from '../ffi/api.js';")).toEqual([expect.stringMatching(/as a namespace/)]);
    });

    it('a CudaError made from a status outside the checked layer, on its own line', () => {
      expect(
        check(
          "import { CudaError } from '../ffi/errors.js';\n\nexport const e = (s: number) => new CudaError('driver', s, 'cuX');",
        ),
      ).toEqual([
        expect.stringMatching(
          /^src\/runtime\/x\.ts:3 constructs a CudaError: a status becomes an error only through statusError/,
        ),
      ]);
    });
  });

  describe('lets through', () => {
    it('the checked forms, the enums and types of generated/types.js, type-only imports and words in comments', () => {
      const dir = mkdtempSync(join(tmpdir(), 'tscuda-checked-calls-ok-'));
      try {
        const files: Record<string, string> = {
          'src/ffi/api.ts': 'export const driver = () => ({}); export type Raw = number;',
          'src/ffi/checked.ts': "import { driver } from './api.js';\nexport const cu = driver;",
          'src/ffi/generated/types.ts': 'export const CUresult = {};',
          'src/runtime/x.ts': [
            "import { cu } from '../ffi/checked.js';",
            "import { CUresult } from '../ffi/generated/types.js';",
            "import type { Raw } from '../ffi/api.js';",
            "import { type driver } from '../ffi/api.js';",
            '// never `new CudaError(...)` here: cu() throws it',
            'export const x = [cu, CUresult];',
          ].join('\n'),
        };
        for (const [path, text] of Object.entries(files)) {
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          writeFileSync(join(dir, path), text);
        }
        expect(checkCheckedCalls(dir)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
