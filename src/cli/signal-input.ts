/**
 * Reading a signal for `tscuda stft`: WAV (8/16/24/32-bit PCM, 32/64-bit float, through the
 * `wavefile` package, which decodes every PCM depth and both float widths and validates the
 * RIFF chunks; the encoding is decided from the format tag as scipy does, wav-format.ts), raw
 * little-endian `.f32`/`.f64`, or CSV (one column, or the first numeric one, or one named).
 * Samples must be finite in every format. Pure and CUDA-free: tested in CI.
 *
 * Several channels are averaged into one by default (say `channel` to pick one); the result
 * says which in `channelNote`.
 *
 * 16-bit samples stay 16-bit (issue 26): a 16-bit PCM WAV (mono, or one channel picked) and raw
 * `.i16`/`.f16`/`.bf16` files come back as their raw samples in `raw16`, never widened on the
 * host: the GPU converts them as it reads them. `samples` (float64) is then made only if asked for.
 */
import { readFileSync } from 'node:fs';
import wavefile from 'wavefile';
import type { Precision } from '../runtime/fft/precision.js';
import { bf16Value, f16Value } from '../runtime/memory/half.js';
import { parseCsv } from './signal-csv.js';
import {
  checkFs,
  formatOfPath,
  I16_FULL_SCALE,
  scaleProblem,
  SignalInputError,
  type Raw16Samples,
  type ReadSignalOptions,
  type SignalInput,
} from './signal-format.js';
import { asEncoded, wavDataWarning, wavEncoding, wavFmt, type WaveFileLike } from './wav-format.js';

/** Reads and decodes `path`. */
export function readSignal(path: string, options: ReadSignalOptions = {}): SignalInput {
  const format = options.format ?? formatOfPath(path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as { code?: string | undefined }).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (e as Error).message;
    throw new SignalInputError(`${path}: cannot read: ${why}`);
  }
  const bytesView = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (format) {
    case 'wav':
      return decodeWav(bytesView, options, path);
    case 'f32':
    case 'f64':
      return decodeRaw(bytesView, format, options, path);
    case 'i16':
    case 'f16':
    case 'bf16':
      return decodeRaw16(bytesView, format, options, path);
    case 'csv':
      return parseCsv(bytes.toString('utf8'), options, path);
  }
}

/** Full-scale divisor of each integer PCM depth, so samples land in [-1, 1). */
const PCM_SCALE: Readonly<Record<string, number>> = { '16': 32768, '24': 8388608, '32': 2147483648 };

