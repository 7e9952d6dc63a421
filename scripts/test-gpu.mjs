#!/usr/bin/env node
// `npm run test:gpu`: the GPU test project, which fails instead of skipping. Without a GPU it says
// so in one line and exits 1 before vitest starts (no banner, no stack trace).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
try {
  require('koffi').load('libcuda.so.1');
} catch {
  console.error('npm run test:gpu needs a GPU: no CUDA driver (libcuda.so.1 not found)');
  process.exit(1);
}
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const run = spawnSync(process.execPath, [vitest, 'run', '--project', 'gpu', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TSCUDA_REQUIRE_GPU: '1' },
});
process.exit(run.status ?? 1);
