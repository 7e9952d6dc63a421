/**
 * The device buffers of the whole-series flow, as one list: what each holds, its element type, how
 * many elements one series needs, whether it is the slot's (the input, and what is copied back
 * while the next job computes) or the lane's, and the result array it is copied back into. The
 * lane allocates from the list (seriesBuffers), a series' device bytes are summed from it
 * (seriesBytesPerRow: how many series a chunk may hold), and the copy back fetches every buffer the
 * list marks as an output; so a new flag's buffers are rows here and nothing else. Scratch the
 * signal layer allocates itself (its per-stream scratch) is listed as `scratch`: counted, not
 * allocated.
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import { dtypeInfo, type DType } from '../runtime/memory/dtype.js';
import type { Precision } from '../runtime/fft/precision.js';
import type { ComplexBuffer, RealBuffer } from '../signal/buffers.js';
import { sosfiltfiltPadlen } from '../signal/filter-design.js';
import { halfBins } from '../signal/primitives.js';
import { sixteenBit, type LaneResources } from './lane-resources.js';
import type { NormalizedJob } from './normalized-job.js';
import type { ResultArrayField } from './result-arrays.js';
import { nonFiniteCell } from './non-finite-check.js';
import { waveletScratchPerRow } from './wavelet.js';

/**
 * A buffer's element type: the job's samples (`input`: 16-bit stays 16-bit), the engine's
 * precision real or complex, float64, the job's 16-bit `outputDtype` (`half`), or bytes (`u8`:
 * scratch counted in bytes).
 */
type BufferElement = 'input' | 'real' | 'complex' | 'f64' | 'half' | 'u8';

/** What the list needs to know beyond the job: whether the flow runs the inverse FFT (the stft flag, or a stage placed after it), and the lane's precision. */
export interface BufferNeeds {
  readonly inverse: boolean;
  readonly precision: Precision;
}

/** One buffer of the flow. */
interface BufferRow {
  /** Its name in SeriesBuffers. */
  readonly name: string;
  /** The BufferCache purpose (and its label in errors). */
  readonly purpose: string;
  readonly element: BufferElement;
  /** Elements one series needs; 0: this job does not use it. */
  readonly perSeries: (job: NormalizedJob, needs: BufferNeeds) => number;
  /** Whether it is the slot's (read or copied back while the lane's next job computes) rather than the lane's. */
  readonly slot: (job: NormalizedJob) => boolean;
  /** The result array it is copied back into, and whether this job fetches it from here. */
  readonly output?: ResultArrayField;
  readonly fetched?: (job: NormalizedJob) => boolean;
  /** On the device [row of the result][series][t] (a band's waves of every series together), fetched into [series][row][t]. */
  readonly rowMajor?: boolean;
  /** Allocated by the signal layer (its scratch): counted in the bytes, not allocated here. */
  readonly scratch?: boolean;
}

const n = (job: NormalizedJob): number => job.length;
const k = (job: NormalizedJob): number => halfBins(job.length);
const nb = (job: NormalizedJob): number => job.bands.length;
const always = (): boolean => true;
const never = (): boolean => false;
/** Rounded to 16 bits first: then only the rounded copy is the slot's. */
const unlessHalf = (job: NormalizedJob): boolean => job.outputDtype === undefined;
const waves = (job: NormalizedJob): boolean => job.cycles && job.bandWaves;