/** Decodes WAV bytes: integer PCM is scaled to [-1, 1), 8-bit PCM (unsigned) centred first; float stays as is. */
export function decodeWav(bytes: Uint8Array, options: ReadSignalOptions = {}, name = 'input'): SignalInput {
  checkFs(options.fs, name);
  let wav: WaveFileLike;
  try {
    wav = new wavefile.WaveFile(bytes) as unknown as WaveFileLike;
  } catch (e) {
    throw new SignalInputError(`${name}: not a readable WAV file: ${(e as Error).message}`);
  }
  // The format tag (an extensible file's SubFormat included) decides, not the bit depth alone (wav-format.ts).
  const resolved = wavEncoding(wav);
  if ('unsupported' in resolved)
    throw new SignalInputError(
      `${name}: WAV sample encoding "${resolved.unsupported}" is not supported (8/16/24/32-bit PCM, 32/64-bit float)`,
    );
  const { encoding } = resolved;
  const { numChannels, sampleRate, bitsPerSample } = wavFmt(wav);
  if (!(numChannels >= 1)) throw new SignalInputError(`${name}: WAV header has no channels`);
  const raw = wav.getSamples(false, Float64Array);
  const channels = asEncoded(Array.isArray(raw) ? raw : [raw], wav, encoding);
  const length = channels[0]?.length ?? 0;
  if (length === 0) throw new SignalInputError(`${name}: WAV file has no samples`);
  const dataWarning = wavDataWarning(wav, numChannels * Math.ceil(bitsPerSample / 8), name);
  const warnings = dataWarning === undefined ? undefined : [dataWarning];

  const mode = options.channel ?? 'mean';
  let fs = sampleRate;
  let fsSource: SignalInput['fsSource'] = 'header';
  const headerRateUsable = Number.isFinite(sampleRate) && sampleRate > 0;
  if (!headerRateUsable && options.fs === undefined)
    throw new SignalInputError(`${name}: WAV header sample rate is ${sampleRate} (give --fs to set one)`);
  if (options.fs !== undefined && options.fs !== sampleRate) {
    // A header rate that is no rate cannot disagree: the given fs simply replaces it.
    if (!options.fsOverride && headerRateUsable)
      throw new SignalInputError(
        `${name}: --fs ${options.fs} disagrees with the WAV header's ${sampleRate} Hz (leave --fs out to use the header)`,
      );
    fs = options.fs;
    fsSource = 'option';
  }
  // 16-bit PCM, one channel: the file's own samples, not widened (the GPU scales them).
  if (encoding === '16' && (channels.length === 1 || typeof mode === 'number')) {
    const c = typeof mode === 'number' ? mode : 0;
    if (!Number.isInteger(c) || c < 0 || c >= channels.length)
      throw new SignalInputError(
        channels.length === 1
          ? `${name}: channel ${c} asked for, but the file is mono`
          : `${name}: channel ${c} does not exist; the file has channels 0..${channels.length - 1}`,
      );
    const data = wavChannel16(wav, channels.length, c, length);
    const raw16: Raw16Samples = { dtype: 'i16', data, scale: scaleOption(options.scale, 'i16', name) };
    const channelNote = channels.length === 1 ? 'mono' : `channel ${c} of ${channels.length}`;
    return withRaw16(
      { fs, format: 'wav', channels: channels.length, channelNote, encoding, fsSource, warnings },
      raw16,
    );
  }
  let samples: Float64Array;
  let channelNote: string;
  if (channels.length === 1) {
    if (typeof mode === 'number' && mode !== 0)
      throw new SignalInputError(`${name}: channel ${mode} asked for, but the file is mono`);
    samples = Float64Array.from(channels[0]!);
    channelNote = 'mono';
  } else if (mode === 'mean') {
    samples = new Float64Array(length);
    for (const ch of channels) for (let i = 0; i < length; i++) samples[i]! += ch[i]!;
    for (let i = 0; i < length; i++) samples[i]! /= channels.length;
    channelNote = `mean of ${channels.length} channels`;
  } else {
    if (!Number.isInteger(mode) || mode < 0 || mode >= channels.length) {
      throw new SignalInputError(
        `${name}: channel ${mode} does not exist; the file has channels 0..${channels.length - 1}`,
      );
    }
    samples = Float64Array.from(channels[mode]!);
    channelNote = `channel ${mode} of ${channels.length}`;
  }
  // Float samples may be NaN or infinite: refused as raw and CSV input refuses them, before any GPU work.
  if (encoding === '32f' || encoding === '64')
    refuseNonFinite(channels.length === 1 ? [0] : mode === 'mean' ? channels.map((_, c) => c) : [mode], channels, name);
  if (encoding === '8') for (let i = 0; i < length; i++) samples[i] = (samples[i]! - 128) / 128;
  else if (encoding === '16') {
    // The same `scale` as the 16-bit path above, so that a mean of channels honours it too.
    const scale = scaleOption(options.scale, 'i16', name);
    for (let i = 0; i < length; i++) samples[i]! *= scale;
  } else {
    const scale = PCM_SCALE[encoding];
    if (scale !== undefined) for (let i = 0; i < length; i++) samples[i]! /= scale;
  }
  return { samples, length, fs, format: 'wav', channels: channels.length, channelNote, encoding, fsSource, warnings };
}

/** Throws for the first sample of the `used` channels that is not finite, naming it (and its channel where there are several). */
function refuseNonFinite(used: readonly number[], channels: readonly Float64Array[], name: string): void {
  for (const c of used) {
    const bad = channels[c]!.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0)
      throw new SignalInputError(
        `${name}: sample ${bad}${channels.length > 1 ? ` of channel ${c}` : ''} is ${channels[c]![bad]}; samples must be finite`,
      );
  }
}

/** Channel `c` of 16-bit PCM: wavefile's raw little-endian sample bytes (`data.samples`), de-interleaved, as they are. */
function wavChannel16(wav: WaveFileLike, channels: number, c: number, length: number): Int16Array {
  const bytes = (wav as unknown as { data: { samples: Uint8Array } }).data.samples;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) out[i] = view.getInt16(2 * (i * channels + c), true);
  return out;
}

function scaleOption(scale: number | undefined, dtype: Raw16Samples['dtype'], name: string): number {
  if (scale === undefined) return dtype === 'i16' ? I16_FULL_SCALE : 1;
  const problem = scaleProblem(scale);
  if (problem !== undefined) throw new SignalInputError(`${name}: scale ${problem}, got ${scale}`);
  return scale;
}

