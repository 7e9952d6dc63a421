/** Every example runs with what a user of the package has: tscuda, its own dependencies and Node's modules. */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

/** The files of examples/, subfolders included. */
function exampleFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? exampleFiles(join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`). */
const packageOf = (specifier: string): string =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

describe('examples', { timeout: 10_000 }, () => {
  it('import nothing beyond tscuda, its dependencies and node: modules (no devDependency)', () => {
    const files = exampleFiles(join(root, 'examples'));
    expect(files.length).toBeGreaterThanOrEqual(9);
    const foreign: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(
        /(?:^|\n)\s*import\s[^'"]*?from\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
      )) {
        const specifier = (m[1] ?? m[2])!;
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
        const name = packageOf(specifier);
        if (name !== 'tscuda' && !(name in pkg.dependencies))
          foreign.push(`${file.slice(root.length + 1)}: ${specifier}`);
      }
    }
    expect(foreign).toEqual([]);
  });
});
