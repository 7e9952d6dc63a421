import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

interface Summary {
  lanes: number;
  jobs: number;
  gsamplesPerSecond: number;
  fractionOfBound: number;
  speedup: number;
  pcie: { h2d: number; d2h: number; boundGsamples: number };
  stats: { jobs: number; lanes: { jobs: number }[]; devices: { device: number; jobs: number }[] };
  devices: { ordinal: number; name: string }[];
  cycles: {
    series: number;
    found: number;
    planted: { frequency: number; amplitude: number };
    medianAmplitude: number;
  }[];
}

describe.skipIf(!gpu.available)(`tscuda demo${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-demo-gpu-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs end to end in a child process: table, planted cycles found, every file written', async () => {
    const out = join(dir, 'demo');
    const r = await execa(
      'node',
      [join(ROOT, 'bin', 'tscuda.js'), 'demo', '--seconds', '1', '--lanes', '4', '--out', out],
      { cwd: ROOT, reject: false, timeout: 180_000 },
    );
    console.log(r.stdout);
    if (r.exitCode !== 0) console.log(r.stderr);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/Gsamples\/s/);
    expect(r.stdout).toMatch(/% of PCIe bound/);
    expect(r.stdout).toMatch(/speedup over 1 lane/);

    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
    expect(summary.lanes).toBe(4);
    expect(summary.jobs).toBeGreaterThan(4);
    expect(summary.gsamplesPerSecond).toBeGreaterThan(0);
    expect(summary.pcie.h2d).toBeGreaterThan(1);
    expect(summary.pcie.d2h).toBeGreaterThan(1);
    expect(Number.isFinite(summary.speedup)).toBe(true);
    // Every GPU by default: 4 lanes on each, and every GPU did work.
    expect(summary.devices.map((d) => d.ordinal)).toEqual(Array.from({ length: Device.count() }, (_, i) => i));
    expect(summary.stats.lanes).toHaveLength(4 * summary.devices.length);
    for (const d of summary.stats.devices) expect(d.jobs, `jobs on GPU ${d.device}`).toBeGreaterThan(0);
    for (const lane of summary.stats.lanes) expect(lane.jobs).toBeGreaterThan(0);
    expect(summary.cycles).toHaveLength(4);
    for (const c of summary.cycles) {
      expect(c.found).toBe(c.series);
      expect(Math.abs(c.medianAmplitude / c.planted.amplitude - 1)).toBeLessThan(0.05);
    }

    const png = PNG.sync.read(readFileSync(join(out, 'spectrogram.png')));
    expect([png.width, png.height]).toEqual([1200, 600]); // the figure: map, axes, colour bar
    const figure = readFileSync(join(out, 'spectrogram.svg'), 'utf8');
    for (const title of ['time (s)', 'frequency (Hz)', '|Zxx| (dB)']) expect(figure).toContain(`>${title}</text>`);
    expect(figure.match(/<text class="marker"/g)).toHaveLength(4); // the planted cycles
    expect(PNG.sync.read(readFileSync(join(out, 'band-powers.png'))).width).toBe(900);
    // Not a flat picture: the chirp and the tones stand out of the noise.
    const colors = new Set<number>();
    for (let i = 0; i < png.data.length; i += 4 * 97)
      colors.add((png.data[i]! << 16) | (png.data[i + 1]! << 8) | png.data[i + 2]!);
    expect(colors.size).toBeGreaterThan(20);
    for (const svg of ['band-powers.svg', 'timeline.svg']) {
      const text = readFileSync(join(out, svg), 'utf8');
      expect(text.startsWith('<svg')).toBe(true);
      expect(text.trimEnd().endsWith('</svg>')).toBe(true);
    }
    const trace = JSON.parse(readFileSync(join(out, 'trace.json'), 'utf8')) as { traceEvents: { ph: string }[] };
    expect(trace.traceEvents.filter((e) => e.ph === 'X').length).toBeGreaterThan(0);
  }, 200_000);

  it('refuses a GPU the machine lacks with status 2 and one line naming how many it has (no fallback to GPU 0)', async () => {
    const count = Device.count();
    const r = await execa(
      'node',
      [join(ROOT, 'bin', 'tscuda.js'), 'demo', '--devices', `0,${count}`, '--out', join(dir, 'missing')],
      {
        cwd: ROOT,
        reject: false,
        timeout: 60_000,
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `tscuda demo: --devices: device ${count} does not exist (devices[1]; this machine has ${count} CUDA device${count === 1 ? '' : 's'}: 0..${count - 1})`,
    ]);
  }, 60_000);

  it('fails with one line and status 1 when no device is visible', async () => {
    const r = await execa(
      'node',
      [join(ROOT, 'bin', 'tscuda.js'), 'demo', '--seconds', '0.2', '--out', join(dir, 'none')],
      {
        cwd: ROOT,
        reject: false,
        env: { CUDA_VISIBLE_DEVICES: '' },
      },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
