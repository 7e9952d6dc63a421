import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLayers, importsOf } from '../../../tools/layers.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('the layer rule of docs/design.md', () => {
  it('holds for src/: no upward import, no import of tests or benchmarks, no cycle', () => {
    expect(checkLayers(root).map((v) => v.message)).toEqual([]);
  });

  describe('catches', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tscuda-layers-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const tree = (name: string, files: Record<string, string>): string => {
      const base = join(dir, name);
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(base, path)), { recursive: true });
        writeFileSync(join(base, path), text);
      }
      return base;
    };

    it('an upward import, also a type-only one', () => {
      const base = tree('upward', {
        'src/runtime/a.ts': "import type { X } from '../engine/x.js';\nexport const a = 1;",
        'src/engine/x.ts': "import { a } from '../runtime/a.js';\nexport type X = typeof a;",
      });
      const v = checkLayers(base);
      expect(v).toHaveLength(1);
      expect(v[0]!.rule).toBe('layer');
      expect(v[0]!.message).toMatch(/src\/runtime\/a\.ts \(runtime\) imports src\/engine\/x\.ts \(engine\)/);
    });

    it('a value cycle, but not a cycle of type-only imports', () => {
      const cyclic = tree('cycle', {
        'src/runtime/a.ts': "import { b } from './b.js';\nexport const a = () => b;",
        'src/runtime/b.ts': "import { a } from './a.js';\nexport const b = () => a;",
      });
      expect(checkLayers(cyclic).map((v) => v.rule)).toEqual(['cycle']);
      const typesOnly = tree('types', {
        'src/runtime/a.ts': "import type { B } from './b.js';\nexport interface A { b: B }",
        'src/runtime/b.ts': "import { type A } from './a.js';\nexport interface B { a: A }",
      });
      expect(checkLayers(typesOnly)).toEqual([]);
    });

    it('shipped code importing tests or benchmarks, and unknown folders', () => {
      const base = tree('outside', {
        'src/runtime/a.ts': "import { k } from '../../test/kernels/k.js';\nexport const a = k;",
        'test/kernels/k.ts': 'export const k = 1;',
        'src/misc/b.ts': 'export const b = 1;',
      });
      expect(
        checkLayers(base)
          .map((v) => v.rule)
          .sort(),
      ).toEqual(['outside-src', 'unknown-folder']);
    });
  });

  it('reads imports, re-exports and dynamic imports, ignoring comments and packages', () => {
    const refs = importsOf(`
      import { a } from './a.js';
      import type { B } from '../b.js';
      export { c } from './c.js';
      export type { D } from './d.js';
      // import { e } from './e.js';
      /* import { f } from './f.js'; */
      const g = await import('./g.js');
      import koffi from 'koffi';
    `);
    expect(refs).toEqual([
      { spec: './a.js', typeOnly: false },
      { spec: '../b.js', typeOnly: true },
      { spec: './c.js', typeOnly: false },
      { spec: './d.js', typeOnly: true },
      { spec: './g.js', typeOnly: false },
    ]);
  });
});
