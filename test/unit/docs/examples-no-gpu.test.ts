/**
 * Every example, run as a user runs it (`npx tsx examples/<name>.ts`) on a machine without a GPU:
 * one line saying what is missing, a non-zero exit, no stack trace. (On a GPU host the GPU suite,
 * test/gpu/examples/, runs them for their output instead.)
 */
import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';

const root = join(import.meta.dirname, '..', '..', '..');
const TSX = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const examples = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.ts'));

describe.runIf(!isLibraryAvailable('driver'))('examples without a GPU', { timeout: 120_000 }, () => {
  it('there are examples to run', () => expect(examples.length).toBeGreaterThanOrEqual(9));
  for (const file of examples) {
    it(`${file}: one line naming what is missing, exit code non-zero, no stack trace`, async () => {
      const r = await execa('node', [TSX, join(root, 'examples', file)], {
        cwd: root,
        reject: false,
        timeout: 60_000,
        env: { TSCUDA_DEBUG: '' },
      });
      expect(r.exitCode, r.stderr).not.toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`^${file.replace(/\.ts$/, '')}: no NVIDIA driver: libcuda\\.so\\.1 was not found`),
      );
      expect(r.stderr + r.stdout).not.toMatch(/^\s+at /m);
    });
  }
});
