// `tscuda filter` without a GPU: its options parsed, the input read as `tscuda stft` reads it (the
// same errors), the band checked against the file's fs/2, the sections designed as scipy designs
// them; usage errors exit 2 before any GPU check, and no output is made without a GPU.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { parseFilterOptions, planFilter, type FilterCommandOptions } from '../../../src/cli/commands/filter-plan.js';
import { UsageError } from '../../../src/cli/options.js';
import { SignalInputError } from '../../../src/cli/signal-format.js';
import { Device } from '../../../src/runtime/device.js';
import { butter, cheby1, cheby2, sosfiltfiltPadlen } from '../../../src/signal/filter-design.js';
import { outputLines, runCli } from './run-cli.js';

const scratch = mkdtempSync(join(tmpdir(), 'tscuda-filter-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** A stereo 16-bit WAV of `n` fresh random samples per channel at `fs` Hz. */
function stereoWav(name: string, n: number, fs: number): string {
  const channel = (): number[] => Array.from({ length: n }, () => Math.round((Math.random() * 2 - 1) * 20000));
  const w = new wavefile.WaveFile();
  w.fromScratch(2, fs, '16', [channel(), channel()]);
  const path = join(scratch, name);
  writeFileSync(path, w.toBuffer());
  return path;
}

function csv(name: string, n: number): string {
  const path = join(scratch, name);
  writeFileSync(path, Array.from({ length: n }, () => (Math.random() - 0.5).toFixed(6)).join('\n'));
  return path;
}

const parsed = (...args: string[]): FilterCommandOptions => {
  const o = parseFilterOptions(args);
  if (o === 'help') throw new Error('help');
  return o;
};

function usageError(...args: string[]): string {
  try {
    const o = parseFilterOptions(args);
    if (o !== 'help') planFilter(o);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('accepted');
}

describe('tscuda filter: options', { timeout: 20_000 }, () => {
  it('reads --band LOW HIGH and --band LOW:HIGH alike, and the defaults', () => {
    const a = parsed('in.wav', '--band', '300', '3400');
    const b = parsed('in.wav', '--band', '300:3400', '--out', 'x/y.wav');
    expect(a).toMatchObject({
      btype: 'bandpass',
      cutoff: [300, 3400],
      order: 4,
      design: 'butter',
      zeroPhase: false,
      out: 'in-filtered.wav',
      precision: 'f32',
      devices: 'all',
    });
    expect(b).toMatchObject({ cutoff: [300, 3400], out: 'x/y.wav' });
    expect(parsed('in.csv', '--lowpass', '10', '--zero-phase', '--order', '6', '--devices', '0')).toMatchObject({
      btype: 'lowpass',
      cutoff: 10,
      order: 6,
      zeroPhase: true,
      devices: [0],
    });
    expect(parsed('in.wav', '--highpass', '5', '--design', 'cheby2', '--rs', '60')).toMatchObject({
      btype: 'highpass',
      design: 'cheby2',
      rs: 60,
    });
    expect(parseFilterOptions(['--help'])).toBe('help');
  });

  it.each([
    [['in.wav'], /^say what to keep: --band LOW HIGH, --lowpass F or --highpass F$/],
    [
      ['in.wav', '--band', '1', '2', '--highpass', '3'],
      /^give one of --band, --lowpass and --highpass, got --band and --highpass$/,
    ],
    [['in.wav', '--band', '400', '300'], /low edge must be below the high edge/],
    [['in.wav', '--band', '300'], /--band takes LOW HIGH \(or LOW:HIGH\) in Hz, got "300"/],
    [['in.wav', '--lowpass', '0'], /^--lowpass must be a positive number of Hz, got "0"$/],
    [['in.wav', '--lowpass', '0x10'], /^--lowpass must be a positive number of Hz/],
    [['in.wav', '--lowpass', '5', '--order', '0'], /^--order must be/],
    [['in.wav', '--band', '1', '2', '--order', '65'], /65 sections; the GPU filter keeps at most 64/],
    [['in.wav', '--lowpass', '5', '--design', 'bessel'], /^--design must be one of/],
    [['in.wav', '--lowpass', '5', '--rp', '1'], /--rp is cheby1's passband ripple/],
    [['in.wav', '--lowpass', '5', '--design', 'cheby1', '--rs', '40'], /--rs is cheby2's stopband attenuation/],
    [['in.wav', '--lowpass', '5', '--out', 'x.txt'], /ending in .wav, got "x.txt"/],
    [['in.wav', '--lowpass', '5', '--devices', '0,0'], /device 0 is listed twice/],
    [['a.wav', 'b.wav', '--lowpass', '5'], /one input file at a time/],
    [[], /no input file given/],
  ])('tscuda filter %j is refused: %s', (args, message) => {
    expect(() => parseFilterOptions(args)).toThrow(message);
  });
});

describe('tscuda filter: the input and the design', { timeout: 20_000 }, () => {
  it('reads every channel of a WAV (or the one --channel names) and designs for its fs', () => {
    const file = stereoWav('st.wav', 1000, 8000);
    const plan = planFilter(parsed(file, '--band', '300', '3400', '--order', '3'));
    expect(plan.fs).toBe(8000);
    expect(plan.channels.map((c) => c.channelNote)).toEqual(['channel 0 of 2', 'channel 1 of 2']);
    expect(plan.sos).toEqual(butter(3, [300, 3400], { btype: 'bandpass', fs: 8000 }));
    const one = planFilter(parsed(file, '--lowpass', '1000', '--channel', '1', '--design', 'cheby1', '--rp', '0.5'));
    expect(one.channels.map((c) => c.channelNote)).toEqual(['channel 1 of 2']);
    expect(one.sos).toEqual(cheby1(4, 0.5, 1000, { btype: 'lowpass', fs: 8000 }));
    const mean = planFilter(parsed(file, '--highpass', '50', '--channel', 'mean', '--design', 'cheby2'));
    expect(mean.channels.map((c) => c.channelNote)).toEqual(['mean of 2 channels']);
    expect(mean.sos).toEqual(cheby2(4, 40, 50, { btype: 'highpass', fs: 8000 }));
  });

  it('checks the cutoffs against fs/2 and the rate a WAV can hold, naming the option', () => {
    const file = stereoWav('st2.wav', 500, 8000);
    expect(usageError(file, '--band', '300', '4000')).toMatch(/^--band 300 4000: 4000 Hz is not below fs\/2 = 4000 Hz/);
    const c = csv('a.csv', 300);
    expect(usageError(c, '--lowpass', '0.6')).toMatch(
      /0.6 Hz is not below fs\/2 = 0.5 Hz \(fs 1 Hz, the default: give --fs\)/,
    );
    expect(usageError(c, '--lowpass', '0.1', '--fs', '2.5')).toMatch(/whole sampling rate; fs is 2.5 Hz/);
    expect(usageError(file, '--lowpass', '5', '--column', '1')).toMatch(
      /--column applies only to CSV input, not wav input/,
    );
  });

  it('refuses what stft refuses, with the same errors, and a signal too short for --zero-phase', () => {
    expect(() => planFilter(parsed(join(scratch, 'none.wav'), '--lowpass', '5'))).toThrow(/cannot read: no such file/);
    const tiny = csv('tiny.csv', 3);
    expect(() => planFilter(parsed(tiny, '--lowpass', '0.1'))).toThrow(
      /the signal has 3 samples; at least 4 are needed/,
    );
    const padlen = sosfiltfiltPadlen(butter(4, 0.1, { fs: 1 }));
    const short = csv('short.csv', padlen);
    expect(() => planFilter(parsed(short, '--lowpass', '0.1', '--zero-phase'))).toThrow(SignalInputError);
    expect(() => planFilter(parsed(short, '--lowpass', '0.1', '--zero-phase'))).toThrow(`pads the signal by ${padlen}`);
  });
});

const gpu = Device.available();
describe('tscuda filter: exit codes and the output', { timeout: 20_000 }, () => {
  it('a usage error exits 2 in one line, before any GPU check', async () => {
    const r = await runCli('filter', 'in.wav', '--band', '5');
    expect(r.code).toBe(2);
    expect(outputLines(r.err)).toEqual([
      expect.stringMatching(/^tscuda filter: --band takes LOW HIGH.*\(tscuda filter --help\)$/),
    ]);
    const json = await runCli('filter', 'in.wav', '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.out)).toMatchObject({ ok: false, error: { name: 'UsageError' } });
  });

  it.skipIf(gpu.ok)(
    `reads the input, then makes no output folder without a GPU${gpu.ok ? ' (skipped: a GPU is here)' : ''}`,
    async () => {
      const file = stereoWav('nogpu.wav', 400, 8000);
      const out = join(scratch, 'made-only-with-a-gpu', 'out.wav');
      const r = await runCli('filter', file, '--lowpass', '1000', '--out', out);
      expect(r.code).toBe(1);
      expect(outputLines(r.err)).toEqual([expect.stringMatching(/^tscuda filter: .*; filter needs a GPU$/)]);
      expect(existsSync(join(scratch, 'made-only-with-a-gpu'))).toBe(false);
    },
  );
});
