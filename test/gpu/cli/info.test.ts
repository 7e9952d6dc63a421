import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

describe.skipIf(!gpu.available)(`tscuda info${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  it('reports versions and every device, as text and as JSON', async () => {
    const text = await execa('node', [join(ROOT, 'bin', 'tscuda.js'), 'info'], { cwd: ROOT });
    console.log(text.stdout);
    expect(text.stdout).toMatch(/CUDA driver \d+\.\d+, runtime \d+\.\d+/);
    expect(text.stdout).toMatch(/\[0\] NVIDIA/);
    const json = await execa('node', [join(ROOT, 'bin', 'tscuda.js'), 'info', '--json'], { cwd: ROOT });
    const report = JSON.parse(json.stdout) as { devices: { name: string; multiprocessorCount: number; pciBusId: string; copyEngines: number }[]; cufftVersion: string | null; nvrtcVersion: string | null };
    expect(report.devices.length).toBeGreaterThan(0);
    expect(report.devices[0]!.multiprocessorCount).toBeGreaterThan(0);
    expect(report.devices[0]!.copyEngines).toBeGreaterThan(0);
    expect(report.cufftVersion).not.toBeNull();
    expect(report.nvrtcVersion).toMatch(/^\d+\.\d+$/);
  });
});
