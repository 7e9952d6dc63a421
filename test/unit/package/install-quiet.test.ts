/**
 * `npm install` in a clone prints nothing a user cannot act on: every dependency with an install
 * script has its decision recorded in package.json's allowScripts (npm 11 lists the others), and
 * the engines field names the supported Node lines (so cookie 2's Node 22 needs no override).
 */
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
  overrides?: unknown;
  allowScripts?: Record<string, boolean>;
};
const npmMajor = Number((await execa('npm', ['--version'], { cwd: root })).stdout.split('.')[0]);

describe('a quiet install', { timeout: 60_000 }, () => {
  it.runIf(npmMajor >= 11)(
    `every install script installed has its decision in allowScripts${npmMajor >= 11 ? '' : ' (skipped: npm < 11 runs install scripts without asking)'}`,
    async () => {
      const r = await execa('npm', ['install-scripts', 'ls'], { cwd: root, reject: false });
      expect(`${r.stdout}${r.stderr}`.trim()).toBe('No packages with unreviewed install scripts.');
    },
  );

  it('declares the supported Node lines and needs no override (overrides never reach consumers)', () => {
    expect(pkg.engines.node).toBe('>=22.12');
    expect(pkg.overrides).toBeUndefined();
    expect(pkg.allowScripts).toMatchObject({ koffi: false, 'msgpackr-extract': false });
  });
});
