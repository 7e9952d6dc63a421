import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

describe.skipIf(!gpu.available)(`sticky errors${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  it('an out-of-bounds kernel rejects every pending done() with CUDA_ERROR_ILLEGAL_ADDRESS, fast, and nothing hangs', async () => {
    const { stdout } = await execa('node', ['--import', 'tsx', join(ROOT, 'test/gpu/fixtures/sticky-error.ts')], {
      cwd: ROOT,
      timeout: 60_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as {
      errors: { name?: string; sticky?: boolean; isCudaError?: boolean; resolved?: boolean }[];
      firstMs: number;
      lastMs: number;
      later: string;
    };
    const rejected = result.errors.filter((e) => !e.resolved);
    expect(rejected.length).toBe(4);
    for (const e of rejected)
      expect(e).toEqual({ name: 'CUDA_ERROR_ILLEGAL_ADDRESS', sticky: true, isCudaError: true });
    expect(result.later).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    // 2-second kernels were pending on other streams: they fail with the fault instead of being waited out.
    expect(result.lastMs).toBeLessThan(1000);
    expect(result.lastMs - result.firstMs).toBeLessThan(100);
    console.log(
      `sticky error: ${rejected.length} pending completions rejected, first ${result.firstMs.toFixed(1)} ms and last ${result.lastMs.toFixed(1)} ms after the faulting launch`,
    );
  }, 90_000);
});
