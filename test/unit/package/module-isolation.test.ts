/**
 * Which unit files load alone (test/setup/module-isolation.ts): a file that replaces modules or
 * globals, directly or through a helper of test/, or that carries the marker; every other file
 * shares its worker's module graph. The 'unit' and 'unit-isolated' projects together hold every
 * unit file once.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isolatedTests, testFiles } from '../../setup/module-isolation.js';

const root = join(import.meta.dirname, '..', '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'tscuda-isolation-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const at = mkdtempSync(join(scratch, 'tree-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(at, path)), { recursive: true });
    writeFileSync(join(at, path), text);
  }
  return at;
}

describe('isolatedTests', () => {
  it('isolates a file that mocks, one whose helper of a helper stubs a global, and one with the marker; not a plain one', () => {
    const at = tree({
      'test/unit/a/mocks.test.ts': "import { vi } from 'vitest';\nvi.mock('../../../src/x.js');\n",
      'test/unit/a/deep.test.ts': "import { fake } from '../helpers/outer.js';\n",
      'test/unit/helpers/outer.ts': "export { fake } from './inner.js';\n",
      'test/unit/helpers/inner.ts':
        "import { vi } from 'vitest';\nexport const fake = () => vi.stubGlobal('fetch', 1);\n",
      'test/unit/a/marked.test.ts': '/** Needs the first sticky error (@vitest-isolate). */\n',
      'test/unit/a/plain.test.ts': "import { x } from '../../../src/mocking.js';\nimport '../helpers/cycle-a.js';\n",
      'test/unit/helpers/cycle-a.ts': "import './cycle-b.js';\n",
      'test/unit/helpers/cycle-b.ts': "import './cycle-a.js';\n",
      // The sources under test are not followed: only test/'s helpers can replace modules.
      'src/mocking.ts': "vi.mock('./y.js');\n",
    });
    const files = testFiles(at, 'test/unit');
    expect(files).toEqual([
      'test/unit/a/deep.test.ts',
      'test/unit/a/marked.test.ts',
      'test/unit/a/mocks.test.ts',
      'test/unit/a/plain.test.ts',
    ]);
    expect(isolatedTests(at, files)).toEqual([
      'test/unit/a/deep.test.ts',
      'test/unit/a/marked.test.ts',
      'test/unit/a/mocks.test.ts',
    ]);
  });

  it("in this tree: the fake driver's and the CPU emulation's users and the sticky-state files load alone", () => {
    const isolated = isolatedTests(root, testFiles(root, 'test/unit'));
    expect(isolated).toEqual(
      expect.arrayContaining([
        'test/unit/runtime/peer.test.ts', // the fake driver (vi.mock)
        'test/unit/signal/orchestration-emulated-frame-runs.test.ts', // the CPU emulation's runtime
        'test/unit/ffi/checked.test.ts', // the process's first sticky error (marker)
        'test/unit/ffi/checked-calls.test.ts',
        'test/unit/runtime/lost.test.ts',
      ]),
    );
    expect(isolated).not.toContain('test/unit/server/body-refusal.test.ts');
  });
});

describe('the unit projects', () => {
  it('hold every unit file once between them', async () => {
    const { default: config } = (await import('../../../vitest.config.js')) as {
      default: { test: { projects: { test: { name: string; include: string[]; exclude?: string[] } }[] } };
    };
    const byName = new Map(config.test.projects.map((p) => [p.test.name, p.test]));
    const shared = byName.get('unit');
    const alone = byName.get('unit-isolated');
    expect(shared?.include).toEqual(['test/unit/**/*.test.ts']);
    const isolated = isolatedTests(root, testFiles(root, 'test/unit'));
    expect(alone?.include).toEqual(isolated);
    // The shared project leaves out the isolated files and what the other leaves out (npm test's quick scope), nothing more.
    const unitFiles = (list: string[] | undefined): string[] => (list ?? []).filter((f) => f.startsWith('test/unit/'));
    expect(new Set(unitFiles(shared?.exclude))).toEqual(new Set([...isolated, ...unitFiles(alone?.exclude)]));
  });
});
