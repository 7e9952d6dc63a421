/** `npm test` leaves out only the process-heavy files, and those still run in `npm run test:all`, which is what CI runs. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROCESS_HEAVY_TESTS, quickTests } from '../../setup/process-heavy.js';

const root = join(import.meta.dirname, '..', '..', '..');
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

describe('test scopes', { timeout: 10_000 }, () => {
  it('every process-heavy file named exists (a renamed file would otherwise be left out of npm test unnoticed)', () => {
    expect(PROCESS_HEAVY_TESTS.filter((f) => !existsSync(join(root, f)))).toEqual([]);
  });

  it('npm test asks for the quick scope, test:all for everything, and CI runs test:all', () => {
    expect(scripts.test).toContain("TSCUDA_TESTS=quick vitest run --project 'unit*' --project codegen --project gpu");
    expect(scripts['test:all']).toBe(scripts.test!.replace('TSCUDA_TESTS=quick ', ''));
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toMatch(/^on_line "\$NEWEST" npm run test:all$/m);
  });

  it('only TSCUDA_TESTS=quick narrows the run', () => {
    expect(quickTests({ TSCUDA_TESTS: 'quick' })).toBe(true);
    expect(quickTests({})).toBe(false);
    expect(quickTests({ TSCUDA_TESTS: 'all' })).toBe(false);
  });
});
