/**
 * `tscuda stft`'s options, checks and framing, without CUDA: parsing (scipy.signal.stft's names
 * and defaults), reading the input and checking the options against it (the framing is the signal
 * layer's geometry, made once), and the extension and chunking of the frames the GPU part
 * (stft-run.ts) runs. Tested in CI.
 */
import { basename, extname } from 'node:path';
import type { Band } from '../../engine/types.js';
import type { Precision } from '../../runtime/fft/precision.js';
import {
  frameSpan,
  spectralGeometry,
  STFT_DEFAULTS,
  type Boundary,
  type FrameLayout,
  type SpectralGeometry,
} from '../../signal/geometry.js';
import { resolveWindow, type WindowSpec } from '../../signal/window.js';
import { DEVICE_FLAGS, deviceOptionsUsage, deviceSelection } from '../device-option.js';
import {
  choiceOption,
  decimalNumber,
  folderOption,
  intOption,
  numberOption,
  parseCommandLine,
  UsageError,
} from '../options.js';
import type { SignalInput } from '../signal-format.js';
import {
  oneInputFile,
  readSignalFile,
  SIGNAL_FILE_OPTIONS,
  signalFileOptions,
  type SignalFileOptions,
} from './signal-file.js';

/** The options of `tscuda stft`, parsed. */
export interface StftCommandOptions extends SignalFileOptions {
  nperseg: number | undefined;
  noverlap: number | undefined;
  nfft: number | undefined;
  window: WindowSpec;
  detrend: 'constant' | 'linear' | false;
  scaling: 'spectrum' | 'psd';
  boundary: Boundary;
  padded: boolean;
  bands: Band[];
  out: string;
  dbRange: number;
  precision: Precision;
  /** The GPUs the spectrogram's chunks spread over (--devices / --device): every one, or these ordinals. */
  devices: 'all' | number[];
  /** 'auto': 16-bit input (16-bit PCM WAV, .i16/.f16/.bf16) goes to the GPU in 16 bits; 'float': widened on the host first. */
  dtype: 'auto' | 'float';
  saveMagnitude: boolean;
  /** STFT frames per GPU call: bounds device memory on long signals and paces the progress bar. */
  chunkFrames: number;
  quiet: boolean;
  /** The summary as one JSON object on stdout (the text lines go to stderr). */
  json: boolean;
}

export const STFT_USAGE = `usage: tscuda stft <file> [options]
The STFT of a signal on the GPU (scipy.signal.stft's names and defaults). <file> is a WAV (8/16/24/32-bit
PCM or 32/64-bit float; several channels are averaged unless --channel), raw little-endian .f32/.f64 or
16-bit .i16/.f16/.bf16, or CSV/TXT (one column, or the first numeric one, or --column). Writes to --out:
  spectrogram.png  |Zxx| in dB as a figure: time (s) and frequency (Hz) axes, a dB colour bar, the
                   parameters in its title (spectrogram.svg: the same figure as SVG)
  bands.csv, bands.json  power of each --band (one-sided Parseval: all bands together give mean(x^2)),
                   its share of the total, and the dominant cycle
  band-<lo>-<hi>Hz.wav  each band's band-passed signal (32-bit float WAV)
  summary.json     the STFT geometry, the axes and what was written
Options:
  --fs HZ            sampling frequency (WAV: the header's; raw and CSV: default 1, scipy's)
  --nperseg N        samples per segment (default 256)
  --noverlap N       samples shared by consecutive segments (default nperseg/2)
  --nfft N           FFT length, >= nperseg (default nperseg)
  --window W         hann (default), hamming, blackman, blackmanharris, bartlett, boxcar, flattop,
                     nuttall, triang, cosine, tukey[:alpha], kaiser:beta, gaussian:std
  --detrend D        none (default), constant or linear (per segment)
  --scaling S        spectrum (default) or psd
  --boundary B       zeros (default), even, odd, constant or none
  --no-padded        do not zero-pad the end to whole segments (scipy padded=False)
  --band LO:HI       a band in Hz for band powers and a band-passed WAV; repeat for several
                     (default: octave bands below fs/2, powers only)
  --out DIR          output folder (default <file name>-stft)
  --format F         wav, f32, f64, i16, f16, bf16 or csv (default: from the extension)
  --dtype D          auto (default: 16-bit PCM WAV and .i16/.f16/.bf16 go to the GPU in 16 bits and
                     are converted there) or float (widen on the host first)
  --scale X          i16 samples: the value of one step (default 1/32768: full scale to 1);
                     f16/bf16: a factor (default 1)
  --channel N|mean   which channel of a multi-channel WAV (default mean)
  --column N|NAME    CSV column by 0-based index or header name
  --db-range DB      dB below the peak shown in the picture (default 80)
  --precision P      f32 (default) or f64 arithmetic on the GPU
${deviceOptionsUsage(21, "the spectrogram's chunks are spread over them")}
  --save-magnitude   also write stft-magnitude.f32 (|Zxx|, freqs x frames, float32 little-endian)
  --chunk-frames N   STFT frames per GPU call (default 8192): bounds GPU memory on long signals
  --quiet            no progress bar
  --json             the summary as one JSON object on stdout (the text lines on stderr)
example: tscuda stft recording.wav --nperseg 1024 --band 300:3400 --band 50:60 --out speech`;

