/**
 * What `tscuda stft` reads: the input formats (chosen by extension unless given), the options of
 * reading one, the signal that comes back, and the one error a file that cannot be read raises.
 */
import { extname } from 'node:path';

/** The input formats, chosen by file extension unless given: raw i16/f16/bf16 are little-endian 16-bit samples. */
export type SignalFormat = 'wav' | 'f32' | 'f64' | 'csv' | 'i16' | 'f16' | 'bf16';

/** Every SignalFormat. */
export const SIGNAL_FORMATS: readonly SignalFormat[] = ['wav', 'f32', 'f64', 'csv', 'i16', 'f16', 'bf16'];

/** The default i16 scale: full scale (32768) to 1, as audio libraries read 16-bit PCM. */
export const I16_FULL_SCALE = 1 / 32768;

/** 16-bit samples as the file holds them, for the GPU to convert (value = sample * scale; f16/bf16 as raw bits). */
export interface Raw16Samples {
  dtype: 'i16' | 'f16' | 'bf16';
  data: Int16Array | Uint16Array;
  scale: number;
}

/** A signal read from a file: one channel of float64 samples and its sampling frequency. */
export interface SignalInput {
  /** The samples as float64 (for 16-bit input made on first access, from `raw16`). */
  samples: Float64Array;
  /** Samples in the channel. */
  length: number;
  /** 16-bit input: the samples as read, not widened (see the module comment). */
  raw16?: Raw16Samples | undefined;
  /** Hz: the WAV header's rate, or the `fs` option, or 1 (scipy's default) for raw and CSV. */
  fs: number;
  format: SignalFormat;
  /** Channels in the file (1 for raw and CSV). */
  channels: number;
  /** How several channels became one: 'mono', 'mean of 2 channels', 'channel 1 of 2'. */
  channelNote: string;
  /** WAV sample encoding as wavefile names it ('16', '24', '32', '32f', '64', '8'); absent otherwise. */
  encoding?: string | undefined;
  /** Where fs came from: 'header', 'option' or 'default'. */
  fsSource: 'header' | 'option' | 'default';
  /** What was read other than the header says (a truncated WAV), one line each, naming the file. */
  warnings?: string[] | undefined;
}

/** Options of `readSignal`. */
export interface ReadSignalOptions {
  /** Overrides the extension. */
  format?: SignalFormat | undefined;
  /** Sampling frequency in Hz for raw and CSV input; for WAV it must agree with the header or it overrides it (`fsOverride`). */
  fs?: number | undefined;
  /** Let `fs` replace a WAV header's rate instead of being an error when they differ. */
  fsOverride?: boolean | undefined;
  /** Which channel of a multi-channel WAV (0-based), or 'mean' (default). */
  channel?: number | 'mean' | undefined;
  /** CSV: the column, by 0-based index or header name; default the first numeric column. */
  column?: number | string | undefined;
  /** i16 samples (16-bit PCM WAV, raw .i16): the value of one step (default 1/32768, full scale to 1); f16/bf16: a factor (default 1). */
  scale?: number | undefined;
}

/**
 * The formats each format-specific option of `readSignal` applies to: any other format ignores it,
 * so the CLI refuses it there. `what` names those formats for a message.
 */
export const FORMAT_SPECIFIC_OPTIONS = {
  channel: { formats: ['wav'], what: 'WAV input' },
  column: { formats: ['csv'], what: 'CSV input' },
  scale: { formats: ['wav', 'i16', 'f16', 'bf16'], what: '16-bit input (16-bit PCM WAV, .i16, .f16, .bf16)' },
} as const satisfies Record<string, { formats: readonly SignalFormat[]; what: string }>;

/** Why `scale` cannot scale 16-bit samples, or undefined: any finite non-zero number can (a negative one flips the sign). */
export function scaleProblem(scale: number): string | undefined {
  return Number.isFinite(scale) && scale !== 0 ? undefined : 'must be a finite non-zero number';
}

/** The file cannot be read as a signal: the message names the file and what is wrong. */
export class SignalInputError extends Error {
  override readonly name = 'SignalInputError';
}

/** The format for a file name, by its extension (case-insensitive). */
export function formatOfPath(path: string): SignalFormat {
  const ext = extname(path).toLowerCase().replace(/^\./, '');
  if (ext === 'wav' || ext === 'wave') return 'wav';
  if (ext === 'f32' || ext === 'f64' || ext === 'csv' || ext === 'i16' || ext === 'f16' || ext === 'bf16') return ext;
  if (ext === 's16') return 'i16';
  if (ext === 'txt' || ext === 'tsv') return 'csv';
  throw new SignalInputError(
    `${path}: unknown extension "${extname(path) || '(none)'}"; expected .wav, .f32, .f64, .i16, .f16, .bf16 or .csv (or pass --format)`,
  );
}

/** `fs`, when given, is a positive number (`what` names the input). */
export function checkFs(fs: number | undefined, what: string): void {
  if (fs !== undefined && !(Number.isFinite(fs) && fs > 0))
    throw new SignalInputError(`${what}: fs must be a positive number, got ${fs}`);
}
