/**
 * Misuse of the CLI found by review: each mistake is one clear line on stderr naming the problem,
 * exit 2 for a bad option and 1 for a bad input file, and nothing is silently ignored or accepted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { probeGpu } from '../../../bench/harness/environment.js';
import { parseStftOptions, planStft, type StftCommandOptions } from '../../../src/cli/commands/stft.js';
import { parseWorkerArgs } from '../../../src/cli/commands/worker.js';
import { UsageError } from '../../../src/cli/options.js';
import { decodeWav } from '../../../src/cli/signal-input.js';
import { parseCsv } from '../../../src/cli/signal-csv.js';
import { SignalInputError } from '../../../src/cli/signal-format.js';
import { MIN_SERIES_LENGTH } from '../../../src/engine/validate.js';
import { isLibraryAvailable } from '../../../src/ffi/libraries.js';
import { Device } from '../../../src/runtime/index.js';
import { outputLines, runCli } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tscuda-cli-misuse-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** 16-bit PCM WAV bytes from wavefile: the canonical 44-byte header (sample rate at 24, data size at 40). */
function wav16(channels: number, fs: number, samples: number[] | number[][]): Uint8Array {
  const w = new wavefile.WaveFile();
  w.fromScratch(channels, fs, '16', samples);
  return w.toBuffer();
}

