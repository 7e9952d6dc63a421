/**
 * The input file of the signal commands (`tscuda stft`, `tscuda filter`): the options that say how
 * to read it (--fs, --format, --channel, --column, --scale), parsed, and the file read with them
 * through signal-input.ts (formats and errors: signal-format.ts), with the checks both commands make (an option the format would ignore
 * is refused, --scale only on 16-bit samples, at least MIN_SERIES_LENGTH samples). Same options,
 * same checks, same errors in both commands. CUDA-free.
 */
import { MIN_SERIES_LENGTH } from '../../engine/validate.js';
import { choiceOption, decimalNumber, intOption, numberOption, UsageError } from '../options.js';
import {
  FORMAT_SPECIFIC_OPTIONS,
  formatOfPath,
  scaleProblem,
  SIGNAL_FORMATS,
  SignalInputError,
  type SignalFormat,
  type SignalInput,
} from '../signal-format.js';
import { readSignal } from '../signal-input.js';

/** How to read the input file, as the command line says. */
export interface SignalFileOptions {
  file: string;
  fs: number | undefined;
  format: SignalFormat | undefined;
  channel: number | 'mean' | undefined;
  column: number | string | undefined;
  /** i16 input: the value of one step (default 1/32768); f16/bf16: a factor (default 1). */
  scale: number | undefined;
}

/** The parseCommandLine entries of those options. */
export const SIGNAL_FILE_OPTIONS = {
  fs: { type: 'string' },
  format: { type: 'string' },
  channel: { type: 'string' },
  column: { type: 'string' },
  scale: { type: 'string' },
} as const;

/** Those options' values, parsed (UsageError naming a bad one). */
export function signalFileOptions(
  file: string,
  values: {
    fs?: string | undefined;
    format?: string | undefined;
    channel?: string | undefined;
    column?: string | undefined;
    scale?: string | undefined;
  },
): SignalFileOptions {
  let channel: number | 'mean' | undefined;
  if (values.channel !== undefined)
    channel = values.channel === 'mean' ? 'mean' : intOption('channel', values.channel, 0, 65535);
  let column: number | string | undefined;
  if (values.column !== undefined) column = /^\d+$/.test(values.column) ? Number(values.column) : values.column;
  return {
    file,
    fs: numberOption('fs', values.fs),
    format: choiceOption('format', values.format, SIGNAL_FORMATS),
    channel,
    column,
    scale: scaleOption(values.scale),
  };
}

/**
 * Reads the input as `options` say, with the checks of every signal command; throws UsageError (an
 * option that does not apply) or SignalInputError (a file that cannot be read, or too short).
 */
export function readSignalFile(options: SignalFileOptions): SignalInput {
  const format = options.format ?? formatOfPath(options.file);
  refuseIgnoredOptions(options, format);
  const input = readSignal(options.file, {
    format,
    ...(options.fs !== undefined ? { fs: options.fs, fsOverride: true } : {}),
    ...(options.channel !== undefined ? { channel: options.channel } : {}),
    ...(options.column !== undefined ? { column: options.column } : {}),
    ...(options.scale !== undefined ? { scale: options.scale } : {}),
  });
  if (options.scale !== undefined && input.format === 'wav' && input.encoding !== '16') {
    throw new UsageError(
      `--scale applies only to ${FORMAT_SPECIFIC_OPTIONS.scale.what}, and ${options.file} is a WAV of encoding ${input.encoding}`,
    );
  }
  // Checked here, in the file's terms: the engine would refuse it only after the GPU part started.
  if (input.length < MIN_SERIES_LENGTH) {
    throw new SignalInputError(
      `${options.file}: the signal has ${input.length} sample${input.length === 1 ? '' : 's'}; at least ${MIN_SERIES_LENGTH} are needed`,
    );
  }
  return input;
}

/** --scale by readSignal's own rule (scaleProblem: negative scales flip the sign), or undefined. */
function scaleOption(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const scale = decimalNumber(v);
  const problem = scaleProblem(scale);
  if (problem !== undefined) throw new UsageError(`--scale ${problem}, got "${v}"`);
  return scale;
}

/** Refuses --channel, --column or --scale where `format` would ignore it (FORMAT_SPECIFIC_OPTIONS says where each applies). */
function refuseIgnoredOptions(options: SignalFileOptions, format: SignalFormat): void {
  for (const option of Object.keys(FORMAT_SPECIFIC_OPTIONS) as (keyof typeof FORMAT_SPECIFIC_OPTIONS)[]) {
    const { formats, what } = FORMAT_SPECIFIC_OPTIONS[option];
    if (options[option] !== undefined && !(formats as readonly SignalFormat[]).includes(format)) {
      throw new UsageError(`--${option} applies only to ${what}, not ${format} input`);
    }
  }
}

/** The one input file a signal command's positionals name; UsageError when none (an empty name included) or several. */
export function oneInputFile(positionals: readonly string[]): string {
  // An empty name ("$FILE" unset) is no file either, not a file without an extension.
  if (positionals.length === 0 || positionals[0]!.trim() === '') throw new UsageError('no input file given');
  if (positionals.length > 1)
    throw new UsageError(`one input file at a time, got ${positionals.length}: ${positionals.join(', ')}`);
  return positionals[0]!;
}
