/**
 * The TypeScript blocks of the documentation as a project tsc can check: every ```ts or
 * ```typescript block of README.md and docs/**\/*.md becomes one module of a temporary project in
 * which `tscuda` and `tscuda/<subpath>` resolve to the package's source entry points, and tsc's
 * diagnostics map back to the Markdown file and line. A block opened with ```ts nocheck is prose
 * that looks like code (a signature, a fragment) and is left out.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One TypeScript block: where it is and its text. */
export interface Snippet {
  /** The Markdown file, relative to the repository root. */
  file: string;
  /** The line of the block's first code line (1-based). */
  line: number;
  code: string;
}

/** A tsc diagnostic, placed in the Markdown. */
export interface SnippetError {
  /** `README.md:42:7` */
  where: string;
  message: string;
}

const FENCE = /^```(ts|typescript)(\s+[^`]*)?$/;

/** The checked blocks of one Markdown text. */
export function extractSnippets(markdown: string, file: string): Snippet[] {
  const lines = markdown.split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!.trim());
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (end < 0) throw new Error(`${file}:${i + 1}: a \`\`\`${open[1]} block is never closed`);
    if (!/\bnocheck\b/.test(open[2] ?? '')) out.push({ file, line: i + 2, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return out;
}

/** README.md and every Markdown file under docs/ (the generated API reference aside): the list the numbers check reads too. */
export { documentFiles as documentationFiles } from '../../../scripts/docs-numbers/generate.js';

/** The entry point each package subpath resolves to in the source tree (`tscuda/engine` -> src/engine/index.ts). */
export function subpathSources(root: string): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  const out: Record<string, string> = {};
  for (const key of Object.keys(pkg.exports)) {
    if (!key.startsWith('.') || key === './package.json') continue;
    const name = key === '.' ? 'tscuda' : `tscuda/${key.slice(2)}`;
    out[name] = join(root, 'src', key === '.' ? 'index.ts' : join(key.slice(2), 'index.ts'));
  }
  return out;
}

/**
 * Writes the snippets into `dir` as snippet-<i>.ts with a strict tsconfig whose paths resolve the
 * package's subpaths to `sources`; returns how to map tsc's output back.
 */
export function writeSnippetProject(
  root: string,
  dir: string,
  snippets: readonly Snippet[],
  sources: Record<string, string>,
): void {
  snippets.forEach((s, i) => writeFileSync(join(dir, `snippet-${i}.ts`), `${s.code}\nexport {};\n`));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const paths = Object.fromEntries(Object.entries(sources).map(([name, file]) => [name, [file]]));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023', 'ESNext.Disposable'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
          paths,
        },
        include: ['snippet-*.ts'],
      },
      null,
      2,
    ),
  );
}

/** tsc's `snippet-3.ts(5,10): error TS2305: ...` lines, placed at their Markdown file and line. */
export function mapDiagnostics(output: string, snippets: readonly Snippet[]): SnippetError[] {
  const errors: SnippetError[] = [];
  for (const line of output.split('\n')) {
    const m = /(?:^|[\\/])snippet-(\d+)\.ts\((\d+),(\d+)\): (error .*)$/.exec(line.trim());
    if (m) {
      const s = snippets[Number(m[1])]!;
      errors.push({ where: `${s.file}:${s.line + Number(m[2]) - 1}:${m[3]}`, message: m[4]! });
    } else if (/error TS\d+/.test(line)) errors.push({ where: line.split('(')[0] ?? 'tsc', message: line.trim() });
  }
  return errors;
}

/** The import specifiers of a snippet (`from 'x'` and `import('x')`). */
export function importedModules(code: string): string[] {
  return [...code.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!);
}
