/**
 * The length rule of CONTRIBUTING.md: no hand-written source file over MAX_LINES lines, in any folder
 * that holds code (src, bench, test, scripts, tools, codegen, quality, examples). A file that grows past
 * the limit is split by concept in the same change, never squeezed: the formatter's printWidth (at most
 * MAX_PRINT_WIDTH, .prettierrc.json) keeps a line count honest.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** The most lines a hand-written source file may have: one concept per file (CONTRIBUTING.md). */
export const MAX_LINES = 400;

/** The widest line .prettierrc.json may ask for; wider lines would let a file hold more than MAX_LINES says. */
export const MAX_PRINT_WIDTH = 120;

/** The folders of hand-written code the length rule covers. */
export const CODE_FOLDERS: readonly string[] = [
  'src',
  'bench',
  'test',
  'scripts',
  'tools',
  'codegen',
  'quality',
  'examples',
];

/** One file over the limit, as a sentence naming it. */
export interface LengthViolation {
  rule: 'length';
  /** The file, relative to the root, with forward slashes. */
  file: string;
  lines: number;
  message: string;
}

/** Generated code is exempt: it is emitted whole and checked against its generator. */
export function isGenerated(rel: string): boolean {
  return rel.endsWith('.generated.ts') || rel.includes('/generated/');
}

/** .ts and .mjs sources under `dir` (declaration files and installed packages aside). */
function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listSources(p));
    else if ((name.endsWith('.ts') && !name.endsWith('.d.ts')) || name.endsWith('.mjs')) out.push(p);
  }
  return out;
}

/** Lines of a text as an editor counts them (a final newline ends the last line, it does not start one). */
export function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/**
 * Hand-written .ts and .mjs files under `root`'s code folders longer than `limit` lines (generated code
 * and .cu sources aside). There is no allow-list here: a file that grows past the limit is split by
 * concept in the same change.
 */
export function checkFileLengths(
  root: string,
  limit = MAX_LINES,
  folders: readonly string[] = CODE_FOLDERS,
): LengthViolation[] {
  const out: LengthViolation[] = [];
  for (const folder of folders) {
    const dir = join(root, folder);
    if (!existsSync(dir)) continue;
    for (const path of listSources(dir)) {
      const file = relative(root, path).split(sep).join('/');
      if (isGenerated(file)) continue;
      const lines = lineCount(readFileSync(path, 'utf8'));
      if (lines > limit)
        out.push({
          rule: 'length',
          file,
          lines,
          message: `${file} has ${lines} lines (at most ${limit}): split it by concept`,
        });
    }
  }
  return out;
}

/** The printWidth `root`/.prettierrc.json sets (prettier's default, 80, where it sets none). */
export function printWidth(root: string): number {
  const config = JSON.parse(readFileSync(join(root, '.prettierrc.json'), 'utf8')) as { printWidth?: unknown };
  const width = config.printWidth ?? 80;
  if (typeof width !== 'number')
    throw new TypeError(`.prettierrc.json: printWidth must be a number, got ${String(width)}`);
  return width;
}
