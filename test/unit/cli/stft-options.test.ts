import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultBands,
  extendSignal,
  frameChunks,
  parseBand,
  parseStftOptions,
  parseWindow,
  planStft,
  stftCommand,
  type StftCommandOptions,
} from '../../../src/cli/commands/stft.js';
import { demoCommand, parseDemoOptions } from '../../../src/cli/commands/demo.js';
import { UsageError } from '../../../src/cli/options.js';
import { SignalInputError } from '../../../src/cli/signal-format.js';

const dir = mkdtempSync(join(tmpdir(), 'tscuda-stft-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function options(args: string[]): StftCommandOptions {
  const o = parseStftOptions(args);
  if (o === 'help') throw new Error('unexpected help');
  return o;
}

describe('tscuda stft options', () => {
  it("has scipy.signal.stft's defaults", () => {
    const o = options(['rec.wav']);
    expect(o).toMatchObject({
      file: 'rec.wav',
      fs: undefined,
      nperseg: undefined,
      noverlap: undefined,
      nfft: undefined,
      window: 'hann',
      detrend: false,
      scaling: 'spectrum',
      boundary: 'zeros',
      padded: true,
      bands: [],
      out: 'rec-stft',
      precision: 'f32',
      devices: 'all',
    });
  });

  it('parses every option', () => {
    const o = options([
      'x.csv',
      '--fs',
      '250',
      '--nperseg',
      '128',
      '--noverlap',
      '96',
      '--nfft',
      '256',
      '--window',
      'kaiser:8.6',
      '--detrend',
      'linear',
      '--scaling',
      'psd',
      '--boundary',
      'none',
      '--no-padded',
      '--band',
      '1:4',
      '--band',
      '8:13',
      '--out',
      'o',
      '--format',
      'csv',
      '--column',
      'ecg',
      '--db-range',
      '60',
      '--precision',
      'f64',
      '--save-magnitude',
      '--quiet',
    ]);
    expect(o).toMatchObject({
      fs: 250,
      nperseg: 128,
      noverlap: 96,
      nfft: 256,
      window: ['kaiser', 8.6],
      detrend: 'linear',
      scaling: 'psd',
      boundary: null,
      padded: false,
      bands: [
        [1, 4],
        [8, 13],
      ],
      out: 'o',
      format: 'csv',
      column: 'ecg',
      dbRange: 60,
      precision: 'f64',
      saveMagnitude: true,
      quiet: true,
    });
    expect(options(['a.wav', '--channel', '1', '--column', '2']).channel).toBe(1);
    expect(options(['a.wav', '--devices', '0,1']).devices).toEqual([0, 1]);
    expect(options(['a.wav', '--device', '1']).devices).toEqual([1]);
    expect(options(['a.wav', '--column', '2']).column).toBe(2);
    expect(options(['a.wav', '--channel', 'mean']).channel).toBe('mean');
    expect(parseStftOptions(['--help'])).toBe('help');
  });

  it('names the bad option', () => {
    const bad: [string[], RegExp][] = [
      [[], /no input file given/],
      [['a.wav', 'b.wav'], /one input file at a time/],
      [['a.wav', '--nperseg', '0'], /--nperseg must be between 1 and/],
      [['a.wav', '--nperseg', '12.5'], /--nperseg must be a whole number, got "12.5"/],
      [['a.wav', '--fs=-3'], /--fs must be a positive number/],
      [['a.wav', '--fs', '-3'], /--fs must be a positive number, got "-3"/],
      [['a.wav', '--band', '-1:3'], /the low edge must be >= 0/],
      [['a.wav', '--fs', 'abc'], /--fs must be a positive number, got "abc"/],
      [['a.wav', '--detrend', 'quadratic'], /--detrend must be one of none, constant, linear/],
      [['a.wav', '--scaling', 'density'], /--scaling must be one of spectrum, psd/],
      [['a.wav', '--boundary', 'wrap'], /--boundary must be one of/],
      [['a.wav', '--window', 'hanning2'], /--window: window "hanning2" is unknown/],
      [['a.wav', '--window', 'kaiser'], /needs its parameter/],
      [['a.wav', '--window', 'tukey:x'], /the parameter must be a number, got "x"/],
      [['a.wav', '--band', '5'], /--band takes LO:HI in Hz, got "5"/],
      [['a.wav', '--band', '9:3'], /the low edge must be below the high edge/],
      [['a.wav', '--band=-1:3'], /the low edge must be >= 0/],
      [['a.wav', '--format', 'mp3'], /--format must be one of wav, f32, f64, csv/],
      [['a.wav', '--precision', 'f16'], /--precision must be one of f32, f64/],
      [['a.wav', '--nperseg'], /--nperseg/],
      [['a.wav', '--frobnicate'], /unknown option "--frobnicate"/],
    ];
    for (const [args, message] of bad) {
      expect(() => parseStftOptions(args), args.join(' ')).toThrow(UsageError);
      expect(() => parseStftOptions(args), args.join(' ')).toThrow(message);
    }
  });

  it('parses windows and bands', () => {
    expect(parseWindow('hann')).toBe('hann');
    expect(parseWindow('tukey:0.25')).toEqual(['tukey', 0.25]);
    expect(parseWindow('gaussian:7')).toEqual(['gaussian', 7]);
    expect(() => parseWindow('a:1:2')).toThrow(/NAME or NAME:PARAMETER/);
    expect(parseBand('0.5:4')).toEqual([0.5, 4]);
    expect(parseBand(' 300:3400 ')).toEqual([300, 3400]);
  });

  it('has octave bands below fs/2 by default', () => {
    const b = defaultBands(1000);
    expect(b).toHaveLength(7);
    expect(b[0]).toEqual([0, 500 / 64]);
    expect(b[6]).toEqual([250, 500]);
    for (let i = 1; i < b.length; i++) expect(b[i]![0]).toBe(b[i - 1]![1]);
  });
});

describe('tscuda stft plan (reading and checking against the signal)', () => {
  const wavPath = join(dir, 'tone.wav');
  const w = new wavefile.WaveFile();
  w.fromScratch(
    1,
    8000,
    '16',
    Array.from({ length: 4000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))),
  );
  writeFileSync(wavPath, w.toBuffer());

  it('resolves the geometry as scipy would', () => {
    const plan = planStft(options([wavPath, '--band', '400:500']));
    expect(plan.input.fs).toBe(8000);
    expect(plan.geometry).toMatchObject({ nperseg: 256, noverlap: 128, nfft: 256, extension: 128, frames: 33 });
    expect(plan.bands).toEqual([[400, 500]]);
    expect(plan.userBands).toBe(true);
    expect(planStft(options([wavPath])).userBands).toBe(false);
  });

  it('checks options against the signal: band above fs/2, nperseg too long, overlap too large', () => {
    expect(() => planStft(options([wavPath, '--band', '100:4001']))).toThrow(/above fs\/2 = 4000 Hz/);
    expect(() => planStft(options([wavPath, '--nperseg', '5000']))).toThrow(
      /nperseg = 5000 is greater than the signal length 4000/,
    );
    expect(() => planStft(options([wavPath, '--noverlap', '256']))).toThrow(
      /noverlap = 256 must be less than nperseg = 256/,
    );
    expect(() => planStft(options([wavPath, '--nfft', '128']))).toThrow(
      /nfft = 128 must be greater than or equal to nperseg = 256/,
    );
    const raw = join(dir, 'x.f32');
    writeFileSync(raw, new Uint8Array(new Float32Array(1000).fill(1).buffer));
    expect(() => planStft(options([raw, '--band', '1:2']))).toThrow(/fs 1 Hz, the default: give --fs/);
  });

  it('reports unreadable input as a SignalInputError, not a usage error', () => {
    expect(() => planStft(options([join(dir, 'missing.wav')]))).toThrow(SignalInputError);
  });

  it('exits 2 on bad usage and 1 on an unreadable file, before touching the GPU', async () => {
    const writes: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => (writes.push(String(s)), true)) as typeof process.stderr.write;
    try {
      expect(await stftCommand.run([wavPath, '--nperseg', 'x'])).toBe(2);
      expect(await stftCommand.run([join(dir, 'missing.wav')])).toBe(1);
      expect(await demoCommand.run(['--lanes', '0'])).toBe(2);
    } finally {
      process.stderr.write = original;
    }
    expect(writes.join('')).toMatch(/tscuda stft: --nperseg must be a whole number/);
    expect(writes.join('')).toMatch(/tscuda stft: .*missing\.wav: cannot read: no such file/);
    expect(writes.join('')).toMatch(/tscuda demo: --lanes must be between 1 and 64, got 0/);
  });
});

