import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

interface Outcome {
  label: string;
  resolved?: boolean;
  name?: string;
  status?: string;
  sticky?: boolean;
  stage?: string;
  jobStatus?: string;
}

describe.skipIf(!gpu.available)(
  `JobEngine after a sticky error${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    it('a faulting registered stage rejects every pending job with the sticky error, fast; lost rejects; the child exits normally', async () => {
      const child = await execa('node', ['--import', 'tsx', join(ROOT, 'test/gpu/engine/fixtures/engine-sticky.ts')], {
        cwd: ROOT,
        timeout: 60_000,
        reject: false,
      });
      expect(child.exitCode, child.stderr).toBe(0);
      const result = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
        warm: number;
        errors: Outcome[];
        firstMs: number;
        lastMs: number;
        lost: string;
        later: string;
        closed: string;
      };
      expect(result.warm).toBe(4 * 4096);
      expect(result.errors).toHaveLength(12);
      for (const e of result.errors) {
        expect(e.resolved, `${e.label} must not have finished`).toBeUndefined();
        expect(e).toMatchObject({
          name: 'JobError',
          status: 'CUDA_ERROR_ILLEGAL_ADDRESS',
          sticky: true,
          jobStatus: 'error',
        });
      }
      expect(result.errors.filter((e) => e.label === 'queued').every((e) => e.stage === 'queued')).toBe(true);
      expect(result.lost).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
      expect(result.later).toBe('EngineLostError');
      expect(result.closed).toBe('yes');
      // The spinning jobs would have run 2 s: they fail with the fault instead of being waited out.
      expect(result.lastMs).toBeLessThan(1000);
      console.log(
        `engine sticky error: 12 pending jobs rejected between ${result.firstMs.toFixed(1)} and ${result.lastMs.toFixed(1)} ms`,
      );
    }, 90_000);
  },
);
