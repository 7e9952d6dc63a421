/**
 * One set of command-line conventions for every command: a usage error is one line on stderr
 * naming the command and exits 2 (no arguments included); with --json it is one JSON object on
 * stdout; a negative number for an option is checked by that option's own rule instead of
 * node:util's "ambiguous" message; `tscuda info` says where it looked for each library.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { collectLibraries, formatInfo, collectInfo, searchPlaces } from '../../../src/cli/info.js';
import { joinNegativeValues } from '../../../src/cli/options.js';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { outputLines as lines, runCli as run } from './run-cli.js';

afterEach(() => vi.restoreAllMocks());

describe('usage errors: one line, exit 2, for every command', () => {
  it('no arguments at all is a usage error (exit 2, one line naming the commands), not success', async () => {
    const r = await run();
    expect(r.code).toBe(2);
    expect(lines(r.err)).toEqual([
      'tscuda: a command is needed: info, demo, stft, filter, bench, serve, worker (tscuda --help)',
    ]);
    expect(r.out).toBe('');
  });

  const cases: [string[], RegExp][] = [
    [['nonsense'], /^tscuda: unknown command "nonsense"/],
    [['--bogus'], /^tscuda: unknown option "--bogus"/],
    [['info', '--bogus'], /^tscuda info: unknown option "--bogus" \(tscuda info --help\)$/],
    [['demo', '--lanes', 'x'], /^tscuda demo: --lanes must be a whole number, got "x" \(tscuda demo --help\)$/],
    [['demo', 'extra'], /^tscuda demo: unexpected argument "extra"/],
    [['stft'], /^tscuda stft: /],
    [['stft', 'a.wav', '--nperseg', 'x'], /^tscuda stft: --nperseg must be a whole number/],
    [['filter'], /^tscuda filter: no input file given \(tscuda filter --help\)$/],
    [['filter', 'a.wav', '--order', 'x', '--lowpass', '5'], /^tscuda filter: --order must be a whole number/],
    [['serve', '--port', 'x'], /^tscuda serve: --port must be an integer >= 0, got "x" \(tscuda serve --help\)$/],
    [['bench', '--bogus'], /^tscuda bench: unknown option "--bogus" \(tscuda bench --help\)$/],
    [['bench', '--reps', 'x'], /^tscuda bench: --reps must be a whole number, got "x"/],
    [['bench', '--only', '('], /^tscuda bench: --only: bad pattern \(/],
  ];
  for (const [argv, message] of cases) {
    it(`tscuda ${argv.join(' ')}`, async () => {
      const r = await run(...argv);
      expect(r.code).toBe(2);
      expect(lines(r.err)).toHaveLength(1);
      expect(lines(r.err)[0]).toMatch(message);
      expect(r.out).toBe('');
    });
  }

  it('a negative number gets the option\'s own message, not node:util\'s "ambiguous"', async () => {
    for (const [argv, message] of [
      [['serve', '--workers', '-1'], /^tscuda serve: --workers must be an integer >= 0, got "-1"/],
      [['demo', '--lanes', '-1'], /^tscuda demo: --lanes must be a whole number, got "-1"/],
      [['bench', '--reps', '-1'], /^tscuda bench: --reps must be a whole number, got "-1"/],
      [['demo', '--seconds', '-0.5'], /^tscuda demo: --seconds must be a positive number, got "-0.5"/],
    ] as const) {
      const r = await run(...argv);
      expect(r.code).toBe(2);
      expect(r.err).not.toMatch(/ambiguous/);
      expect(lines(r.err)).toHaveLength(1);
      expect(lines(r.err)[0]).toMatch(message);
    }
  });

  it('joins only numbers: a missing value before another option stays an error', () => {
    expect(
      joinNegativeValues(['--lanes', '-1', '--quiet'], { lanes: { type: 'string' }, quiet: { type: 'boolean' } }),
    ).toEqual(['--lanes=-1', '--quiet']);
    expect(joinNegativeValues(['--out', '--json'], { out: { type: 'string' } })).toEqual(['--out', '--json']);
    expect(joinNegativeValues(['--quiet', '-1'], { quiet: { type: 'boolean' } })).toEqual(['--quiet', '-1']);
    expect(joinNegativeValues(['--fs', '-.5'])).toEqual(['--fs=-.5']);
  });
});

describe('--json: errors as JSON too', () => {
  it('a usage error with --json is one JSON object on stdout, nothing on stderr, exit 2', async () => {
    for (const argv of [
      ['info', '--json', '--bogus'],
      ['info', '--bogus', '--json'],
      ['nonsense', '--json'],
    ]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toBe('');
      const body = JSON.parse(r.out) as { ok: boolean; error: { name: string; message: string } };
      expect(body).toMatchObject({ ok: false, error: { name: 'UsageError' } });
      expect(body.error.message).toMatch(/bogus|nonsense/);
    }
  });
});

describe('tscuda info: where it looked', () => {
  const saved = process.env.CUDA_HOME;
  afterEach(() => {
    if (saved === undefined) delete process.env.CUDA_HOME;
    else process.env.CUDA_HOME = saved;
  });

  it('honours CUDA_HOME and shows it: its folders come first, labelled with the variable', () => {
    process.env.CUDA_HOME = '/nonexistent/cuda-home-for-test';
    const places = searchPlaces('cufft');
    expect(places[0]).toEqual({
      folder: '/nonexistent/cuda-home-for-test',
      from: 'CUDA_HOME',
      exists: false,
      file: undefined,
    });
    expect(places.map((p) => p.folder)).toContain('/nonexistent/cuda-home-for-test/lib64');
    expect(places.some((p) => p.from === 'system loader')).toBe(true);
    expect(places.findIndex((p) => p.from === 'CUDA_HOME')).toBeLessThan(
      places.findIndex((p) => p.from === 'system loader'),
    );
  });

  it('lists every place searched for a missing library, and the origin of a found one', () => {
    process.env.CUDA_HOME = '/nonexistent/cuda-home-for-test';
    const text = formatInfo(collectInfo());
    const missing = collectLibraries().filter((l) => !l.found);
    for (const l of collectLibraries()) expect(l.searchPaths.length).toBeGreaterThan(0);
    if (missing.length > 0) {
      expect(text).toMatch(/looked for lib\S+\.so[\S]*, .* in/);
      expect(text).toContain(
        'CUDA_HOME=/nonexistent/cuda-home-for-test  /nonexistent/cuda-home-for-test/lib64  no such folder',
      );
      expect(text).toMatch(/system loader +the system loader \(LD_LIBRARY_PATH=/);
    }
    for (const l of collectLibraries())
      if (l.found) expect(text).toMatch(new RegExp(`${l.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}  \\(`));
  });

  it.runIf(!isLibraryAvailable('driver'))(
    'without a driver the one error line says the driver is missing (not "no device visible")',
    async () => {
      const r = await run('info');
      expect(r.code).toBe(1);
      expect(lines(r.err)).toEqual([
        'tscuda: no NVIDIA driver found (libcuda.so.1); install the NVIDIA driver to use a GPU',
      ]);
    },
  );
});
