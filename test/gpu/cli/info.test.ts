import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

describe.skipIf(!gpu.available)(`tscuda info${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  it('reports libraries with their paths, versions and every device, as text and as JSON', async () => {
    const text = await execa('node', [join(ROOT, 'bin', 'tscuda.js'), 'info'], { cwd: ROOT });
    console.log(text.stdout);
    expect(text.stdout).toMatch(/CUDA driver \d+\.\d+, runtime \d+\.\d+/);
    expect(text.stdout).toMatch(/^ {2}libcuda +\d+\.\d+ +\/\S*libcuda\.so/m);
    expect(text.stdout).toMatch(/^ {2}cuFFT +\d+ +\/\S*libcufft\.so/m);
    expect(text.stdout).toMatch(/^ {2}NVRTC +\d+\.\d+ +\/\S*libnvrtc\.so/m);
    expect(text.stdout).toMatch(/\[0\] NVIDIA/);
    expect(text.stderr).toBe('');
    const json = await execa('node', [join(ROOT, 'bin', 'tscuda.js'), 'info', '--json'], { cwd: ROOT });
    const report = JSON.parse(json.stdout) as {
      ok: boolean;
      libraries: { name: string; found: boolean; path?: string; version: string | null }[];
      devices: { name: string; multiprocessorCount: number; pciBusId: string; copyEngines: number }[];
      cufftVersion: string | null;
      nvrtcVersion: string | null;
    };
    expect(report.ok).toBe(true);
    expect(report.devices.length).toBeGreaterThan(0);
    expect(report.devices[0]!.multiprocessorCount).toBeGreaterThan(0);
    expect(report.devices[0]!.copyEngines).toBeGreaterThan(0);
    expect(report.cufftVersion).not.toBeNull();
    expect(report.nvrtcVersion).toMatch(/^\d+\.\d+$/);
    for (const name of ['driver', 'runtime', 'cufft', 'nvrtc']) {
      const lib = report.libraries.find((l) => l.name === name)!;
      expect(lib.found, name).toBe(true);
      expect(lib.path, name).toMatch(/^\/.*\.so/);
    }
    const ncclLib = report.libraries.find((l) => l.name === 'nccl')!;
    if (ncclLib.found) expect(ncclLib.version).toMatch(/^2\.\d+\.\d+$/);
  });
});
