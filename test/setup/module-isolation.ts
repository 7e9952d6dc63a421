/**
 * Which test files need a module graph of their own. Most unit files share one per worker
 * (vitest's `isolate: false`): loading the sources anew for each of ~200 files was most of
 * `npm test`'s time on 2 cores. A file must still load alone when it, or a helper of test/ it
 * imports (transitively), replaces modules or globals (`vi.mock`, `vi.doMock`, `vi.stubGlobal`,
 * `vi.stubEnv`, `vi.resetModules`), or when it says so with the marker `@vitest-isolate` (a file
 * that needs the process's first of something, for example the first sticky CUDA error).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const REPLACES_MODULES = /\bvi\.(mock|doMock|unmock|stubGlobal|stubEnv|resetModules)\(|@vitest-isolate\b/;
/** Relative imports and re-exports (static and dynamic) of a test file or helper. */
const RELATIVE_IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every `*.test.ts` under `dir`, as paths relative to `root` with forward slashes. */
export function testFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(relative(root, path).split('\\').join('/'));
    }
  };
  walk(join(root, dir));
  return found.sort();
}

/** The file a relative import names: `./x.js` is `./x.ts` in the sources. */
function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')])
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  return undefined;
}

/**
 * The files of `files` (relative to `root`) that need a module graph of their own: only test
 * helpers under `testRoot` are followed, since the sources under test never replace modules.
 */
export function isolatedTests(root: string, files: readonly string[], testRoot = join(root, 'test')): string[] {
  const verdicts = new Map<string, boolean>();
  const replaces = (file: string, seen: Set<string>): boolean => {
    const known = verdicts.get(file);
    if (known !== undefined) return known;
    if (seen.has(file)) return false; // an import cycle: decided where it started
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    let verdict = REPLACES_MODULES.test(text);
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      if (verdict) break;
      const target = resolveImport(file, match[1] ?? '');
      if (target !== undefined && target.startsWith(testRoot)) verdict = replaces(target, seen);
    }
    verdicts.set(file, verdict);
    return verdict;
  };
  return files.filter((file) => replaces(join(root, file), new Set()));
}