/** STFT frames per GPU call unless --chunk-frames says otherwise. */
export const DEFAULT_CHUNK_FRAMES = 8192;

/** Parses `tscuda stft` arguments; throws UsageError naming the bad option. */
export function parseStftOptions(args: readonly string[]): StftCommandOptions | 'help' {
  const { values, positionals } = parseCommandLine(
    args,
    {
      ...SIGNAL_FILE_OPTIONS,
      nperseg: { type: 'string' },
      noverlap: { type: 'string' },
      nfft: { type: 'string' },
      window: { type: 'string' },
      detrend: { type: 'string' },
      scaling: { type: 'string' },
      boundary: { type: 'string' },
      'no-padded': { type: 'boolean' },
      band: { type: 'string', multiple: true },
      out: { type: 'string' },
      'db-range': { type: 'string' },
      precision: { type: 'string' },
      dtype: { type: 'string' },
      ...DEVICE_FLAGS,
      'save-magnitude': { type: 'boolean' },
      'chunk-frames': { type: 'string' },
      quiet: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    true,
  );
  if (values.help) return 'help';
  const file = oneInputFile(positionals);
  const detrend = choiceOption('detrend', values.detrend, ['none', 'constant', 'linear'] as const) ?? 'none';
  const boundary =
    choiceOption('boundary', values.boundary, ['zeros', 'even', 'odd', 'constant', 'none'] as const) ??
    STFT_DEFAULTS.boundary;
  const input = signalFileOptions(file, values);
  const stem = basename(file, extname(file)) || 'signal';
  return {
    ...input,
    nperseg: intOption('nperseg', values.nperseg, 1),
    noverlap: intOption('noverlap', values.noverlap, 0),
    nfft: intOption('nfft', values.nfft, 1),
    window: parseWindow(values.window ?? 'hann'),
    detrend: detrend === 'none' ? false : detrend,
    scaling: choiceOption('scaling', values.scaling, ['spectrum', 'psd'] as const) ?? 'spectrum',
    boundary: boundary === 'none' ? null : boundary,
    padded: values['no-padded'] !== true,
    bands: (values.band ?? []).map(parseBand),
    out: folderOption('out', values.out, `${stem}-stft`),
    dbRange: numberOption('db-range', values['db-range']) ?? 80,
    precision: choiceOption('precision', values.precision, ['f32', 'f64'] as const) ?? 'f32',
    devices: deviceSelection(values),
    dtype: choiceOption('dtype', values.dtype, ['auto', 'float'] as const) ?? 'auto',
    saveMagnitude: values['save-magnitude'] === true,
    chunkFrames: intOption('chunk-frames', values['chunk-frames'], 1) ?? DEFAULT_CHUNK_FRAMES,
    quiet: values.quiet === true,
    json: values.json === true,
  };
}

/** 'hann', 'tukey:0.5', 'kaiser:8' -> a WindowSpec, checked against the windows the signal layer knows. */
export function parseWindow(text: string): WindowSpec {
  const [name = '', param, extra] = text.split(':');
  if (extra !== undefined) throw new UsageError(`--window takes NAME or NAME:PARAMETER, got "${text}"`);
  let spec: WindowSpec = name;
  if (param !== undefined) {
    const p = decimalNumber(param);
    if (!Number.isFinite(p)) throw new UsageError(`--window ${name}: the parameter must be a number, got "${param}"`);
    spec = [name, p];
  }
  try {
    resolveWindow(spec);
  } catch (e) {
    throw new UsageError(`--window: ${(e as Error).message}`);
  }
  return spec;
}

/** 'LO:HI' in Hz -> [lo, hi] with 0 <= lo < hi (the upper limit fs/2 is checked once fs is known). */
export function parseBand(text: string): Band {
  const m = /^\s*([^:]+):([^:]+)\s*$/.exec(text);
  if (!m) throw new UsageError(`--band takes LO:HI in Hz, got "${text}"`);
  const lo = decimalNumber(m[1]!);
  const hi = decimalNumber(m[2]!);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) throw new UsageError(`--band ${text}: both edges must be numbers`);
  if (lo < 0) throw new UsageError(`--band ${text}: the low edge must be >= 0`);
  if (!(lo < hi)) throw new UsageError(`--band ${text}: the low edge must be below the high edge`);
  return [lo, hi];
}

