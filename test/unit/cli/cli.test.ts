import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLibraryAvailable } from '../../../src/ffi/index.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('tscuda info', () => {
  it.runIf(!isLibraryAvailable('driver'))('without a driver: exit code 1 and one clear line, no stack trace', async () => {
    const r = await execa('node', [join(root, 'bin', 'tscuda.js'), 'info'], { reject: false, cwd: root });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual(['tscuda: no NVIDIA driver found (libcuda.so.1); install the NVIDIA driver to use a GPU']);
  });
  it('prints usage for an unknown command and fails', async () => {
    const r = await execa('node', [join(root, 'bin', 'tscuda.js'), 'nonsense'], { reject: false, cwd: root });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('usage: tscuda');
  });
});
