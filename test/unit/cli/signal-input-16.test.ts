import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeRaw16, decodeWav, raw16Value, readSignal } from '../../../src/cli/signal-input.js';
import { formatOfPath, SignalInputError } from '../../../src/cli/signal-format.js';
import { planStft, parseStftOptions, type StftCommandOptions } from '../../../src/cli/commands/stft-plan.js';
import { bf16Bits, f16Bits } from '../../../src/runtime/memory/half.js';

const dir = mkdtempSync(join(tmpdir(), 'tscuda-signal-input-16-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function wav(channels: number, fs: number, depth: string, samples: number[] | number[][]): Uint8Array {
  const w = new wavefile.WaveFile();
  w.fromScratch(channels, fs, depth, samples);
  return w.toBuffer();
}

// `+ 0`: Math.round of a small negative number is -0, which toEqual tells from the 0 an Int16Array holds.
const randomI16 = (n: number): number[] =>
  Array.from({ length: n }, () => Math.round((Math.random() * 2 - 1) * 32767) + 0);

describe('16-bit input stays 16-bit (issue 26)', () => {
  it('keeps a mono 16-bit PCM WAV as its raw Int16 samples, scale 1/32768, widened only on request', () => {
    const q = randomI16(1000);
    const s = decodeWav(wav(1, 8000, '16', q));
    expect(s.raw16?.dtype).toBe('i16');
    expect(s.raw16?.data).toBeInstanceOf(Int16Array);
    expect(Array.from(s.raw16!.data)).toEqual(q);
    expect(s.raw16?.scale).toBe(1 / 32768);
    expect(s.length).toBe(1000);
    expect([s.fs, s.encoding, s.channelNote]).toEqual([8000, '16', 'mono']);
    expect(raw16Value(s.raw16!, 3)).toBe(q[3]! / 32768);
    // The float64 view, made on first access, is what the float path always read.
    expect(Array.from(s.samples)).toEqual(q.map((v) => v / 32768));
  });

  it('picks one channel of a stereo 16-bit WAV without widening; the mean of channels still widens', () => {
    const l = randomI16(300);
    const r = randomI16(300);
    const one = decodeWav(wav(2, 44100, '16', [l, r]), { channel: 1 });
    expect(Array.from(one.raw16!.data)).toEqual(r);
    expect(one.channelNote).toBe('channel 1 of 2');
    const mean = decodeWav(wav(2, 44100, '16', [l, r]));
    expect(mean.raw16).toBeUndefined();
    expect(mean.samples[7]).toBeCloseTo((l[7]! + r[7]!) / 2 / 32768, 12);
    expect(() => decodeWav(wav(2, 8000, '16', [l, r]), { channel: 2 })).toThrow(
      /channel 2 does not exist; the file has channels 0..1/,
    );
    expect(() => decodeWav(wav(1, 8000, '16', l), { channel: 1 })).toThrow(/channel 1 asked for, but the file is mono/);
  });

  it('takes a scale for i16 and refuses 0 or non-finite ones', () => {
    expect(decodeWav(wav(1, 8000, '16', [1, 2]), { scale: 0.5 }).raw16?.scale).toBe(0.5);
    expect(() => decodeWav(wav(1, 8000, '16', [1, 2]), { scale: 0 })).toThrow(SignalInputError);
  });

  it('reads raw .i16, .f16 and .bf16 files as 2-byte samples and refuses odd sizes and non-finite floats', () => {
    const q = Int16Array.from(randomI16(64));
    const i16 = decodeRaw16(new Uint8Array(q.buffer), 'i16', { fs: 100 });
    expect(Array.from(i16.raw16!.data)).toEqual(Array.from(q));
    expect([i16.fs, i16.format]).toEqual([100, 'i16']);
    const values = [0.5, -1.25, 3, 1e-3];
    const h = Uint16Array.from(values.map(f16Bits));
    const f16 = decodeRaw16(new Uint8Array(h.buffer), 'f16');
    expect(f16.raw16!.data).toBeInstanceOf(Uint16Array);
    expect(f16.raw16!.scale).toBe(1);
    expect(f16.samples[1]).toBe(-1.25);
    const b = Uint16Array.from(values.map(bf16Bits));
    expect(decodeRaw16(new Uint8Array(b.buffer), 'bf16').samples[2]).toBe(3);
    expect(() => decodeRaw16(new Uint8Array(3), 'i16')).toThrow(/3 bytes is not a whole number of i16 samples/);
    expect(() => decodeRaw16(Uint8Array.of(0x00, 0x7c), 'f16')).toThrow(/sample 0 is not finite \(f16 bits 0x7c00\)/);
    expect(() => decodeRaw16(Uint8Array.of(0xc0, 0x7f), 'bf16')).toThrow(/not finite/);
    // Unaligned bytes (a Buffer from a pool may start at an odd offset) are copied, not misread.
    const odd = new Uint8Array(1 + q.byteLength);
    odd.set(new Uint8Array(q.buffer), 1);
    expect(Array.from(decodeRaw16(odd.subarray(1), 'i16').raw16!.data)).toEqual(Array.from(q));
  });

  it('names the formats by extension', () => {
    expect(['x.i16', 'x.s16', 'x.f16', 'x.bf16'].map(formatOfPath)).toEqual(['i16', 'i16', 'f16', 'bf16']);
  });

  it('tscuda stft: --dtype float widens, --boundary odd widens with a note, --scale reaches the reader', () => {
    const file = join(dir, 'tone.wav');
    writeFileSync(file, wav(1, 8000, '16', randomI16(4096)));
    const opts = (args: string[]): StftCommandOptions => parseStftOptions([file, ...args]) as StftCommandOptions;
    const auto = planStft(opts([]));
    expect(auto.input.raw16?.dtype).toBe('i16');
    expect(auto.dtypeNote).toBeUndefined();
    expect(planStft(opts(['--dtype', 'float'])).input.raw16).toBeUndefined();
    const odd = planStft(opts(['--boundary', 'odd']));
    expect(odd.input.raw16).toBeUndefined();
    expect(odd.dtypeNote).toMatch(/--boundary odd .* i16 samples are widened on the host/);
    expect(planStft(opts(['--scale', '0.001'])).input.raw16?.scale).toBe(0.001);
    expect(() => opts(['--dtype', 'half'])).toThrow(/--dtype/);
    expect(() => opts(['--scale', '0'])).toThrow(/--scale must be a finite non-zero number, got "0"/);
    const raw = join(dir, 'x.f16');
    writeFileSync(raw, new Uint8Array(Uint16Array.from({ length: 512 }, () => f16Bits(Math.random() - 0.5)).buffer));
    expect(readSignal(raw).raw16?.dtype).toBe('f16');
  });
});
