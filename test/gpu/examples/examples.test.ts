import { execa } from 'execa';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gpu } from '../gpu-available.js';
import { ROOT } from '../helpers.js';

const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const out = mkdtempSync(join(tmpdir(), 'tscuda-examples-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Runs one example as a user would (`npx tsx examples/<name>.ts`), in its own process. */
async function run(name: string, ...args: string[]): Promise<string> {
  const r = await execa('node', [TSX, join(ROOT, 'examples', `${name}.ts`), ...args], {
    cwd: ROOT,
    reject: false,
    timeout: 90_000,
  });
  if (r.exitCode !== 0) throw new Error(`examples/${name}.ts exited ${r.exitCode}:\n${r.stdout}\n${r.stderr}`);
  console.log(`examples/${name}.ts:\n${r.stdout}`);
  return r.stdout.trim();
}

describe.skipIf(!gpu.available)(`examples${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  it('saxpy (the README example) prints its expected output', async () => {
    expect(await run('saxpy')).toMatch(/^saxpy on .+: y\[0\.\.4\] = 1 3 5 7 9, y\[1048575\] = 2097151$/m);
  });
  it('fft finds the sine at bin 50', async () => {
    expect(await run('fft')).toBe('peak at bin 50 of 2049, |X| = 2048.0 (n/2 = 2048)');
  });
  it('stft sees 50 Hz, then 120 Hz', async () => {
    expect(await run('stft')).toBe('101 frequencies x 21 frames; strongest at t=0.10 s: 50 Hz, at t=1.90 s: 120 Hz');
  });
  it('coordinator-dag computes 2x + 3x and writes its timeline', async () => {
    const svg = join(out, 'diamond.svg');
    const text = await run('coordinator-dag', svg);
    expect(text).toMatch(/^d = 2x \+ 3x: correct; 5 operations settled$/m);
    for (const name of ['upload', 'left', 'right', 'join', 'download'])
      expect(text).toMatch(new RegExp(`^  ${name} +on `, 'm'));
    expect(existsSync(svg)).toBe(true);
    expect(readFileSync(svg, 'utf8')).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
  });
  it('batcher-http answers 200 concurrent requests in fewer batches', async () => {
    const text = await run('batcher-http');
    const m = /^200 requests: all correct; (\d+) GPU batch\(es\)/m.exec(text);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(200);
  });
  it('elementwise runs the same operation on f32 and f16', async () => {
    expect(await run('elementwise')).toBe('f32: 10.5 20.25 30.125 40\nf16: 10.5 20.25 30.125 40');
  });
  it('reduction computes row norms', async () => {
    expect(await run('reduction')).toBe('norms: 1000.0 2000.0 3000.0 (expected 1000.0 2000.0 3000.0)');
  });
});
