import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeRaw, decodeWav, encodeWavFloat32, readSignal } from '../../../src/cli/signal-input.js';
import { parseCsv } from '../../../src/cli/signal-csv.js';
import { formatOfPath, SignalInputError } from '../../../src/cli/signal-format.js';

const dir = mkdtempSync(join(tmpdir(), 'tscuda-signal-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** WAV bytes made by wavefile itself (an independent encoder of each depth). */
function wav(channels: number, fs: number, depth: string, samples: number[] | number[][]): Uint8Array {
  const w = new wavefile.WaveFile();
  w.fromScratch(channels, fs, depth, samples);
  return w.toBuffer();
}

function close(actual: ArrayLike<number>, expected: readonly number[], tol = 1e-12): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => expect(Math.abs(actual[i]! - e), `sample ${i}`).toBeLessThanOrEqual(tol));
}

describe('WAV input', () => {
  it('scales 16-bit PCM to [-1, 1) and reads the header rate', () => {
    const s = decodeWav(wav(1, 8000, '16', [0, 16384, -32768, 32767]));
    expect(s.fs).toBe(8000);
    expect(s.fsSource).toBe('header');
    expect(s.encoding).toBe('16');
    expect(s.channels).toBe(1);
    expect(s.channelNote).toBe('mono');
    close(s.samples, [0, 0.5, -1, 32767 / 32768]);
  });

  it('scales 24-bit PCM by 2^23', () => {
    const s = decodeWav(wav(1, 44100, '24', [0, 4194304, -8388608, 8388607]));
    expect(s.encoding).toBe('24');
    close(s.samples, [0, 0.5, -1, 8388607 / 8388608]);
  });

  it('scales 32-bit integer PCM by 2^31', () => {
    const s = decodeWav(wav(1, 1000, '32', [1073741824, -2147483648]));
    close(s.samples, [0.5, -1]);
  });

  it('keeps 32-bit and 64-bit float samples as they are', () => {
    const f32 = decodeWav(wav(1, 48000, '32f', [0.25, -0.75, 1.5]));
    expect(f32.encoding).toBe('32f');
    close(f32.samples, [0.25, -0.75, 1.5], 1e-7);
    const f64 = decodeWav(wav(1, 48000, '64', [0.1, -0.3]));
    close(f64.samples, [0.1, -0.3]);
  });

  it('centres unsigned 8-bit PCM', () => {
    close(decodeWav(wav(1, 8000, '8', [128, 255, 0])).samples, [0, 127 / 128, -1]);
  });

  it('averages the channels of a stereo file by default and says so', () => {
    const s = decodeWav(
      wav(2, 8000, '16', [
        [16384, 0],
        [0, -16384],
      ]),
    );
    expect(s.channels).toBe(2);
    expect(s.channelNote).toBe('mean of 2 channels');
    close(s.samples, [0.25, -0.25]);
  });

  it('picks one channel when asked, and refuses one that does not exist', () => {
    const bytes = wav(2, 8000, '16', [
      [16384, 0],
      [0, -16384],
    ]);
    const right = decodeWav(bytes, { channel: 1 });
    expect(right.channelNote).toBe('channel 1 of 2');
    close(right.samples, [0, -0.5]);
    expect(() => decodeWav(bytes, { channel: 2 })).toThrow(/channel 2 does not exist; the file has channels 0\.\.1/);
    expect(() => decodeWav(wav(1, 8000, '16', [1, 2]), { channel: 1 })).toThrow(/mono/);
  });

  it('refuses --fs that disagrees with the header unless told to override', () => {
    const bytes = wav(1, 8000, '16', [1, 2, 3]);
    expect(() => decodeWav(bytes, { fs: 16000 })).toThrow(/disagrees with the WAV header's 8000 Hz/);
    const s = decodeWav(bytes, { fs: 16000, fsOverride: true });
    expect(s.fs).toBe(16000);
    expect(s.fsSource).toBe('option');
    expect(decodeWav(bytes, { fs: 8000 }).fsSource).toBe('header');
  });

  it('names a file that is not a WAV', () => {
    expect(() => decodeWav(new Uint8Array([1, 2, 3, 4]), {}, 'x.wav')).toThrow(SignalInputError);
    expect(() => decodeWav(new Uint8Array([1, 2, 3, 4]), {}, 'x.wav')).toThrow(/^x\.wav: not a readable WAV file/);
  });

  it('round-trips what tscuda stft writes (32-bit float)', () => {
    const x = [0.5, -0.125, 0.75, 1e-3];
    const back = decodeWav(encodeWavFloat32(Float64Array.from(x), 22050));
    expect(back.fs).toBe(22050);
    expect(back.encoding).toBe('32f');
    close(back.samples, x, 1e-7);
    expect(() => encodeWavFloat32([1], 0.5)).toThrow(/whole sampling rate/);
  });
});

describe('raw input', () => {
  it('reads little-endian float32 and float64, fs from the option or 1', () => {
    const f32 = new Float32Array([1.5, -2, 3.25]);
    const s = decodeRaw(new Uint8Array(f32.buffer), 'f32', { fs: 100 });
    close(s.samples, [1.5, -2, 3.25]);
    expect(s.fs).toBe(100);
    const f64 = new Float64Array([0.1, 0.2]);
    const d = decodeRaw(new Uint8Array(f64.buffer), 'f64');
    close(d.samples, [0.1, 0.2]);
    expect(d.fs).toBe(1);
    expect(d.fsSource).toBe('default');
  });

  it('refuses a partial sample, an empty file and non-finite values', () => {
    expect(() => decodeRaw(new Uint8Array(6), 'f32', {}, 'a.f32')).toThrow(
      /a\.f32: 6 bytes is not a whole number of f32 samples/,
    );
    expect(() => decodeRaw(new Uint8Array(0), 'f64', {}, 'a.f64')).toThrow(/empty/);
    expect(() => decodeRaw(new Uint8Array(new Float32Array([1, Number.NaN]).buffer), 'f32', {}, 'a.f32')).toThrow(
      /sample 1 is NaN/,
    );
    expect(() => decodeRaw(new Uint8Array(4), 'f32', { fs: -1 }, 'a.f32')).toThrow(/fs must be a positive number/);
  });
});

describe('CSV input', () => {
  it('reads one column without a header', () => {
    const s = parseCsv('1\n2.5\n-3e-1\n');
    close(s.samples, [1, 2.5, -0.3]);
    expect(s.channelNote).toBe('column 0');
  });

  it('takes the first numeric column, skipping a header, comments and blank lines', () => {
    const s = parseCsv('# made by hand\nname,value,other\n\nA,1,9\nB,2,8\n', {}, 'x.csv');
    close(s.samples, [1, 2]);
    expect(s.channelNote).toBe('column "value"');
  });

  it('picks a column by name or index, with semicolons, tabs or spaces', () => {
    close(parseCsv('t;v\n0;5\n1;6\n', { column: 'v' }).samples, [5, 6]);
    close(parseCsv('0\t5\n1\t6\n', { column: 1 }).samples, [5, 6]);
    close(parseCsv('0 5\n1   6\n', { column: 1 }).samples, [5, 6]);
  });

  it('names the line and column of a bad cell', () => {
    expect(() => parseCsv('v\n1\nabc\n3\n', {}, 'x.csv')).toThrow(/^x\.csv: line 3, column 0: "abc" is not a number$/);
    expect(() => parseCsv('a,b\n1,2\n3\n', { column: 1 }, 'x.csv')).toThrow(/line 3 has no value in column 1/);
  });

  it('refuses empty files, missing columns and files with no numbers', () => {
    expect(() => parseCsv('', {}, 'x.csv')).toThrow(/no data rows/);
    expect(() => parseCsv('a,b\n', {}, 'x.csv')).toThrow(/header row but no data rows/);
    expect(() => parseCsv('a,b\nx,y\n', {}, 'x.csv')).toThrow(/has no numeric column/);
    expect(() => parseCsv('a,b\n1,2\n', { column: 'c' }, 'x.csv')).toThrow(
      /no column named "c"; the columns are "a", "b"/,
    );
    expect(() => parseCsv('1,2\n', { column: 'c' }, 'x.csv')).toThrow(/no header row/);
    expect(() => parseCsv('1,2\n', { column: 5 }, 'x.csv')).toThrow(/column 5 does not exist/);
  });
});

describe('readSignal', () => {
  it('chooses the format by extension and names unreadable files', () => {
    expect(formatOfPath('a.WAV')).toBe('wav');
    expect(formatOfPath('a.f32')).toBe('f32');
    expect(formatOfPath('a.txt')).toBe('csv');
    expect(() => formatOfPath('a.mp3')).toThrow(/unknown extension "\.mp3"/);
    expect(() => readSignal(join(dir, 'missing.wav'))).toThrow(/cannot read: no such file/);
    expect(() => readSignal(dir, { format: 'csv' })).toThrow(/is a directory/);
  });

  it('reads files of each kind from disk', () => {
    const w = join(dir, 'tone.wav');
    writeFileSync(w, wav(1, 8000, '16', [0, 16384]));
    close(readSignal(w).samples, [0, 0.5]);
    const r = join(dir, 'x.f64');
    writeFileSync(r, new Uint8Array(new Float64Array([4, 5]).buffer));
    close(readSignal(r, { fs: 10 }).samples, [4, 5]);
    const c = join(dir, 'x.csv');
    writeFileSync(c, 'v\n7\n8\n');
    expect(readSignal(c, { fs: 3 }).fs).toBe(3);
    const mislabelled = join(dir, 'x.dat');
    writeFileSync(mislabelled, '1\n2\n');
    close(readSignal(mislabelled, { format: 'csv' }).samples, [1, 2]);
  });
});
