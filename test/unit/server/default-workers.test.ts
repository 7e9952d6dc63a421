/** `tscuda serve` without --workers: the worker count follows the host (half the CPUs, at most 8 per GPU, at least 1); --workers overrides. */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { machineDeviceCount, parseServeArgs } from '../../../src/cli/commands/serve-options.js';
import { defaultWorkerCount, WORKERS_PER_GPU } from '../../../src/server/index.js';

describe('default worker count', () => {
  it('is half the CPUs, at most WORKERS_PER_GPU per GPU, at least one', () => {
    expect(WORKERS_PER_GPU).toBe(8);
    expect(defaultWorkerCount(16, 1)).toBe(8);
    expect(defaultWorkerCount(8, 1)).toBe(4);
    expect(defaultWorkerCount(64, 1)).toBe(8);
    expect(defaultWorkerCount(64, 2)).toBe(16);
    expect(defaultWorkerCount(2, 1)).toBe(1);
    expect(defaultWorkerCount(1, 1)).toBe(1);
    // No GPU visible (a --redis front, or a host without a driver): still by the CPUs, as for one GPU.
    expect(defaultWorkerCount(16, 0)).toBe(8);
  }, 5_000);

  it('refuses counts that are not whole numbers >= 0, naming them', () => {
    expect(() => defaultWorkerCount(-1, 1)).toThrow(/cpus must be an integer >= 0, got -1/);
    expect(() => defaultWorkerCount(4, 1.5)).toThrow(/gpus must be an integer >= 0, got 1.5/);
  }, 5_000);

  it('is what tscuda serve runs without --workers (on every GPU by default); --workers N overrides it', async () => {
    const plain = await parseServeArgs([]);
    const gpus = await machineDeviceCount();
    expect(plain).toMatchObject({ help: false, workers: defaultWorkerCount(availableParallelism(), gpus) });
    expect(await parseServeArgs(['--device', '0'])).toMatchObject({
      workers: defaultWorkerCount(availableParallelism(), 1),
    });
    const twoGpus = await parseServeArgs(['--devices', '0,1']);
    expect(twoGpus).toMatchObject({ workers: defaultWorkerCount(availableParallelism(), 2) });
    expect(await parseServeArgs(['--workers', '3'])).toMatchObject({ workers: 3 });
    expect(await parseServeArgs(['--workers', '0'])).toMatchObject({ workers: 0 });
  }, 10_000);
});
