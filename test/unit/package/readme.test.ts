import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) return e === 'generated' ? [] : sourceFiles(p);
    return /\.(ts|js|mjs)$/.test(e) ? [p] : [];
  });
}

describe('README', () => {
  it("shows examples/saxpy.ts verbatim as its example (importing from 'tscuda')", () => {
    const example = readFileSync(join(root, 'examples', 'saxpy.ts'), 'utf8').replace("from '../src/index.js'", "from 'tscuda'");
    const block = /`examples\/saxpy\.ts`:\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(example);
  });
  it('documents every environment variable the package reads', () => {
    const names = new Set<string>();
    const warningCodes = new Set<string>(); // process.emitWarning codes, not variables
    for (const file of [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'bin'))]) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/process\.env\.([A-Z_][A-Z0-9_]*)|process\.env\[['"]([A-Z_][A-Z0-9_]*)['"]\]|\b(TSCUDA_[A-Z0-9_]+)\b/g)) names.add(m[1] ?? m[2] ?? m[3]!);
      // env.X through a parameter (the library search takes its environment as an argument)
      for (const m of text.matchAll(/\benv\.([A-Z_][A-Z0-9_]*)/g)) names.add(m[1]!);
      for (const m of text.matchAll(/code: ['"](TSCUDA_[A-Z0-9_]+)['"]/g)) warningCodes.add(m[1]!);
    }
    const missing = [...names].filter((n) => !warningCodes.has(n) && !readme.includes(`\`${n}\``));
    expect(missing).toEqual([]);
  });
  it('has the sections a user looks for: engine, signal, serving, demo, several GPUs, reliability', () => {
    for (const heading of ['## The FFT job engine', '## Signal processing on the GPU', '## Serving', '## The demo', '## Several GPUs', '## Reliability'])
      expect(readme).toContain(heading);
  });
});