/** The buffers, in the order the flow uses them. */
export const SERIES_BUFFERS = [
  { name: 'x', purpose: 'input', element: 'input', perSeries: n, slot: always },
  // The filter's output; everything after reads it instead of the input.
  {
    name: 'prefiltered',
    purpose: 'filtered input',
    element: 'real',
    perSeries: (j) => (j.filter ? n(j) : 0),
    slot: never,
  },
  {
    name: 'filterScratch',
    purpose: 'filter scratch',
    element: 'f64',
    // sosfiltfilt / filtfilt extend each series by their padding; sosfilt's long-series scan keeps less than a sample's worth.
    perSeries: (j) =>
      !j.filter
        ? 0
        : n(j) +
          (j.filter.zeroPhase
            ? 2 * (j.filter.kind === 'sos' ? sosfiltfiltPadlen(j.filter.sos) : 3 * j.filter.taps.length)
            : 0),
    slot: never,
    scratch: true,
  },
  { name: 'windowed', purpose: 'windowed', element: 'real', perSeries: n, slot: never },
  { name: 'spectrum', purpose: 'spectrum', element: 'complex', perSeries: k, slot: never },
  { name: 'masked', purpose: 'masked', element: 'complex', perSeries: (j, x) => (x.inverse ? k(j) : 0), slot: never },
  {
    name: 'filtered',
    purpose: 'filtered',
    element: 'real',
    perSeries: (j, x) => (x.inverse ? n(j) : 0),
    slot: unlessHalf,
    output: 'filtered',
    fetched: (j) => j.stft && unlessHalf(j),
  },
  {
    name: 'filtered16',
    purpose: 'filtered 16-bit',
    element: 'half',
    perSeries: (j, x) => (x.inverse && j.stft && !unlessHalf(j) ? n(j) : 0),
    slot: always,
    output: 'filtered',
    fetched: (j) => j.stft,
  },
  {
    name: 'preview',
    purpose: 'preview',
    element: 'real',
    perSeries: (j, x) => (x.inverse && j.stft ? j.previewBins : 0),
    slot: always,
    output: 'spectrum',
    fetched: (j) => j.stft,
  },
  {
    name: 'powers',
    purpose: 'powers',
    element: 'f64',
    perSeries: (j) => (j.cycles ? nb(j) : 0),
    slot: always,
    output: 'bandPowers',
    fetched: always,
  },
  // Copied back and finished on the host (series-flow.ts): frequency bin, amplitude, phase terms.
  { name: 'dominant', purpose: 'dominant', element: 'f64', perSeries: (j) => (j.cycles ? 4 : 0), slot: always },
  {
    name: 'bandSpectra',
    purpose: 'band spectra',
    element: 'complex',
    perSeries: (j) => (waves(j) ? nb(j) * k(j) : 0),
    slot: never,
  },
  {
    name: 'bandWaves',
    purpose: 'band waves',
    element: 'real',
    perSeries: (j) => (waves(j) ? nb(j) * n(j) : 0),
    slot: unlessHalf,
    output: 'bandWaves',
    fetched: unlessHalf,
    rowMajor: true,
  },
  {
    name: 'bandWaves16',
    purpose: 'band waves 16-bit',
    element: 'half',
    perSeries: (j) => (waves(j) && !unlessHalf(j) ? nb(j) * n(j) : 0),
    slot: always,
    output: 'bandWaves',
    fetched: always,
    rowMajor: true,
  },
  {
    name: 'waveletPower',
    purpose: 'wavelet power',
    element: 'real',
    perSeries: (j) => (j.wavelet ? (j.waveletBands ? nb(j) : j.freqs.length) * n(j) : 0),
    slot: always,
    output: 'waveletPower',
    fetched: always,
  },
  {
    name: 'waveletScratch',
    purpose: 'wavelet scratch',
    element: 'u8',
    perSeries: (j, x) => (j.wavelet ? waveletScratchPerRow(j, x.precision) : 0),
    slot: never,
    scratch: true,
  },
  {
    name: 'envelope',
    purpose: 'envelope',
    element: 'real',
    perSeries: (j) => (j.envelope ? n(j) : 0),
    slot: always,
    output: 'envelope',
    fetched: always,
  },
  {
    name: 'envelopeScratch',
    purpose: 'envelope scratch',
    element: 'complex',
    // The analytic signal (N) and the one-sided spectrum hilbert goes through (N/2+1).
    perSeries: (j) => (j.envelope ? n(j) + k(j) : 0),
    slot: never,
    scratch: true,
  },
  {
    name: 'decimated',
    purpose: 'decimated',
    element: 'real',
    perSeries: (j) => (j.decimate ? Math.ceil(n(j) / j.q!) : 0),
    slot: always,
    output: 'decimated',
    fetched: always,
  },
] as const satisfies readonly BufferRow[];

