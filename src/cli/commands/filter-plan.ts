/**
 * `tscuda filter`'s options, checks and filter design, without CUDA: parsing, reading the input
 * through the same code and checks as `tscuda stft` (signal-file.ts), the band against the file's
 * fs/2, and the second-order sections designed on the CPU as scipy.signal.butter / cheby1 /
 * cheby2(..., output='sos', fs=fs) design them. The GPU part (filter-run.ts) only filters. Tested in CI.
 */
import { basename, extname } from 'node:path';
import type { Precision } from '../../runtime/fft/precision.js';
import { butter, cheby1, cheby2, MAX_SOS_SECTIONS, sosfiltfiltPadlen, type Sos } from '../../signal/filter-design.js';
import { DEVICE_FLAGS, deviceOptionsUsage, deviceSelection, type DeviceSelection } from '../device-option.js';
import { choiceOption, decimalNumber, intOption, numberOption, parseCommandLine, UsageError } from '../options.js';
import { SignalInputError, type SignalInput } from '../signal-format.js';
import {
  oneInputFile,
  readSignalFile,
  SIGNAL_FILE_OPTIONS,
  signalFileOptions,
  type SignalFileOptions,
} from './signal-file.js';

/** The band types the command designs (--band, --lowpass, --highpass). */
export type FilterKind = 'bandpass' | 'lowpass' | 'highpass';
/** The designs it takes (--design: scipy.signal's functions of those names). */
export type FilterDesignName = 'butter' | 'cheby1' | 'cheby2';

/** The options of `tscuda filter`, parsed. */
export interface FilterCommandOptions extends SignalFileOptions {
  /** The WAV written. */
  out: string;
  btype: FilterKind;
  /** Hz: one cutoff, or the band's two edges. */
  cutoff: number | [low: number, high: number];
  order: number;
  design: FilterDesignName;
  /** cheby1's passband ripple and cheby2's stopband attenuation, dB. */
  rp: number;
  rs: number;
  /** Forward and backward (scipy.signal.sosfiltfilt) instead of forward (sosfilt). */
  zeroPhase: boolean;
  precision: Precision;
  devices: DeviceSelection;
  json: boolean;
}

/** A filter's order when --order is not given (the engine's default too). */
export const DEFAULT_ORDER = 4;

/** `tscuda filter --help`. */
export const FILTER_USAGE = `usage: tscuda filter <file> --band LOW HIGH | --lowpass F | --highpass F [options]
Filters a signal on the GPU with an IIR filter designed as scipy.signal designs it (output='sos') and
writes it as a 32-bit float WAV of the same sampling rate and channels. <file> is read as tscuda stft
reads it: a WAV (every channel is filtered, or one with --channel), raw .f32/.f64/.i16/.f16/.bf16 or
CSV/TXT (one column, or --column).
Options:
  --band LOW HIGH    band-pass edges in Hz (also --band LOW:HIGH)
  --lowpass F        low-pass cutoff in Hz
  --highpass F       high-pass cutoff in Hz
  --order N          filter order (default ${DEFAULT_ORDER}; a band-pass of order N has N sections, at most ${MAX_SOS_SECTIONS})
  --design D         butter (default), cheby1 or cheby2
  --rp DB            cheby1: passband ripple (default 1)
  --rs DB            cheby2: stopband attenuation (default 40)
  --zero-phase       forward and backward (scipy.signal.sosfiltfilt, default padding); default forward
                     from a zero state (scipy.signal.sosfilt)
  --out FILE.wav     the filtered signal (default <file name>-filtered.wav)
  --fs HZ            sampling frequency (WAV: the header's; raw and CSV: default 1; the WAV written
                     needs a whole number)
  --format F         wav, f32, f64, i16, f16, bf16 or csv (default: from the extension)
  --channel N|mean   one channel of a multi-channel WAV, or their mean (default: every channel)
  --column N|NAME    CSV column by 0-based index or header name
  --scale X          i16 samples: the value of one step (default 1/32768); f16/bf16: a factor (default 1)
  --precision P      f32 (default) or f64 samples on the GPU (the filter's arithmetic is float64 in both)
${deviceOptionsUsage(21, 'the channels are spread over them')}
  --json             the summary as one JSON object on stdout (the text lines on stderr)
example: tscuda filter speech.wav --band 300 3400 --order 6 --zero-phase --out telephone.wav`;

/** `--band LOW HIGH` as `--band LOW:HIGH` (parseArgs takes one value per option): two numbers after --band are joined. */
function joinBandEdges(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const [a, low, high] = [args[i]!, args[i + 1], args[i + 2]];
    if (a === '--band' && low !== undefined && high !== undefined && !low.includes(':') && !high.startsWith('-')) {
      out.push(a, `${low}:${high}`);
      i += 2;
    } else out.push(a);
  }
  return out;
}

/** A frequency option's value in Hz: a positive finite number. */
function hertz(option: string, text: string): number {
  const v = decimalNumber(text);
  if (!(Number.isFinite(v) && v > 0))
    throw new UsageError(`--${option} must be a positive number of Hz, got "${text}"`);
  return v;
}

