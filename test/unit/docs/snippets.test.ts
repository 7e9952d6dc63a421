/**
 * Every TypeScript block of README.md and docs/ compiles, strictly, against the package's public
 * entry points (one tsc run over all of them); a block naming an export that does not exist fails
 * with its Markdown file and line. Also: snippets import only documented entry points, and the
 * API reference (typedoc) covers every one of them.
 */
import { execa } from 'execa';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  documentationFiles,
  extractSnippets,
  importedModules,
  mapDiagnostics,
  subpathSources,
  writeSnippetProject,
  type Snippet,
} from './snippets.js';

const root = join(import.meta.dirname, '..', '..', '..');
const work = mkdtempSync(join(tmpdir(), 'tscuda-snippets-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const files = documentationFiles(root);
const snippets = files.flatMap((f) => extractSnippets(readFileSync(join(root, f), 'utf8'), f));
const sources = subpathSources(root);

// A block that must fail, checked in the same tsc run: proof that a wrong export is caught and placed.
const PROBE: Snippet = {
  file: 'probe.md',
  line: 10,
  code: "import { Device } from 'tscuda';\nimport { NoSuchExport } from 'tscuda/engine';\nvoid Device;\nvoid NoSuchExport;",
};

describe('documentation snippets', () => {
  it('README.md and the guides have TypeScript blocks to check', () => {
    expect(files).toContain('README.md');
    expect(snippets.filter((s) => s.file === 'README.md').length).toBeGreaterThanOrEqual(2);
    expect(new Set(snippets.map((s) => s.file)).size).toBeGreaterThanOrEqual(4);
  });

  it('import only the documented entry points (tscuda, tscuda/<subpath> of package.json, node: modules)', () => {
    const bad = snippets.flatMap((s) =>
      importedModules(s.code)
        .filter((m) => !(m in sources) && !m.startsWith('node:'))
        .map((m) => `${s.file}:${s.line}: imports "${m}"`),
    );
    expect(bad).toEqual([]);
  });

  it(
    'type-check strictly against the source entry points; errors name the Markdown file and line',
    { timeout: 180_000 },
    async () => {
      const all = [...snippets, PROBE];
      writeSnippetProject(root, work, all, sources);
      const tsc = join(root, 'node_modules', '.bin', 'tsc');
      const r = await execa(tsc, ['-p', join(work, 'tsconfig.json'), '--pretty', 'false'], {
        reject: false,
        cwd: work,
      });
      const errors = mapDiagnostics(`${r.stdout}\n${r.stderr}`, all);
      const probe = errors.filter((e) => e.where.startsWith('probe.md'));
      expect(probe.map((e) => e.where)).toEqual(['probe.md:11:10']);
      expect(probe[0]!.message).toMatch(/TS2305: Module '"tscuda\/engine"' has no exported member 'NoSuchExport'/);
      expect(errors.filter((e) => !e.where.startsWith('probe.md')).map((e) => `${e.where} ${e.message}`)).toEqual([]);
    },
  );
});

describe('the API reference', () => {
  it('typedoc documents every entry point of package.json', () => {
    const typedoc = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    const entries = new Set(typedoc.entryPoints.map((p) => join(root, p)));
    const missing = Object.entries(sources)
      .filter(([, file]) => !entries.has(file))
      .map(([name]) => name);
    expect(missing).toEqual([]);
    for (const p of typedoc.entryPoints)
      if (!p.startsWith('src/queue/')) expect(existsSync(join(root, p)), p).toBe(true);
  });

  it('the README names every entry point', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const name of Object.keys(sources)) expect(readme, name).toContain(`\`${name}\``);
  });
});