/** The value of one raw 16-bit sample (its bits decoded, times the scale). */
export function raw16Value(raw: Raw16Samples, i: number): number {
  const b = raw.data[i]!;
  return (raw.dtype === 'i16' ? b : raw.dtype === 'f16' ? f16Value(b) : bf16Value(b)) * raw.scale;
}

/** A SignalInput over 16-bit samples: `samples` widened only if someone reads it. */
function withRaw16(rest: Omit<SignalInput, 'samples' | 'length' | 'raw16'>, raw16: Raw16Samples): SignalInput {
  let widened: Float64Array | undefined;
  return {
    ...rest,
    length: raw16.data.length,
    raw16,
    get samples(): Float64Array {
      if (!widened) {
        widened = new Float64Array(raw16.data.length);
        for (let i = 0; i < widened.length; i++) widened[i] = raw16Value(raw16, i);
      }
      return widened;
    },
  };
}

/** Decodes raw little-endian 16-bit samples (i16, or f16/bf16 bits); non-finite f16/bf16 values are refused. */
export function decodeRaw16(
  bytes: Uint8Array,
  format: 'i16' | 'f16' | 'bf16',
  options: ReadSignalOptions = {},
  name = 'input',
): SignalInput {
  checkFs(options.fs, name);
  if (bytes.byteLength === 0) throw new SignalInputError(`${name}: the file is empty`);
  if (bytes.byteLength % 2 !== 0)
    throw new SignalInputError(
      `${name}: ${bytes.byteLength} bytes is not a whole number of ${format} samples (2 bytes each)`,
    );
  // A copy (the file's bytes may not be 2-byte aligned), not a widening: 2 bytes per sample stay 2.
  const copy = bytes.slice();
  const data =
    format === 'i16'
      ? new Int16Array(copy.buffer, 0, copy.byteLength / 2)
      : new Uint16Array(copy.buffer, 0, copy.byteLength / 2);
  if (format !== 'i16') {
    const exponent = format === 'f16' ? 0x7c00 : 0x7f80;
    const bad = data.findIndex((b) => (b & exponent) === exponent);
    if (bad >= 0)
      throw new SignalInputError(
        `${name}: sample ${bad} is not finite (${format} bits 0x${data[bad]!.toString(16)}); samples must be finite`,
      );
  }
  const raw16: Raw16Samples = { dtype: format, data, scale: scaleOption(options.scale, format, name) };
  return withRaw16(
    {
      fs: options.fs ?? 1,
      format,
      channels: 1,
      channelNote: 'mono',
      fsSource: options.fs === undefined ? 'default' : 'option',
    },
    raw16,
  );
}

/** Decodes raw little-endian float32 or float64 samples. */
export function decodeRaw(
  bytes: Uint8Array,
  format: Precision,
  options: ReadSignalOptions = {},
  name = 'input',
): SignalInput {
  checkFs(options.fs, name);
  const size = format === 'f32' ? 4 : 8;
  if (bytes.byteLength === 0) throw new SignalInputError(`${name}: the file is empty`);
  if (bytes.byteLength % size !== 0) {
    throw new SignalInputError(
      `${name}: ${bytes.byteLength} bytes is not a whole number of ${format} samples (${size} bytes each)`,
    );
  }
  const n = bytes.byteLength / size;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++)
    samples[i] = format === 'f32' ? view.getFloat32(4 * i, true) : view.getFloat64(8 * i, true);
  const bad = samples.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) throw new SignalInputError(`${name}: sample ${bad} is ${samples[bad]}; samples must be finite`);
  return {
    samples,
    length: n,
    fs: options.fs ?? 1,
    format,
    channels: 1,
    channelNote: 'mono',
    fsSource: options.fs === undefined ? 'default' : 'option',
  };
}

/**
 * 32-bit float WAV bytes (no clipping, no quantisation): of one channel (what `tscuda stft`
 * writes), or of several given as one array per channel, all of one length (`tscuda filter`).
 */
export function encodeWavFloat32(samples: ArrayLike<number> | readonly ArrayLike<number>[], fs: number): Uint8Array {
  if (!(Number.isInteger(fs) && fs > 0))
    throw new SignalInputError(`a WAV file needs a positive whole sampling rate, got ${fs}`);
  const channels =
    Array.isArray(samples) && typeof samples[0] === 'object'
      ? (samples as readonly ArrayLike<number>[])
      : [samples as ArrayLike<number>];
  const wav = new wavefile.WaveFile();
  wav.fromScratch(
    channels.length,
    fs,
    '32f',
    channels.length === 1 ? Float64Array.from(channels[0]!) : channels.map((c) => Float64Array.from(c)),
  );
  return wav.toBuffer();
}
