import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAll, checkBenchImports, checkDeviceLoaded, checkLayers, importsOf } from '../../../tools/layers.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('the layer rule of docs/design.md', () => {
  it('holds for src/: no upward import, no import of tests or benchmarks, no cycle (type-only imports included)', () => {
    expect(checkLayers(root).map((v) => v.message)).toEqual([]);
  });

  it('holds for the whole tree: bench/ on entry points, Device loaded wherever placements are resolved', () => {
    // File lengths have their own test, with its allowance: test/unit/tools/file-sizes.test.ts.
    expect(
      checkAll(root)
        .filter((v) => v.rule !== 'length')
        .map((v) => v.message),
    ).toEqual([]);
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
        'src/engine/x.ts': 'export type X = number;',
      });
      const v = checkLayers(base);
      expect(v).toHaveLength(1);
      expect(v[0]!.rule).toBe('layer');
      expect(v[0]!.message).toMatch(/src\/runtime\/a\.ts \(runtime\) imports src\/engine\/x\.ts \(engine\)/);
    });

    it('a value cycle', () => {
      const cyclic = tree('cycle', {
        'src/runtime/a.ts': "import { b } from './b.js';\nexport const a = () => b;",
        'src/runtime/b.ts': "import { a } from './a.js';\nexport const b = () => a;",
      });
      expect(checkLayers(cyclic).map((v) => v.rule)).toEqual(['cycle']);
    });

    it('a cycle made only of type-only imports, in both spellings', () => {
      const typesOnly = tree('types', {
        'src/runtime/a.ts': "import type { B } from './b.js';\nexport interface A { b: B }",
        'src/runtime/b.ts': "import { type A } from './a.js';\nexport interface B { a: A }",
      });
      const v = checkLayers(typesOnly);
      expect(v.map((x) => x.rule)).toEqual(['cycle']);
      expect(v[0]!.message).toMatch(/src\/runtime\/a\.ts/);
      expect(v[0]!.message).toMatch(/src\/runtime\/b\.ts/);
    });

    it('a cycle closed by a re-export of types or by a module augmentation', () => {
      const reexport = tree('reexport', {
        'src/signal/a.ts': "export type { B } from './b.js';\nexport type A = number;",
        'src/signal/b.ts': "import type { A } from './a.js';\nexport type B = A[];",
      });
      expect(checkLayers(reexport).map((v) => v.rule)).toEqual(['cycle']);
      const augmented = tree('augmented', {
        'src/runtime/types.ts': "import type { C } from './c.js';\nexport interface T { c?: C }",
        'src/runtime/c.ts': "export class C {}\ndeclare module './types.js' {\n  interface T { more?: number }\n}",
      });
      expect(checkLayers(augmented).map((v) => v.rule)).toEqual(['cycle']);
    });

    it('no cycle where the lower file names the other through a types file', () => {
      const base = tree('typesfile', {
        'src/runtime/types.ts': 'export interface Device {}',
        'src/runtime/device.ts':
          "import { Context } from './context.js';\nexport class Device { context = new Context(this); }\ntype I = Device;\ndeclare module './types.js' {\n  interface Device extends I {}\n}",
        'src/runtime/context.ts':
          "import type { Device } from './types.js';\nexport class Context { constructor(readonly device: Device) {} }",
      });
      expect(checkLayers(base)).toEqual([]);
    });

    it('a benchmark importing a private module without saying why', () => {
      const base = tree('bench', {
        'src/runtime/index.ts': "export { Stream } from './stream.js';",
        'src/runtime/stream.ts': 'export class Stream {}',
        'src/index.ts': "export * from './runtime/index.js';",
        'bench/ok.ts':
          "import { Stream } from '../src/runtime/index.js';\nimport * as root from '../src/index.js';\nexport const s = [Stream, root];",
        'bench/marked.ts':
          "import { Stream } from '../src/runtime/stream.js'; // private-path: the class alone\n// private-path: a dynamic import, marked on the line above\nconst m = await import('../src/runtime/stream.js');\nexport const s = [Stream, m];",
        'bench/deep.ts': "import {\n  Stream,\n} from '../src/runtime/stream.js';\nexport const s = Stream;",
      });
      const v = checkBenchImports(base);
      expect(v.map((x) => x.rule)).toEqual(['bench-import']);
      expect(v[0]!.message).toMatch(/^bench\/deep\.ts:3 imports src\/runtime\/stream\.ts: import an entry point/);
    });

    it('a program that resolves placements without loading the Device class', () => {
      const base = tree('device-load', {
        'src/runtime/defaults.ts': "import type { Device } from './types.js';\nexport const d: Device[] = [];",
        'src/runtime/types.ts': 'export interface Device {}',
        'src/runtime/stream.ts': "import { d } from './defaults.js';\nexport class Stream { d = d; }",
        'src/runtime/device.ts': "import { Stream } from './stream.js';\nexport class Device { s = Stream; }",
        'src/runtime/index.ts': "export * from './device.js';\nexport * from './stream.js';",
        'test/gpu/only-stream.test.ts':
          "import { Stream } from '../../src/runtime/stream.js';\nexport const s = Stream;",
        'test/gpu/with-device.test.ts':
          "import { Stream } from '../../src/runtime/stream.js';\nimport '../../src/runtime/device.js';\nexport const s = Stream;",
        'test/gpu/types-only.test.ts':
          "import type { Stream } from '../../src/runtime/stream.js';\nexport let t: import('../../src/runtime/stream.js').Stream | undefined;\nexport type T = Stream;",
        'bench/lazy.ts': "export const load = async () => (await import('../src/runtime/stream.js')).Stream;",
      });
      expect(
        checkDeviceLoaded(base)
          .map((v) => v.message.split(' ')[0])
          .sort(),
      ).toEqual(['src/runtime/stream.ts', 'test/gpu/only-stream.test.ts']);
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
      declare module './h.js' {}
    `);
    expect(refs).toEqual([
      { spec: './a.js', typeOnly: false },
      { spec: '../b.js', typeOnly: true },
      { spec: './c.js', typeOnly: false },
      { spec: './d.js', typeOnly: true },
      { spec: './g.js', typeOnly: false, dynamic: true },
      { spec: './h.js', typeOnly: true },
    ]);
  });
});