describe('tscuda demo options', () => {
  it('has defaults and parses each option', () => {
    expect(parseDemoOptions([])).toEqual({
      seconds: 5,
      lanes: 4,
      out: 'tscuda-demo',
      batch: 64,
      length: 65536,
      devices: 'all',
      quiet: false,
      json: false,
      help: false,
    });
    expect(
      parseDemoOptions([
        '--seconds',
        '0.5',
        '--lanes',
        '8',
        '--out',
        '/tmp/d',
        '--batch',
        '16',
        '--length',
        '4096',
        '--device',
        '1',
        '--quiet',
      ]),
    ).toEqual({
      seconds: 0.5,
      lanes: 8,
      out: '/tmp/d',
      batch: 16,
      length: 4096,
      devices: [1],
      quiet: true,
      json: false,
      help: false,
    });
    expect(parseDemoOptions(['-h']).help).toBe(true);
    expect(parseDemoOptions(['--devices', '1,0']).devices).toEqual([1, 0]);
    expect(parseDemoOptions(['--devices', 'all']).devices).toBe('all');
  });

  it('names the bad option', () => {
    expect(() => parseDemoOptions(['--seconds', '0'])).toThrow(/--seconds must be a positive number/);
    expect(() => parseDemoOptions(['--seconds', '5000'])).toThrow(/at most 3600/);
    expect(() => parseDemoOptions(['--lanes', 'two'])).toThrow(/--lanes must be a whole number/);
    expect(() => parseDemoOptions(['--length', '100'])).toThrow(/--length must be between 1024/);
    expect(() => parseDemoOptions(['extra'])).toThrow(/unexpected argument "extra"/);
    expect(() => parseDemoOptions(['--out', ' '])).toThrow(/--out must name a folder/);
    expect(() => parseDemoOptions(['--devices', '0,x'])).toThrow(
      /--devices must be "all" or device ordinals like 0,1; got "0,x"/,
    );
    expect(() => parseDemoOptions(['--device', '0', '--devices', '1'])).toThrow(/give --device or --devices, not both/);
  });
});

