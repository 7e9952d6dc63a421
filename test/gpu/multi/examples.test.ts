import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';
import { deviceCount, ncclReady, titled, twoGpus } from './multi-available.js';

const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

async function run(name: string): Promise<string> {
  const r = await execa('node', [TSX, join(ROOT, 'examples', `${name}.ts`)], {
    cwd: ROOT,
    reject: false,
    timeout: 150_000,
  });
  if (r.exitCode !== 0) throw new Error(`examples/${name}.ts exited ${r.exitCode}:\n${r.stdout}\n${r.stderr}`);
  console.log(`examples/${name}.ts:\n${r.stdout}`);
  return r.stdout.trim();
}

describe.skipIf(!ncclReady.ok)(titled('NCCL examples', ncclReady), () => {
  it('nccl-allreduce-single-process sums over every GPU present', async () => {
    const size = deviceCount;
    expect(await run('nccl-allreduce-single-process')).toMatch(
      new RegExp(
        `^allReduce over ${size} GPU\\(s\\) \\(NCCL \\d+\\): every element = ${(size * (size + 1)) / 2} \\(expected ${(size * (size + 1)) / 2}\\): correct$`,
        'm',
      ),
    );
  });

  it.skipIf(!twoGpus.ok)(
    titled('nccl-allreduce-two-process sums across two processes', twoGpus),
    async () => {
      const text = await run('nccl-allreduce-two-process');
      expect(text).toMatch(/^rank 0 of 2 on .+: allReduce sum = 3 \(expected 3\): correct$/m);
      expect(text).toMatch(/^rank 1 of 2 on .+: allReduce sum = 3 \(expected 3\): correct$/m);
    },
    180_000,
  );

  it.skipIf(twoGpus.ok)('nccl-allreduce-two-process says why it skips on one GPU', async () => {
    expect(await run('nccl-allreduce-two-process')).toBe(
      `skipped: this machine has ${deviceCount} GPU(s); the two-process example needs 2`,
    );
  });
});
