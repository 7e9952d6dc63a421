/**
 * Modules other parts of tscuda are still growing (graphs, the balanced pipeline): imported
 * at run time when their file exists, and used through checked duck typing, so the harness
 * type-checks and runs before and after they land. A missing or unrecognised API makes the
 * metric "not measured" with the reason, never a crash.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NotMeasured } from './types.js';

export type Fn = (...args: unknown[]) => unknown;

export function isObject(x: unknown): x is Record<string, unknown> {
  return (typeof x === 'object' || typeof x === 'function') && x !== null;
}

/** `obj[name]` when it is a function, bound to obj. */
export function method(obj: unknown, name: string): Fn | undefined {
  if (!isObject(obj)) return undefined;
  const f = obj[name];
  return typeof f === 'function' ? (...args: unknown[]) => (f as Fn).apply(obj, args) : undefined;
}

/** The module at `relative` (a .ts path from the repository root), or null when the file is not there. */
export async function importOptional(root: string, relative: string): Promise<Record<string, unknown> | null> {
  const file = join(root, relative);
  if (!existsSync(file)) return null;
  const mod: unknown = await import(pathToFileURL(file).href);
  if (!isObject(mod)) throw new NotMeasured(`${relative} did not load as a module`);
  return mod;
}

/** The module, or NotMeasured saying it is not there yet. */
export async function requireOptional(root: string, relative: string, what: string): Promise<Record<string, unknown>> {
  const mod = await importOptional(root, relative);
  if (mod === null) throw new NotMeasured(`${relative} (${what}) is not in this checkout yet`);
  return mod;
}

export function disposeUnknown(x: unknown): void {
  try {
    method(x, 'dispose')?.();
  } catch {
    /* best effort */
  }
}

/**
 * The export `symbol` from the first of `files` (repository-relative .ts paths) that exists
 * and exports it; NotMeasured naming the files otherwise.
 */
export async function findExport(root: string, symbol: string, files: readonly string[]): Promise<{ value: unknown; file: string }> {
  const present: string[] = [];
  for (const file of files) {
    const mod = await importOptional(root, file);
    if (mod === null) continue;
    present.push(file);
    if (symbol in mod && mod[symbol] !== undefined) return { value: mod[symbol], file };
  }
  throw new NotMeasured(
    present.length === 0 ? `${symbol} is not in this checkout yet (looked for ${files.join(', ')})` : `${symbol} is not exported yet (looked in ${present.join(', ')})`,
  );
}