describe('stft framing helpers', () => {
  const x = Float64Array.from([1, 2, 3, 4, 5]);
  const ext = (boundary: 'zeros' | 'even' | 'odd' | 'constant' | null, padding = 0): number[] =>
    Array.from(extendSignal(x, { extension: boundary === null ? 0 : 2, boundary, padding }));

  it("extends as scipy's zero_ext, even_ext, odd_ext and const_ext, then pads", () => {
    expect(ext('zeros')).toEqual([0, 0, 1, 2, 3, 4, 5, 0, 0]);
    expect(ext('even')).toEqual([3, 2, 1, 2, 3, 4, 5, 4, 3]);
    expect(ext('odd')).toEqual([-1, 0, 1, 2, 3, 4, 5, 6, 7]);
    expect(ext('constant')).toEqual([1, 1, 1, 2, 3, 4, 5, 5, 5]);
    expect(ext(null, 3)).toEqual([1, 2, 3, 4, 5, 0, 0, 0]);
    expect(extendSignal(Float32Array.from(x), { extension: 1, boundary: 'even', padding: 0 })).toBeInstanceOf(
      Float32Array,
    );
  });

  it('splits frames into chunks, each with the samples of the extended signal it reads', () => {
    expect(frameChunks({ nperseg: 8, hop: 6, frames: 25 }, 10)).toEqual([
      { start: 0, count: 10, inputStart: 0, inputLength: 62 },
      { start: 10, count: 10, inputStart: 60, inputLength: 62 },
      { start: 20, count: 5, inputStart: 120, inputLength: 32 },
    ]);
    expect(frameChunks({ nperseg: 8, hop: 6, frames: 3 }, 10)).toEqual([
      { start: 0, count: 3, inputStart: 0, inputLength: 20 },
    ]);
  });
});