/** Parses `tscuda filter` arguments; throws UsageError naming the bad option. */
export function parseFilterOptions(args: readonly string[]): FilterCommandOptions | 'help' {
  const { values, positionals } = parseCommandLine(
    joinBandEdges(args),
    {
      ...SIGNAL_FILE_OPTIONS,
      band: { type: 'string' },
      lowpass: { type: 'string' },
      highpass: { type: 'string' },
      order: { type: 'string' },
      design: { type: 'string' },
      rp: { type: 'string' },
      rs: { type: 'string' },
      'zero-phase': { type: 'boolean' },
      out: { type: 'string' },
      precision: { type: 'string' },
      ...DEVICE_FLAGS,
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    true,
  );
  if (values.help) return 'help';
  const file = oneInputFile(positionals);
  const given = (['band', 'lowpass', 'highpass'] as const).filter((k) => values[k] !== undefined);
  if (given.length !== 1)
    throw new UsageError(
      given.length === 0
        ? 'say what to keep: --band LOW HIGH, --lowpass F or --highpass F'
        : `give one of --band, --lowpass and --highpass, got ${given.map((k) => `--${k}`).join(' and ')}`,
    );
  let btype: FilterKind;
  let cutoff: number | [number, number];
  if (values.band !== undefined) {
    const m = /^\s*([^:]+):([^:]+)\s*$/.exec(values.band);
    if (!m) throw new UsageError(`--band takes LOW HIGH (or LOW:HIGH) in Hz, got "${values.band}"`);
    const [low, high] = [hertz('band', m[1]!), hertz('band', m[2]!)];
    if (!(low < high)) throw new UsageError(`--band ${low} ${high}: the low edge must be below the high edge`);
    [btype, cutoff] = ['bandpass', [low, high]];
  } else if (values.lowpass !== undefined) [btype, cutoff] = ['lowpass', hertz('lowpass', values.lowpass)];
  else [btype, cutoff] = ['highpass', hertz('highpass', values.highpass!)];
  const order = intOption('order', values.order, 1) ?? DEFAULT_ORDER;
  const sections = btype === 'bandpass' ? order : Math.ceil(order / 2);
  if (sections > MAX_SOS_SECTIONS)
    throw new UsageError(
      `--order ${order} makes ${sections} sections; the GPU filter keeps at most ${MAX_SOS_SECTIONS}`,
    );
  const design = choiceOption('design', values.design, ['butter', 'cheby1', 'cheby2'] as const) ?? 'butter';
  if (values.rp !== undefined && design !== 'cheby1')
    throw new UsageError("--rp is cheby1's passband ripple: give --design cheby1");
  if (values.rs !== undefined && design !== 'cheby2')
    throw new UsageError("--rs is cheby2's stopband attenuation: give --design cheby2");
  const stem = basename(file, extname(file)) || 'signal';
  const out = values.out ?? `${stem}-filtered.wav`;
  if (out.trim() === '' || extname(out).toLowerCase() !== '.wav')
    throw new UsageError(`--out names the WAV file written, ending in .wav, got "${out}"`);
  return {
    ...signalFileOptions(file, values),
    out,
    btype,
    cutoff,
    order,
    design,
    rp: numberOption('rp', values.rp) ?? 1,
    rs: numberOption('rs', values.rs) ?? 40,
    zeroPhase: values['zero-phase'] === true,
    precision: choiceOption('precision', values.precision, ['f32', 'f64'] as const) ?? 'f32',
    devices: deviceSelection(values),
    json: values.json === true,
  };
}

/** Everything the GPU part needs, checked: the channels to filter, their sampling rate and the sections. */
export interface FilterPlan {
  options: FilterCommandOptions;
  /** The channels as read (one, or each channel of a WAV), each the same length. */
  channels: SignalInput[];
  fs: number;
  sos: Sos;
}

/**
 * Reads the input (every channel of a WAV unless --channel) and designs the filter for its fs;
 * throws UsageError (a cutoff at or past fs/2, a rate no WAV holds) or SignalInputError.
 */
export function planFilter(options: FilterCommandOptions): FilterPlan {
  const first = readSignalFile(options);
  // A WAV of several channels, none chosen: each channel is read as --channel C would read it, and filtered.
  const channels =
    first.format === 'wav' && first.channels > 1 && options.channel === undefined
      ? Array.from({ length: first.channels }, (_, c) => readSignalFile({ ...options, channel: c }))
      : [first];
  const fs = first.fs;
  if (!Number.isInteger(fs))
    throw new UsageError(`the WAV written needs a whole sampling rate; fs is ${fs} Hz (give --fs)`);
  const nyquist = fs / 2;
  const edges = typeof options.cutoff === 'number' ? [options.cutoff] : options.cutoff;
  const option = options.btype === 'bandpass' ? 'band' : options.btype;
  for (const edge of edges)
    if (!(edge < nyquist))
      throw new UsageError(
        `--${option} ${edges.join(' ')}: ${edge} Hz is not below fs/2 = ${nyquist} Hz (fs ${fs} Hz${first.fsSource === 'default' ? ', the default: give --fs' : ''})`,
      );
  const wn = options.cutoff;
  const design = { btype: options.btype, fs };
  const sos =
    options.design === 'butter'
      ? butter(options.order, wn, design)
      : options.design === 'cheby1'
        ? cheby1(options.order, options.rp, wn, design)
        : cheby2(options.order, options.rs, wn, design);
  if (options.zeroPhase) {
    const padlen = sosfiltfiltPadlen(sos);
    if (!(first.length > padlen))
      throw new SignalInputError(
        `${options.file}: --zero-phase pads the signal by ${padlen} samples at each end (scipy's sosfiltfilt); the signal has ${first.length}`,
      );
  }
  return { options, channels, fs, sos };
}
