import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkFileLengths, MAX_LINES, MAX_PRINT_WIDTH, printWidth } from '../../../tools/file-sizes.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('honest sizes', () => {
  const over = checkFileLengths(root);

  it(`no hand-written .ts/.mjs file of the code folders has more than ${MAX_LINES} lines`, () => {
    expect(over.map((v) => v.message)).toEqual([]);
  });

  it(`.prettierrc.json keeps printWidth at most ${MAX_PRINT_WIDTH}, so a line count means what it says`, () => {
    expect(printWidth(root)).toBeLessThanOrEqual(MAX_PRINT_WIDTH);
  });
});

describe('the length check catches', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-sizes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const tree = (name: string, files: Record<string, string>): string => {
    const base = join(dir, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(base, path)), { recursive: true });
      writeFileSync(join(base, path), text);
    }
    return base;
  };
  const lines = (n: number): string =>
    Array.from({ length: n }, (_, i) => `export const a${i} = ${i};`).join('\n') + '\n';

  it('a hand-written file over the limit in any code folder, .ts or .mjs, but not generated code', () => {
    const base = tree('length', {
      'src/runtime/long.ts': lines(MAX_LINES + 1),
      'src/runtime/exact.ts': lines(MAX_LINES),
      'test/unit/long.test.ts': lines(MAX_LINES + 1),
      'quality/long.mjs': lines(MAX_LINES + 1),
      'bench/exact.ts': lines(MAX_LINES).trimEnd(),
      'src/kernels/launchers.generated.ts': lines(MAX_LINES + 1),
      'src/ffi/generated/api.ts': lines(MAX_LINES + 1),
      'scripts/docs/node_modules/dep/index.mjs': lines(MAX_LINES + 1),
      'src/runtime/types.d.ts': lines(MAX_LINES + 1),
      'docs/long.ts': lines(MAX_LINES + 1),
    });
    const v = checkFileLengths(base);
    expect(v.map((x) => x.file).sort()).toEqual(['quality/long.mjs', 'src/runtime/long.ts', 'test/unit/long.test.ts']);
    expect(v.find((x) => x.file === 'src/runtime/long.ts')!.message).toBe(
      `src/runtime/long.ts has ${MAX_LINES + 1} lines (at most ${MAX_LINES}): split it by concept`,
    );
  });

  it('a printWidth over the limit, and prettier’s default where none is set', () => {
    expect(printWidth(tree('wide', { '.prettierrc.json': '{ "printWidth": 180 }' }))).toBe(180);
    expect(printWidth(tree('default', { '.prettierrc.json': '{ "singleQuote": true }' }))).toBe(80);
    expect(() => printWidth(tree('bad', { '.prettierrc.json': '{ "printWidth": "wide" }' }))).toThrow(/printWidth/);
  });
});
