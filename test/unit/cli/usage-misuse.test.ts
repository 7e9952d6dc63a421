/**
 * Usage mistakes found by a misuse probe: each is bad usage (exit 2) in one line naming the option,
 * or with --json one JSON object whose message has no newline, and none starts anything.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseServeArgs } from '../../../src/cli/commands/serve-options.js';
import { parseWorkerArgs } from '../../../src/cli/commands/worker.js';
import { decimalNumber, parseErrorLine, UsageError } from '../../../src/cli/options.js';
import { outputLines, runCli } from './run-cli.js';

afterEach(() => vi.restoreAllMocks());

/** Runs `argv` and expects a usage error: exit 2, nothing on stdout, one stderr line matching `message`. */
async function expectUsage(argv: string[], message: RegExp): Promise<void> {
  const r = await runCli(...argv);
  expect(r.code, argv.join(' ')).toBe(2);
  expect(r.out, argv.join(' ')).toBe('');
  expect(outputLines(r.err), argv.join(' ')).toHaveLength(1);
  expect(outputLines(r.err)[0], argv.join(' ')).toMatch(message);
}

/** Runs `argv` (with --json in it) and expects the usage error as one JSON object on stdout. */
async function expectJsonUsage(argv: string[], message: RegExp): Promise<void> {
  const r = await runCli(...argv);
  expect(r.code, argv.join(' ')).toBe(2);
  expect(r.err, argv.join(' ')).toBe('');
  expect(outputLines(r.out), argv.join(' ')).toHaveLength(1);
  const body = JSON.parse(r.out) as { ok: boolean; error: { name: string; message: string } };
  expect(body).toMatchObject({ ok: false, error: { name: 'UsageError' } });
  expect(body.error.message).not.toMatch(/\n/);
  expect(body.error.message, argv.join(' ')).toMatch(message);
}

describe('serve --host', { timeout: 20_000 }, () => {
  it('an empty address is bad usage (node would bind every interface), not a default', async () => {
    for (const host of ['', ' ']) {
      await expect(parseServeArgs(['--host', host])).rejects.toThrow(UsageError);
      await expectUsage(
        ['serve', '--host', host],
        /^tscuda serve: --host must name an address \(0\.0\.0\.0 for every interface\) \(tscuda serve --help\)$/,
      );
    }
    expect(await parseServeArgs(['--host', '0.0.0.0'])).toMatchObject({ config: { host: '0.0.0.0' } });
  });
});