/** Octave bands below fs/2 (fs/4..fs/2, fs/8..fs/4, ...), six of them, then [0, the lowest edge]. */
export function defaultBands(fs: number): Band[] {
  const nyquist = fs / 2;
  const bands: Band[] = [];
  for (let k = 0; k < 6; k++) bands.push([nyquist / 2 ** (k + 1), nyquist / 2 ** k]);
  bands.push([0, nyquist / 64]);
  return bands.reverse();
}

/** Everything the GPU part needs, checked: the signal, its geometry and the bands. */
export interface StftPlan {
  options: StftCommandOptions;
  input: SignalInput;
  geometry: SpectralGeometry;
  bands: Band[];
  /** True when the bands were the user's (then band-passed WAVs are written). */
  userBands: boolean;
  /** Why 16-bit input was widened on the host after all, when it was. */
  dtypeNote?: string | undefined;
}

/** Reads the input and checks the options against it; throws UsageError or SignalInputError. */
export function planStft(options: StftCommandOptions): StftPlan {
  let input = readSignalFile(options);
  // --dtype float: the pre-16-bit path, samples widened on the host (the GPU then reads floats).
  if (options.dtype === 'float' && input.raw16) input = { ...input, samples: input.samples, raw16: undefined };
  let geometry: SpectralGeometry;
  try {
    geometry = spectralGeometry(
      input.length,
      {
        fs: input.fs,
        window: options.window,
        ...(options.nperseg !== undefined ? { nperseg: options.nperseg } : {}),
        ...(options.noverlap !== undefined ? { noverlap: options.noverlap } : {}),
        ...(options.nfft !== undefined ? { nfft: options.nfft } : {}),
        detrend: options.detrend,
        boundary: options.boundary,
        padded: options.padded,
      },
      STFT_DEFAULTS,
    );
  } catch (e) {
    throw new UsageError(`${(e as Error).message} (the signal has ${input.length} samples)`);
  }
  const nyquist = input.fs / 2;
  for (const [lo, hi] of options.bands) {
    if (hi > nyquist)
      throw new UsageError(
        `--band ${lo}:${hi}: the high edge is above fs/2 = ${nyquist} Hz (fs ${input.fs} Hz${input.fsSource === 'default' ? ', the default: give --fs' : ''})`,
      );
  }
  const userBands = options.bands.length > 0;
  let dtypeNote: string | undefined;
  // The odd extension (2 x[0] - x[j]) is arithmetic on the samples: it could overflow i16 and means nothing on f16/bf16 bits.
  if (input.raw16 && geometry.boundary === 'odd') {
    dtypeNote = `--boundary odd extends the signal arithmetically: the ${input.raw16.dtype} samples are widened on the host`;
    input = { ...input, samples: input.samples, raw16: undefined };
  }
  return { options, input, geometry, bands: userBands ? options.bands : defaultBands(input.fs), userBands, dtypeNote };
}

/**
 * The signal as scipy.signal.stft frames it: extended by nperseg/2 samples on each side as
 * `boundary` says (scipy's zero_ext, even_ext, odd_ext, const_ext), then zero-padded at the end
 * to whole segments (`padded`). Frame i is samples [i hop, i hop + nperseg) of the result.
 */
export function extendSignal<T extends Float32Array | Float64Array | Int16Array | Uint16Array>(
  x: T,
  g: Pick<SpectralGeometry, 'extension' | 'boundary' | 'padding'>,
): T {
  const n = x.length;
  const e = g.extension;
  const out = new (x.constructor as new (length: number) => T)(n + 2 * e + g.padding);
  out.set(x, e);
  if (e > 0 && g.boundary !== null && g.boundary !== 'zeros') {
    for (let j = 1; j <= e; j++) {
      const left = e - j; // mirrors x[j]
      const right = e + n - 1 + j; // mirrors x[n - 1 - j]
      if (g.boundary === 'even') {
        out[left] = x[j]!;
        out[right] = x[n - 1 - j]!;
      } else if (g.boundary === 'odd') {
        out[left] = 2 * x[0]! - x[j]!;
        out[right] = 2 * x[n - 1]! - x[n - 1 - j]!;
      } else {
        out[left] = x[0]!;
        out[right] = x[n - 1]!;
      }
    }
  }
  return out;
}

/** A run of whole frames of the spectrogram: frames [start, start + count), reading samples [inputStart, inputStart + inputLength) of the extended signal. */
export interface FrameRun {
  start: number;
  count: number;
  inputStart: number;
  inputLength: number;
}

/** Runs of at most `perChunk` frames covering the geometry's frames, each frame in one run, with the samples each reads (frameSpan). */
export function frameChunks(g: FrameLayout, perChunk: number): FrameRun[] {
  const out: FrameRun[] = [];
  for (let start = 0; start < g.frames; start += perChunk) {
    const count = Math.min(perChunk, g.frames - start);
    const input = frameSpan(g, start, count);
    out.push({ start, count, inputStart: input.start, inputLength: input.length });
  }
  return out;
}
