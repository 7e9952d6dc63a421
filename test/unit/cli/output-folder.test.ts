/**
 * `demo --out` and `stft --out` are made ready before the GPU part: a folder that cannot be written
 * is one line and exit 1 before any GPU is looked for (here, without a GPU, before the "no NVIDIA
 * driver" line), not after minutes of GPU work.
 */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { OutputFolderError, prepareOutputFolder } from '../../../src/cli/output-folder.js';
import { outputLines, runCli } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tscuda-output-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const aFile = join(dir, 'a-file');
writeFileSync(aFile, 'not a folder');

describe('prepareOutputFolder', { timeout: 20_000 }, () => {
  it('creates the folder and its parents, and takes one that exists', () => {
    const nested = join(dir, 'new', 'a', 'b');
    expect(prepareOutputFolder('out', nested)).toBe(nested);
    expect(statSync(nested).isDirectory()).toBe(true);
    expect(prepareOutputFolder('out', nested)).toBe(nested);
  });

  it('refuses a file in the way, naming the option and the path', () => {
    expect(() => prepareOutputFolder('out', aFile)).toThrow(OutputFolderError);
    expect(() => prepareOutputFolder('out', aFile)).toThrow(
      `--out ${aFile}: cannot write there: a file is in the way (not a folder)`,
    );
    expect(() => prepareOutputFolder('out', join(aFile, 'sub'))).toThrow(/cannot write there: a file is in the way/);
  });

  it.runIf(existsSync('/proc/self'))("returns at once under /proc (node's recursive mkdir spins forever there)", () => {
    expect(() => prepareOutputFolder('out', '/proc/tscuda-no-such/x')).toThrow(
      /^--out \/proc\/tscuda-no-such\/x: cannot write there/,
    );
  });
});

describe('the commands check --out before the GPU part', { timeout: 20_000 }, () => {
  it('demo: one line naming --out, exit 1, and no GPU line before it', async () => {
    const r = await runCli('demo', '--out', join(aFile, 'pictures'));
    expect(r.code).toBe(1);
    expect(outputLines(r.err)).toEqual([
      `tscuda demo: --out ${join(aFile, 'pictures')}: cannot write there: a file is in the way (not a folder)`,
    ]);
  });

  it('stft: the input is read first (its errors come first), then --out', async () => {
    const signal = join(dir, 'x.f32');
    writeFileSync(signal, new Uint8Array(new Float32Array(64).fill(1).buffer));
    const r = await runCli('stft', signal, '--out', aFile);
    expect(r.code).toBe(1);
    expect(outputLines(r.err)).toEqual([
      `tscuda stft: --out ${aFile}: cannot write there: a file is in the way (not a folder)`,
    ]);
    const missing = await runCli('stft', join(dir, 'nosuch.f32'), '--out', aFile);
    expect(outputLines(missing.err)).toEqual([`tscuda stft: ${join(dir, 'nosuch.f32')}: cannot read: no such file`]);
  });
});