describe('a missing option value before another option', { timeout: 20_000 }, () => {
  const line =
    /^Option '--lanes' argument missing \(an option follows it; write --lanes=VALUE for a value that starts with a dash\)$/;

  it("is one line, not node:util's three-line 'ambiguous', for every command", async () => {
    for (const argv of [
      ['demo', '--lanes', '--quiet'],
      ['serve', '--lanes', '--log'],
      ['worker', '--redis', 'redis://127.0.0.1:1', '--lanes', '--name'],
      ['stft', 'a.wav', '--nperseg', '--quiet'],
      ['bench', '--reps', '--json'],
    ]) {
      const r = await runCli(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).not.toMatch(/ambiguous/);
      expect(outputLines(r.err).length + outputLines(r.out).length, argv.join(' ')).toBe(1);
    }
    await expectUsage(
      ['demo', '--lanes', '--quiet'],
      /^tscuda demo: Option '--lanes' argument missing \(an option follows it/,
    );
    expect(
      parseErrorLine(
        "Option '--lanes' argument is ambiguous.\nDid you forget to specify the option argument for '--lanes'?\nTo specify ...",
      ),
    ).toMatch(line);
  });

  it('with --json, the message has no newline', async () => {
    await expectJsonUsage(['demo', '--lanes', '--quiet', '--json'], line);
    await expectJsonUsage(['info', '--json', '--bogus'], /^unknown option "--bogus"$/);
  });
});

describe('serve reports usage errors as every command does', { timeout: 20_000 }, () => {
  it('with --json: one JSON object on stdout, nothing on stderr', async () => {
    await expectJsonUsage(['serve', '--bogus', '--json'], /^unknown option "--bogus"$/);
    // serve knows --json: a mistake beside it is the answer.
    await expectJsonUsage(['serve', '--port', '99999', '--json'], /^--port must be at most 65535/);
  });

  it('--standby without supervised workers is bad usage', async () => {
    await expect(parseServeArgs(['--standby', '1', '--workers', '0'])).rejects.toThrow(
      '--standby needs --workers >= 1',
    );
    await expectUsage(
      ['serve', '--standby', '2', '--workers', '0'],
      /^tscuda serve: --standby needs --workers >= 1 \(tscuda serve --help\)$/,
    );
    expect(await parseServeArgs(['--standby', '1', '--workers', '1'])).toMatchObject({ standby: 1, workers: 1 });
    expect(await parseServeArgs(['--standby', '0', '--workers', '0'])).toMatchObject({ standby: 0, workers: 0 });
  });
});

describe(
  'a Redis URL that can never connect is bad usage naming the option, at parse time',
  { timeout: 20_000 },
  () => {
    const never: [string, RegExp][] = [
      ['redis://:x', /"redis:\/\/:x" is not a valid URL/],
      ['redis://127.0.0.1:99999', /is not a valid URL/],
      ['redis://127.0.0.1:6379/abc', /the path of a Redis URL is a database number .*got "\/abc"/],
    ];

    it('serve and worker, --redis and --blob-redis', async () => {
      for (const [url, why] of never) {
        expect(() => parseWorkerArgs(['--redis', url]), url).toThrow(UsageError);
        await expect(parseServeArgs(['--redis', url]), url).rejects.toThrow(UsageError);
        for (const [command, option] of [
          ['serve', 'redis'],
          ['worker', 'redis'],
          ['serve', 'blob-redis'],
          ['worker', 'blob-redis'],
        ] as const) {
          const args =
            option === 'redis' ? ['--redis', url] : ['--redis', 'redis://127.0.0.1:6379', '--blob-redis', url];
          await expectUsage([command, ...args], new RegExp(`^tscuda ${command}: --${option}: .*${why.source}`));
        }
      }
    });

    it('a good URL still passes', () => {
      expect(
        parseWorkerArgs(['--redis', 'redis://:pw@127.0.0.1:6379/2', '--blob-redis', 'rediss://h:6380']),
      ).toMatchObject({
        redis: 'redis://:pw@127.0.0.1:6379/2',
        blobRedis: ['rediss://h:6380'],
      });
    });
  },
);

describe('small ones', { timeout: 20_000 }, () => {
  it('info --json=1 is a usage error in JSON, as --json asks', async () => {
    await expectJsonUsage(['info', '--json=1'], /^Option '--json' does not take an argument$/);
  });

  it('extra words after --version or a help topic are bad usage', async () => {
    await expectUsage(['--version', 'junk'], /^tscuda: --version takes no arguments, got "junk" \(tscuda --help\)$/);
    await expectUsage(['-v', 'x'], /^tscuda: -v takes no arguments/);
    await expectUsage(
      ['help', 'info', 'extra'],
      /^tscuda: help takes at most one command name, got 2 words: info extra/,
    );
    await expectUsage(['--help', 'nosuch'], /^tscuda: unknown command "nosuch"/);
    const topic = await runCli('--help', 'info');
    expect([topic.code, topic.out.split('\n')[0]]).toEqual([0, 'usage: tscuda info [--json]']);
  });

  it('numbers are decimal: hex, binary and octal are refused', async () => {
    await expectUsage(['demo', '--seconds', '0x10'], /^tscuda demo: --seconds must be a positive number, got "0x10"/);
    await expectUsage(['stft', 'a.wav', '--fs', '0x10'], /^tscuda stft: --fs must be a positive number, got "0x10"/);
    await expectUsage(
      ['stft', 'a.wav', '--band', '0x10:0x20'],
      /^tscuda stft: --band 0x10:0x20: both edges must be numbers/,
    );
    await expectUsage(
      ['stft', 'a.i16', '--scale', '0x2'],
      /^tscuda stft: --scale must be a finite non-zero number, got "0x2"/,
    );
    await expectUsage(
      ['stft', 'a.wav', '--window', 'tukey:0x1'],
      /^tscuda stft: --window tukey: the parameter must be a number, got "0x1"/,
    );
    expect([
      decimalNumber('16'),
      decimalNumber('-0.5'),
      decimalNumber('1e3'),
      decimalNumber('.5'),
      decimalNumber(' 2 '),
    ]).toEqual([16, -0.5, 1000, 0.5, 2]);
    for (const text of ['0x10', '0b11', '0o7', '', 'Infinity', '1_000']) expect(decimalNumber(text), text).toBeNaN();
  });
});
