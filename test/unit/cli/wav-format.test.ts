/**
 * WAV sample encodings as scipy.io.wavfile reads them: the format tag decides (for
 * WAVE_FORMAT_EXTENSIBLE, the SubFormat GUID's), not the bit depth alone; 16-bit float is refused;
 * NaN or infinite float samples are refused like raw and CSV input's. The files are built byte by
 * byte here (the layout scipy and the RIFF spec read), independently of wavefile, which the reader uses.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { decodeWav } from '../../../src/cli/signal-input.js';
import { SignalInputError } from '../../../src/cli/signal-format.js';
import { outputLines, runCli } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tscuda-wav-format-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const PCM = 1;
const FLOAT = 3;
const EXTENSIBLE = 0xfffe;

/** KSDATAFORMAT_SUBTYPE_* ({0000XXXX-0000-0010-8000-00AA00389B71}) as a file stores it: the tag, then the fixed 14 bytes. */
function subformat(tag: number): Uint8Array {
  return Uint8Array.of(
    tag & 0xff,
    tag >> 8,
    0,
    0,
    0x00,
    0x00,
    0x10,
    0x00,
    0x80,
    0x00,
    0x00,
    0xaa,
    0x00,
    0x38,
    0x9b,
    0x71,
  );
}

/** A RIFF/WAVE file: a fmt chunk (16 bytes, or 40 with the extensible part) and a data chunk of `data`. */
function wavBytes(o: {
  tag: number;
  bits: number;
  channels?: number;
  fs?: number;
  data: Uint8Array;
  guid?: Uint8Array;
}): Uint8Array {
  const channels = o.channels ?? 1;
  const fs = o.fs ?? 8000;
  const extensible = o.tag === EXTENSIBLE;
  const fmtSize = extensible ? 40 : 16;
  const bytes = new Uint8Array(12 + 8 + fmtSize + 8 + o.data.byteLength);
  const v = new DataView(bytes.buffer);
  const ascii = (at: number, s: string): void => [...s].forEach((c, i) => v.setUint8(at + i, c.charCodeAt(0)));
  ascii(0, 'RIFF');
  v.setUint32(4, bytes.byteLength - 8, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  v.setUint32(16, fmtSize, true);
  v.setUint16(20, o.tag, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, fs, true);
  v.setUint32(28, (fs * channels * o.bits) / 8, true);
  v.setUint16(32, (channels * o.bits) / 8, true);
  v.setUint16(34, o.bits, true);
  if (extensible) {
    v.setUint16(36, 22, true); // cbSize
    v.setUint16(38, o.bits, true); // valid bits
    v.setUint32(40, channels === 1 ? 4 : 3, true); // channel mask
    bytes.set(o.guid ?? subformat(FLOAT), 44);
  }
  const data = 20 + fmtSize;
  ascii(data, 'data');
  v.setUint32(data + 4, o.data.byteLength, true);
  bytes.set(o.data, data + 8);
  return bytes;
}

const f32 = (xs: number[]): Uint8Array => new Uint8Array(new Float32Array(xs).buffer);
const f64 = (xs: number[]): Uint8Array => new Uint8Array(new Float64Array(xs).buffer);
const i16 = (xs: number[]): Uint8Array => new Uint8Array(new Int16Array(xs).buffer);
const i32 = (xs: number[]): Uint8Array => new Uint8Array(new Int32Array(xs).buffer);

describe('WAVE_FORMAT_EXTENSIBLE: the SubFormat names the encoding', { timeout: 20_000 }, () => {
  it('32-bit float in an extensible file is float (it was read as 32-bit integers)', () => {
    const s = decodeWav(
      wavBytes({ tag: EXTENSIBLE, bits: 32, guid: subformat(FLOAT), data: f32([0.25, -0.5, 1.5, -2]) }),
    );
    expect(s.encoding).toBe('32f');
    expect(Array.from(s.samples)).toEqual([0.25, -0.5, 1.5, -2]);
  });

  it('64-bit float, and 16- and 32-bit PCM, in an extensible file read as the plain formats do', () => {
    expect(
      Array.from(
        decodeWav(wavBytes({ tag: EXTENSIBLE, bits: 64, guid: subformat(FLOAT), data: f64([0.1, -0.3]) })).samples,
      ),
    ).toEqual([0.1, -0.3]);
    const pcm16 = decodeWav(wavBytes({ tag: EXTENSIBLE, bits: 16, guid: subformat(PCM), data: i16([16384, -32768]) }));
    expect([pcm16.encoding, Array.from(pcm16.samples)]).toEqual(['16', [0.5, -1]]);
    const pcm32 = decodeWav(
      wavBytes({ tag: EXTENSIBLE, bits: 32, guid: subformat(PCM), data: i32([1073741824, -2147483648]) }),
    );
    expect([pcm32.encoding, Array.from(pcm32.samples)]).toEqual(['32', [0.5, -1]]);
  });

  it('a stereo extensible float file is float in each channel', () => {
    const s = decodeWav(
      wavBytes({ tag: EXTENSIBLE, bits: 32, channels: 2, guid: subformat(FLOAT), data: f32([1, 3, -1, -3]) }),
      { channel: 1 },
    );
    expect(Array.from(s.samples)).toEqual([3, -3]);
  });

  it('a SubFormat GUID that is not a standard one is refused, as scipy refuses it', () => {
    const guid = subformat(FLOAT);
    guid[15] = 0;
    expect(() => decodeWav(wavBytes({ tag: EXTENSIBLE, bits: 32, guid, data: f32([1, 2]) }), {}, 'odd.wav')).toThrow(
      'odd.wav: WAV sample encoding "WAVE_FORMAT_EXTENSIBLE of an unknown SubFormat" is not supported (8/16/24/32-bit PCM, 32/64-bit float)',
    );
  });
});

describe('encodings scipy refuses are refused (exit 1, one line)', { timeout: 20_000 }, () => {
  it('16-bit IEEE float (it was read as 16-bit PCM)', async () => {
    const half = i16([0x3c00, 0x3c00, 0x3c00, 0x3c00]); // 1.0 in binary16
    expect(() => decodeWav(wavBytes({ tag: FLOAT, bits: 16, data: half }), {}, 'half.wav')).toThrow(SignalInputError);
    const path = join(dir, 'half.wav');
    writeFileSync(path, wavBytes({ tag: FLOAT, bits: 16, data: i16(Array.from({ length: 64 }, () => 0x3c00)) }));
    const r = await runCli('stft', path);
    expect(r.code).toBe(1);
    expect(outputLines(r.err)).toEqual([
      `tscuda stft: ${path}: WAV sample encoding "16-bit float" is not supported (8/16/24/32-bit PCM, 32/64-bit float)`,
    ]);
  });

  it('16-bit float in an extensible file, and 64-bit PCM (wavefile would read it as float)', () => {
    expect(() =>
      decodeWav(wavBytes({ tag: EXTENSIBLE, bits: 16, guid: subformat(FLOAT), data: i16([0x3c00]) })),
    ).toThrow(/"16-bit float" is not supported/);
    expect(() => decodeWav(wavBytes({ tag: PCM, bits: 64, data: f64([1]) }))).toThrow(/"64-bit PCM" is not supported/);
  });
});

describe('float WAV samples must be finite, as raw and CSV samples must', { timeout: 20_000 }, () => {
  it('NaN and infinities are refused naming the sample', () => {
    expect(() => decodeWav(wavBytes({ tag: FLOAT, bits: 32, data: f32([0, 1, NaN, 2]) }), {}, 'nan.wav')).toThrow(
      /^nan\.wav: sample 2 is NaN; samples must be finite$/,
    );
    expect(() => decodeWav(wavBytes({ tag: FLOAT, bits: 64, data: f64([-Infinity, 0]) }), {}, 'inf.wav')).toThrow(
      /^inf\.wav: sample 0 is -Infinity; samples must be finite$/,
    );
    expect(() => decodeWav(wavBytes({ tag: EXTENSIBLE, bits: 32, data: f32([0, Infinity]) }), {}, 'x.wav')).toThrow(
      /^x\.wav: sample 1 is Infinity/,
    );
  });

  it('in a channel that is read: its number is named; a channel not read is not refused', () => {
    const stereo = wavBytes({ tag: FLOAT, bits: 32, channels: 2, data: f32([0, 0, 1, NaN, 2, 2]) });
    expect(() => decodeWav(stereo, {}, 'st.wav')).toThrow(
      /^st\.wav: sample 1 of channel 1 is NaN; samples must be finite$/,
    );
    expect(Array.from(decodeWav(stereo, { channel: 0 }).samples)).toEqual([0, 1, 2]);
  });

  it('tscuda stft refuses it with one line and exit 1, before any GPU work', async () => {
    const path = join(dir, 'nan.wav');
    writeFileSync(path, wavBytes({ tag: FLOAT, bits: 32, data: f32([...Array.from({ length: 63 }, () => 0), NaN]) }));
    const r = await runCli('stft', path);
    expect(r.code).toBe(1);
    expect(outputLines(r.err)).toEqual([`tscuda stft: ${path}: sample 63 is NaN; samples must be finite`]);
  });
});