function file(name: string, bytes: Uint8Array | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

function options(args: string[]): StftCommandOptions {
  const o = parseStftOptions(args);
  if (o === 'help') throw new Error('unexpected help');
  return o;
}

describe('bench: why no GPU', () => {
  it('probeGpu gives the runtime availability check, reason included', () => {
    expect(probeGpu()).toEqual(Device.available());
  });

  it.runIf(!isLibraryAvailable('driver'))(
    'without a driver it says the driver is missing, not that it sees no device',
    () => {
      const probe = probeGpu();
      expect(probe.ok).toBe(false);
      const reason = probe.ok ? '' : probe.reason;
      expect(reason).toMatch(/^no NVIDIA driver/);
      expect(reason).not.toMatch(/installed/);
    },
  );
});

describe('stft: bad input files exit 1 naming the file', () => {
  it('a WAV header sample rate of 0', async () => {
    const bytes = wav16(1, 8000, [1, 2, 3, 4, 5, 6]);
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(24, 0, true);
    const path = file('zerorate.wav', bytes);
    const r = await runCli('stft', path);
    expect(r.code).toBe(1);
    expect(outputLines(r.err)).toEqual([`tscuda stft: ${path}: WAV header sample rate is 0 (give --fs to set one)`]);
    // --fs gives the rate the header lacks.
    expect(decodeWav(bytes, { fs: 100, fsOverride: true }).fs).toBe(100);
  });

  it('a CSV value that overflows to Infinity, with its line', () => {
    expect(() => parseCsv('v\n1\n1e999\n', {}, 'x.csv')).toThrow(SignalInputError);
    expect(() => parseCsv('v\n1\n1e999\n', {}, 'x.csv')).toThrow(
      /^x\.csv: line 3, column 0: "1e999" is not finite; samples must be finite$/,
    );
    expect(() => parseCsv('-1e400\n', {}, 'x.csv')).toThrow(/line 1/);
  });

  it(`a signal shorter than the engine's ${MIN_SERIES_LENGTH} samples, before the GPU part`, async () => {
    const path = file('short.f32', new Uint8Array(new Float32Array([1, 2, 3]).buffer));
    expect(() => planStft(options([path]))).toThrow(SignalInputError);
    const r = await runCli('stft', path);
    expect(r.code).toBe(1);
    expect(outputLines(r.err)).toEqual([
      `tscuda stft: ${path}: the signal has 3 samples; at least ${MIN_SERIES_LENGTH} are needed`,
    ]);
    expect(() => planStft(options([file('one.csv', '7\n')]))).toThrow(/the signal has 1 sample; at least/);
  });
});

describe('stft: a WAV that is not what its header says is read, with one warning', () => {
  const samples = [1, 2, 3, 4, 5, 6, 7, 8];

  it('a data chunk cut short (mono 16-bit, read as raw 16-bit samples)', () => {
    const bytes = wav16(1, 8000, samples).slice(0, 44 + 10);
    const s = decodeWav(bytes, {}, 'cut.wav');
    expect(s.length).toBe(5);
    expect(s.warnings).toEqual(['cut.wav: WAV data chunk says 16 bytes, file holds 10; reading 10']);
  });

  it('a data chunk cut mid-frame (stereo, averaged): whole frames only', () => {
    const bytes = wav16(2, 8000, [samples, samples]).slice(0, 44 + 14);
    const s = decodeWav(bytes, {}, 'cut.wav');
    expect(s.length).toBe(3);
    expect(s.warnings).toEqual(['cut.wav: WAV data chunk says 32 bytes, file holds 14; reading 12']);
  });

  it('an odd byte count of 16-bit samples', () => {
    const bytes = wav16(1, 8000, samples).slice(0, 44 + 15);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    view.setUint32(40, 15, true);
    view.setUint32(4, bytes.byteLength - 8, true);
    expect(decodeWav(bytes, {}, 'odd.wav').warnings).toEqual([
      'odd.wav: WAV data chunk of 15 bytes is not a whole number of 2-byte frames; reading 14',
    ]);
  });

  it('a whole file has no warning', () => {
    expect(decodeWav(wav16(1, 8000, samples)).warnings).toBeUndefined();
  });

  it('tscuda stft prints the warning as its first line and goes on', async () => {
    const path = file(
      'cut.wav',
      wav16(
        1,
        8000,
        Array.from({ length: 512 }, (_, i) => i),
      ).slice(0, 44 + 600),
    );
    const r = await runCli('stft', path, '--quiet', '--out', join(dir, 'cut-stft'));
    expect(outputLines(r.err)[0]).toBe(
      `tscuda stft: ${path}: WAV data chunk says 1024 bytes, file holds 600; reading 600`,
    );
  });
});

describe('stft: options refused at parse or plan time (exit 2)', () => {
  it('--out "" (the working directory) is refused as demo refuses it', async () => {
    expect(() => parseStftOptions(['a.wav', '--out', ''])).toThrow(/--out must name a folder/);
    const r = await runCli('stft', 'a.wav', '--out', '');
    expect(r.code).toBe(2);
    expect(outputLines(r.err)).toEqual(['tscuda stft: --out must name a folder (tscuda stft --help)']);
  });

  it('an empty file name is no input file', async () => {
    const r = await runCli('stft', '');
    expect(r.code).toBe(2);
    expect(outputLines(r.err)).toEqual(['tscuda stft: no input file given (tscuda stft --help)']);
  });

  it('--scale: any finite non-zero number, negative included (it flips the sign), as readSignal takes it', () => {
    expect(options(['a.i16', '--scale', '-1']).scale).toBe(-1);
    expect(options(['a.i16', '--scale', '0.5']).scale).toBe(0.5);
    for (const bad of ['0', 'abc', '', 'Infinity']) {
      expect(() => parseStftOptions(['a.i16', '--scale', bad]), bad).toThrow(UsageError);
      expect(() => parseStftOptions(['a.i16', '--scale', bad]), bad).toThrow(
        `--scale must be a finite non-zero number, got "${bad}"`,
      );
    }
  });

  it('--channel, --column and --scale where the format would ignore them', async () => {
    const f32 = file('x.f32', new Uint8Array(new Float32Array(64).fill(1).buffer));
    const i16 = file('x.i16', new Uint8Array(new Int16Array(64).fill(1).buffer));
    const csv = file('x.csv', Array.from({ length: 64 }, (_, i) => `${i}`).join('\n'));
    const wav = file(
      'x.wav',
      wav16(
        1,
        8000,
        Array.from({ length: 64 }, (_, i) => i),
      ),
    );
    const refused: [string[], string][] = [
      [
        [f32, '--scale', '2'],
        '--scale applies only to 16-bit input (16-bit PCM WAV, .i16, .f16, .bf16), not f32 input',
      ],
      [
        [csv, '--scale', '2'],
        '--scale applies only to 16-bit input (16-bit PCM WAV, .i16, .f16, .bf16), not csv input',
      ],
      [[f32, '--channel', '0'], '--channel applies only to WAV input, not f32 input'],
      [[i16, '--channel', '0'], '--channel applies only to WAV input, not i16 input'],
      [[f32, '--column', '0'], '--column applies only to CSV input, not f32 input'],
      [[wav, '--column', '0'], '--column applies only to CSV input, not wav input'],
      [[csv, '--channel', '0'], '--channel applies only to WAV input, not csv input'],
      [[csv, '--format', 'f32', '--column', '0'], '--column applies only to CSV input, not f32 input'],
    ];
    for (const [args, message] of refused) {
      expect(() => planStft(options(args)), args.join(' ')).toThrow(UsageError);
      const r = await runCli('stft', ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(outputLines(r.err)).toEqual([`tscuda stft: ${message} (tscuda stft --help)`]);
    }
    const wav24 = new wavefile.WaveFile();
    wav24.fromScratch(
      1,
      8000,
      '24',
      Array.from({ length: 64 }, (_, i) => i),
    );
    expect(() => planStft(options([file('x24.wav', wav24.toBuffer()), '--scale', '2']))).toThrow(
      /--scale applies only to 16-bit input .*is a WAV of encoding 24/,
    );
    // Where they apply, they are taken.
    expect(planStft(options([i16, '--scale', '2'])).input.raw16?.scale).toBe(2);
    expect(planStft(options([wav, '--channel', '0'])).input.channelNote).toBe('mono');
    expect(planStft(options([csv, '--column', '0'])).input.length).toBe(64);
  });

  it('--scale applies to a 16-bit stereo WAV averaged to one channel too', () => {
    const bytes = wav16(2, 8000, [
      [2, 4],
      [6, 8],
    ]);
    expect(Array.from(decodeWav(bytes, { scale: 1 }).samples)).toEqual([4, 6]);
    expect(Array.from(decodeWav(bytes).samples)).toEqual([4 / 32768, 6 / 32768]);
  });
});

describe('worker and serve: option mistakes at parse time (exit 2)', () => {
  const redis = ['--redis', 'redis://127.0.0.1:1'];

  it("worker --lanes -1 gets the option's own message, as demo and serve do", async () => {
    const r = await runCli('worker', ...redis, '--lanes', '-1');
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(/ambiguous/);
    expect(outputLines(r.err)).toEqual([
      'tscuda worker: --lanes must be a whole number, got "-1" (tscuda worker --help)',
    ]);
  });

  it("--queue and --prefix by the queue's own name rule, before connecting to Redis", async () => {
    expect(() => parseWorkerArgs([...redis, '--queue', ''])).toThrow(UsageError);
    expect(parseWorkerArgs([...redis, '--queue', 'jobs', '--prefix', '{tscuda}'])).toMatchObject({
      queue: 'jobs',
      prefix: '{tscuda}',
    });
    for (const [command, option, value] of [
      ['worker', 'queue', ''],
      ['worker', 'prefix', 'a:b'],
      ['serve', 'queue', ''],
      ['serve', 'queue', 'a:b'],
    ] as const) {
      const r = await runCli(command, ...redis, `--${option}`, value);
      expect(r.code, `${command} --${option}`).toBe(2);
      expect(outputLines(r.err)).toHaveLength(1);
      expect(outputLines(r.err)[0]).toMatch(
        new RegExp(
          `^tscuda ${command}: --${option} must be 1-100 characters .*, got "${value}" \\(tscuda ${command} --help\\)$`,
        ),
      );
    }
  });
});

describe('tscuda help', () => {
  it('help for an unknown command is the unknown-command usage error', async () => {
    const r = await runCli('help', 'nosuch');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(outputLines(r.err)).toHaveLength(1);
    expect(outputLines(r.err)[0]).toMatch(/^tscuda: unknown command "nosuch"; the commands are info, demo, stft/);
  });

  it('help for a command, or none, still prints help with exit 0', async () => {
    const topic = await runCli('help', 'stft');
    expect(topic.code).toBe(0);
    expect(topic.out).toMatch(/^usage: tscuda stft/);
    const general = await runCli('help');
    expect(general.code).toBe(0);
    expect(general.out).toMatch(/^usage: tscuda <command>/);
  });
});
