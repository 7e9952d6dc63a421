/**
 * The CLI's conventions as one: `--json` is honoured by every command and with no command (one JSON
 * object on stdout), an unknown option is worded one way, usage errors come before any GPU or Redis
 * check, and a command that needs a GPU makes nothing (not its --out folder) where there is none.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { COMMANDS } from '../../../src/cli/commands/index.js';
import { Device } from '../../../src/runtime/device.js';
import { outputLines, runCli } from './run-cli.js';

afterEach(() => vi.restoreAllMocks());
const scratch = mkdtempSync(join(tmpdir(), 'tscuda-cli-json-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The one JSON object a run wrote on stdout. */
function jsonAnswer(out: string): { ok: boolean; error?: { name: string; message: string } } {
  expect(outputLines(out)).toHaveLength(1);
  return JSON.parse(out) as { ok: boolean; error?: { name: string; message: string } };
}

describe('--json everywhere', { timeout: 20_000 }, () => {
  it('with no command: the usage error is JSON', async () => {
    const r = await runCli('--json');
    expect(r.code).toBe(2);
    expect(r.err).toBe('');
    expect(jsonAnswer(r.out)).toEqual({
      ok: false,
      error: { name: 'UsageError', message: expect.stringMatching(/^a command is needed: info, demo/) as string },
    });
  });

  it("before a command it is that command's --json", async () => {
    const r = await runCli('--json', 'demo', '--lanes', '0');
    expect(r.code).toBe(2);
    expect(jsonAnswer(r.out).error?.message).toMatch(/^--lanes must be between 1 and 64, got 0$/);
  });

  it('every command knows --json: a mistake beside it is the answer, in JSON, never "--json is unknown"', async () => {
    for (const { name } of COMMANDS) {
      const r = await runCli(name, '--json', '--bogus');
      expect(r.code, name).toBe(2);
      expect(r.err, name).toBe('');
      expect(jsonAnswer(r.out), name).toEqual({
        ok: false,
        error: { name: 'UsageError', message: 'unknown option "--bogus"' },
      });
    }
  });
});

describe('--json on failures after the usage checks', { timeout: 20_000 }, () => {
  it('worker: Redis unreachable at start is one JSON object, exit 1', async () => {
    const r = await runCli('worker', '--json', '--redis', 'redis://127.0.0.1:1');
    expect(r.code).toBe(1);
    expect(jsonAnswer(r.out)).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/unreachable/) as string },
    });
  });
});

describe('one wording for an unknown option', { timeout: 20_000 }, () => {
  it('with and without a command', async () => {
    expect((await runCli('--bogus')).err).toMatch(/^tscuda: unknown option "--bogus"; the commands are /);
    for (const { name } of COMMANDS)
      expect((await runCli(name, '--bogus')).err, name).toBe(
        `tscuda ${name}: unknown option "--bogus" (tscuda ${name} --help)\n`,
      );
  });
});

describe('usage errors before any GPU or Redis check', { timeout: 20_000 }, () => {
  it('worker --name of 300 characters is bad usage even with Redis unreachable', async () => {
    const r = await runCli('worker', '--redis', 'redis://127.0.0.1:1', '--name', 'n'.repeat(300));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^tscuda worker: --name must be a string of 1-200 characters, got "n{10}/);
    expect(r.err).not.toMatch(/Redis|unreachable|GPU|driver/);
  });
});

const gpu = Device.available({ needs: ['cufft'] });
describe.skipIf(gpu.ok)(
  `demo and stft without a GPU${gpu.ok ? ' (skipped: this machine has a GPU and cuFFT)' : ''}`,
  { timeout: 20_000 },
  () => {
    it('make no --out folder, and say why in one line (exit 1)', async () => {
      const out = join(scratch, 'demo-out');
      const r = await runCli('demo', '--out', out);
      expect(r.code).toBe(1);
      expect(outputLines(r.err)).toEqual([expect.stringMatching(/^tscuda demo: .*; the demo needs a GPU and cuFFT$/)]);
      expect(existsSync(out)).toBe(false);
    });

    it('under --json the failure is one JSON object', async () => {
      const out = join(scratch, 'demo-json');
      const r = await runCli('demo', '--json', '--out', out);
      expect(r.code).toBe(1);
      expect(r.err).toBe('');
      expect(jsonAnswer(r.out)).toMatchObject({
        ok: false,
        error: { name: 'GpuUnavailable', message: expect.stringMatching(/the demo needs a GPU and cuFFT$/) as string },
      });
      expect(existsSync(out)).toBe(false);
    });

    it('stft reads its input, then makes no --out folder without a GPU', async () => {
      const input = join(scratch, 'signal.csv');
      writeFileSync(input, Array.from({ length: 256 }, (_, i) => Math.sin(i / 5).toFixed(6)).join('\n'));
      const out = join(scratch, 'stft-out');
      const r = await runCli('stft', input, '--out', out);
      expect(r.code).toBe(1);
      expect(outputLines(r.err)).toEqual([expect.stringMatching(/^tscuda stft: .*; stft needs a GPU and cuFFT$/)]);
      expect(existsSync(out)).toBe(false);
    });
  },
);
