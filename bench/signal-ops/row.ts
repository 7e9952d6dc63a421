/**
 * The interface of one signal-ops row (bench/signal-ops/README.md says how to add one): a module
 * under bench/signal-ops/rows/ exporting a `SignalOpRow`. The shared runner (runner.ts) gives the
 * row its input on the device, times what the row enqueues with CUDA events, checks the row's
 * output against the row's float64 CPU reference, works out the row's HBM fraction, and writes the
 * job and tscuda's output where the Python peers (bench/peers/signal_ops_peer.py) read them.
 */
import type { DeviceBuffer, Stream } from '../../src/runtime/index.js';
import type { MetricSpec } from '../harness/metric-spec.js';

/** The dtypes a row's output may have, as the peers read them back (little-endian, row-major). */
export type RowOutputDType = 'f32' | 'c64';

/** What the runner hands a row: the shared input, on the device and on the host, and where it works. */
export interface RowInput {
  /** Series and samples per series of the shared input. */
  batch: number;
  length: number;
  /** The shared input: batch × length float32 (noise and tones, the same every run), on the device. */
  x: DeviceBuffer<'f32'>;
  /** The same samples on the host, for the row's CPU reference. */
  host: Float32Array;
  /** The stream every enqueue of the row goes on (the runner's events are recorded on it). */
  stream: Stream;
  /**
   * Writes a file of the row's own into the folder the peers read (an input the shared one does not
   * cover, an IQ recording say) and returns the name to put in `peerJob`.
   */
  writeData(name: string, bytes: ArrayBufferView): string;
}

/** A row set up on the device: what the runner times, checks and hands to the peers. */
export interface PreparedRow {
  /** Enqueues the operation once on the input's stream, into `output`: no allocation, no synchronisation. */
  run(): void;
  /** Where run() writes (allocated once by prepare()). */
  output: DeviceBuffer<RowOutputDType>;
  /** Its shape as the peers read it: [series, values per series] (complex values count once). */
  outputShape: readonly [number, number];
  /**
   * Compares the output, read back to the host, with the row's float64 CPU reference (fresh,
   * independent code: a direct sum, a recurrence, fft.js), over the series and samples it names.
   */
  check(output: Float32Array): RowCheck;
  /** The bytes any implementation must move at least once: the input read and the output written. */
  traffic: { read: number; written: number };
  /** The job's parameters as the peers need them (JSON): taps, sections, rates, ... */
  peerJob: Record<string, unknown>;
  /** Frees what prepare() allocated (the runner disposes the input itself). */
  dispose(): void;
}

/** What a row's check found: the relative L2 error, the tolerance, and what was compared. */
export interface RowCheck {
  error: number;
  tolerance: number;
  /** e.g. 'series 0 and 15, 320 samples each, against direct float64 sums'. */
  what: string;
}

/** What bounds a row's speed, in words for its notes, and whether it carries an HBM-fraction goal. */
export interface RowBound {
  /**
   * True where the row's compulsory traffic at the device's HBM bandwidth is its bound (one pass
   * over the data): the row then names a `fraction` metric (issue 41: >= 0.8 of that bound).
   */
  hbm: boolean;
  /** Why (shown in the row's notes): what the operation does per sample and how many passes. */
  why: string;
}

/** One row of the signal-ops bench: its metrics, its job in words, and how to set it up. */
export interface SignalOpRow {
  /** Short id: names the row's files in the peers' folder and its entry in the peers' tables ('fftconvolve'). */
  id: string;
  /** The job in words, for the notes: sizes, dtypes, parameters. */
  job: string;
  /** The time metric (ms, lower is better, goal ahead of the best peer) and, for HBM-bound rows, the fraction metric. */
  metrics: { time: MetricSpec; fraction?: MetricSpec | undefined };
  bound: RowBound;
  /** The relative L2 within which a peer's output must equal tscuda's (per series, the worst series). */
  peerTolerance: number;
  /** Sets the row up on the device for `input`: taps, tables, output buffer. */
  prepare(input: RowInput): PreparedRow;
}

/** A row's metric specs, time first. */
export function rowMetrics(row: SignalOpRow): MetricSpec[] {
  return [row.metrics.time, ...(row.metrics.fraction ? [row.metrics.fraction] : [])];
}

/** The names of a row's metrics, time first. */
export function rowMetricNames(row: SignalOpRow): string[] {
  return rowMetrics(row).map((m) => m.name);
}
