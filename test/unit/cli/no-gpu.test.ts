import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');

/**
 * With no GPU visible (CUDA_VISIBLE_DEVICES empty: no device on a GPU host, and no driver at all
 * on CI), the GPU commands print one line and exit 1: no stack trace.
 */
describe('GPU commands without a GPU', () => {
  it('tscuda demo says so in one line and exits 1', async () => {
    const r = await execa(
      'node',
      [
        join(root, 'bin', 'tscuda.js'),
        'demo',
        '--seconds',
        '0.2',
        '--out',
        join(root, 'node_modules', '.tscuda-no-gpu-demo'),
      ],
      {
        reject: false,
        cwd: root,
        env: { CUDA_VISIBLE_DEVICES: '' },
        timeout: 30_000,
      },
    );
    expect(r.exitCode).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^tscuda demo: (no NVIDIA driver|no CUDA device is visible|the NVIDIA driver sees no CUDA device|the NVIDIA driver found no CUDA-capable device)/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