type Row = (typeof SERIES_BUFFERS)[number];
/** The device buffer type of an element type. */
type BufferOf<E> = E extends 'real'
  ? RealBuffer
  : E extends 'complex'
    ? ComplexBuffer
    : E extends 'f64'
      ? DeviceBuffer<'f64'>
      : DeviceBuffer<DType>;

/**
 * The device buffers of one whole-series chunk by name: those the job uses (the input, windowed and
 * spectrum always), and the slot's index cell of the input's first non-finite sample (one per
 * chunk, not per series: non-finite-check.ts; none for i16 input).
 */
export type SeriesBuffers = {
  readonly [R in Row as R extends { scratch: true } ? never : R['name']]?: BufferOf<R['element']> | undefined;
} & {
  readonly x: DeviceBuffer<DType>;
  readonly windowed: RealBuffer;
  readonly spectrum: ComplexBuffer;
  readonly nonFinite?: DeviceBuffer<'u64'> | undefined;
};

/** A buffer row the copy back fetches for `job`, with the device buffer of the chunk. */
export interface FetchedBuffer {
  /** The list's own row (no copy per chunk). */
  readonly row: { readonly purpose: string; readonly output: ResultArrayField; readonly rowMajor?: boolean };
  readonly buffer: DeviceBuffer<DType>;
  /** Elements per series. */
  readonly perSeries: number;
}

/** The element type of a row for `job` on a lane of precision `real`. */
function dtypeOf(element: Exclude<BufferElement, 'u8'>, job: NormalizedJob, real: Precision): DType {
  switch (element) {
    case 'input':
      return sixteenBit(job) ? job.dtype : real;
    case 'real':
      return real;
    case 'complex':
      return real === 'f32' ? 'c64' : 'c128';
    case 'f64':
      return 'f64';
    case 'half':
      return job.outputDtype ?? 'f16';
  }
}

/** Device bytes one series of `job` needs on a lane of precision `real` (every buffer of the list, scratch included). */
export function seriesBytesPerRow(job: NormalizedJob, needs: BufferNeeds): number {
  let bytes = 0;
  for (const row of SERIES_BUFFERS as readonly BufferRow[]) {
    const count = row.perSeries(job, needs);
    if (count > 0)
      bytes += count * (row.element === 'u8' ? 1 : dtypeInfo(dtypeOf(row.element, job, needs.precision)).bytes);
  }
  return bytes;
}

/** Takes every device buffer a chunk of `rows` series of `job` uses in `slot` (allocating now, when the cache has none big enough). */
export function seriesBuffers(
  lane: LaneResources,
  job: NormalizedJob,
  rows: number,
  slot: number,
  needs: BufferNeeds,
): SeriesBuffers {
  const out: Record<string, DeviceBuffer<DType>> = {};
  for (const row of SERIES_BUFFERS as readonly BufferRow[]) {
    if (row.scratch === true || row.element === 'u8') continue;
    const count = row.perSeries(job, needs);
    if (count === 0) continue;
    const dtype = dtypeOf(row.element, job, needs.precision);
    out[row.name] = row.slot(job)
      ? lane.buffers.device(row.purpose, dtype, rows * count, { slot })
      : lane.buffers.device(row.purpose, dtype, rows * count);
  }
  out.nonFinite = nonFiniteCell(lane, job, slot) as DeviceBuffer<DType>;
  // Each buffer of its row's element type; x, windowed and spectrum are used by every job.
  return out as unknown as SeriesBuffers;
}

/** The buffers of `b` the copy back fetches for `job`, in the list's order. */
export function fetchedBuffers(job: NormalizedJob, b: SeriesBuffers, needs: BufferNeeds): FetchedBuffer[] {
  const out: FetchedBuffer[] = [];
  const buffers = b as unknown as Readonly<Record<string, DeviceBuffer<DType> | undefined>>;
  for (const row of SERIES_BUFFERS as readonly BufferRow[]) {
    const buffer = buffers[row.name];
    if (row.output === undefined || buffer === undefined || row.fetched?.(job) !== true) continue;
    out.push({ row: row as FetchedBuffer['row'], buffer, perSeries: row.perSeries(job, needs) });
  }
  return out;
}
