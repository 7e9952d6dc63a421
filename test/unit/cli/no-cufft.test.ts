/**
 * A host with the NVIDIA driver but without cuFFT (a driver installed, no toolkit): the commands
 * whose every job needs cuFFT say so at start, in one line, exit 1. Before, `tscuda worker` took
 * jobs from the queue and failed each of them. The driver here is the stub of
 * bench/probe/stub-libcuda.ts (every call succeeds, one device), built with the C compiler.
 */
import { execa, execaSync } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { redisSkipReason, startRedis, type TestRedis } from '../queue/redis-server.js';

const root = join(import.meta.dirname, '..', '..', '..');

function stubSkipReason(): string | undefined {
  if (isLibraryAvailable('cufft')) return 'cuFFT is installed here: the missing-cuFFT path cannot be shown';
  try {
    execaSync('cc', ['--version']);
  } catch {
    return 'no C compiler (cc) to build the stub driver';
  }
  return undefined;
}
const skipReason = stubSkipReason() ?? redisSkipReason;
if (skipReason !== undefined) console.log(`no-cufft tests skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined)('a driver without cuFFT', () => {
  let stub: string;
  let redis: TestRedis;
  beforeAll(async () => {
    stub = (await execa('npx', ['tsx', join(root, 'bench', 'probe', 'stub-libcuda.ts')], { cwd: root })).stdout
      .trim()
      .split('\n')
      .at(-1)!;
    redis = await startRedis();
  }, 60_000);
  afterAll(async () => {
    await redis?.dispose();
  });

  const run = (args: string[]) =>
    execa('node', [join(root, 'bin', 'tscuda.js'), ...args], {
      reject: false,
      cwd: root,
      env: { LD_LIBRARY_PATH: stub },
      timeout: 30_000,
    });

  it('tscuda worker: one line naming cuFFT, exit 1, no job taken', async () => {
    const r = await run(['worker', '--redis', redis.url, '--metrics-port', '0']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^tscuda worker: cuFFT \(libcufft\) was not found: /),
    ]);
  }, 40_000);

  it('tscuda demo: one line naming cuFFT, exit 1', async () => {
    const r = await run(['demo', '--seconds', '0.2', '--out', join(root, 'node_modules', '.tscuda-no-cufft-demo')]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^tscuda demo: cuFFT \(libcufft\) was not found: .*the demo needs a GPU and cuFFT$/),
    ]);
  }, 40_000);
});
