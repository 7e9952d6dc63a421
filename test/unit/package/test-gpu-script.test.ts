import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';

const root = join(import.meta.dirname, '..', '..', '..');

// On a GPU host the script would run the GPU suite itself; there it is exercised by hand.
describe.skipIf(isLibraryAvailable('driver'))(
  'npm run test:gpu without a GPU (skipped where a driver is present)',
  () => {
    it('prints one line naming what is missing and exits 1, before vitest starts', async () => {
      const r = await execa('node', [join(root, 'scripts', 'test-gpu.mjs')], { cwd: root, reject: false });
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toEqual([
        'npm run test:gpu needs a GPU: no CUDA driver (libcuda.so.1 not found)',
      ]);
    });
  },
);
