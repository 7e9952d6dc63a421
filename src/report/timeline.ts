/**
 * Profiler records and the reports computed from them. Pure TypeScript with no CUDA calls,
 * so that saved records can be analysed and rendered on a machine without a GPU.
 */

export type OperationKind = 'upload' | 'download' | 'copy' | 'kernel' | 'fft' | 'memset' | 'host' | 'alloc' | 'other';

/** One timed operation. Times are milliseconds on a clock shared by all records of a run. */
export interface TimelineRecord {
  /** The stream's label. */
  stream: string;
  /** Where the stream's lane sorts; streams without one follow, in order of first appearance. */
  streamOrder?: number | undefined;
  kind: OperationKind;
  name: string;
  startMs: number;
  endMs: number;
  bytes?: number | undefined;
  id?: number | undefined;
}

/** One stream's share of a RunReport, from its records: counts, bytes moved, busy time (ms) and its first start and last end (ms, on the records' clock). */
export interface StreamReport {
  stream: string;
  operations: number;
  /** Operations that run device code: kind 'kernel' or 'fft'. */
  kernels: number;
  /** Operations of kind 'upload', 'download' or 'copy'. */
  transfers: number;
  /** Sum of `bytes` over this stream's transfers. */
  bytesTransferred: number;
  /** Length of the union of this stream's intervals: overlapping records are not counted twice. */
  busyMs: number;
  firstMs: number;
  lastMs: number;
  /** busyMs / the whole run's spanMs (0 for an empty or instantaneous run). */
  utilization: number;
}

/** What `analyzeTimeline()` (and `Profiler.report()`) computes from a run's records: its span, counts, busy time and how much transfer time overlapped compute, all in ms, then one StreamReport per stream. */
export interface RunReport {
  /** From the earliest start to the latest end over all records. */
  spanMs: number;
  operations: number;
  kernels: number;
  transfers: number;
  /** Length of the union of all intervals over all streams: time during which anything ran. */
  busyMs: number;
  /**
   * Length of T ∩ C, where T is the union of all transfer intervals (upload, download, copy)
   * and C the union of all compute intervals (kernel, fft, memset), over all streams: the
   * same stream counts too, since a record only says when an operation ran, not where.
   */
  transferComputeOverlapMs: number;
  /**
   * 100 · |T ∩ C| / |T|: the share of transfer time hidden behind compute. 100 means no
   * transfer ever ran alone; 0 when nothing overlaps or there are no transfers.
   */
  transferComputeOverlapPercent: number;
  /** In lane order: by streamOrder, then by first appearance. */
  streams: StreamReport[];
}

/** A half-open interval [start, end) in milliseconds. */
export type Interval = readonly [start: number, end: number];

const TRANSFER_KINDS: ReadonlySet<OperationKind> = new Set(['upload', 'download', 'copy']);
const COMPUTE_KINDS: ReadonlySet<OperationKind> = new Set(['kernel', 'fft', 'memset']);

export function isTransfer(kind: OperationKind): boolean {
  return TRANSFER_KINDS.has(kind);
}

export function isCompute(kind: OperationKind): boolean {
  return COMPUTE_KINDS.has(kind);
}

/** Sorts and merges: the result is ascending and disjoint, and empty intervals are dropped. */
export function unionIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [s, e] of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  return merged;
}

/** Intersection of two results of unionIntervals, in linear time. */
export function intersectIntervals(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as Interval;
    const y = b[j] as Interval;
    const s = Math.max(x[0], y[0]);
    const e = Math.min(x[1], y[1]);
    if (e > s) out.push([s, e]);
    if (x[1] < y[1]) i++;
    else j++;
  }
  return out;
}

export function totalLength(intervals: readonly Interval[]): number {
  let sum = 0;
  for (const [s, e] of intervals) sum += e - s;
  return sum;
}

function intervalsOf(records: readonly TimelineRecord[], keep: (r: TimelineRecord) => boolean): Interval[] {
  const out: Interval[] = [];
  for (const r of records) if (keep(r)) out.push([r.startMs, r.endMs]);
  return unionIntervals(out);
}

/** Periods during which some transfer and some compute ran at the same time (T ∩ C). */
export function transferComputeOverlap(records: readonly TimelineRecord[]): Interval[] {
  return intersectIntervals(
    intervalsOf(records, (r) => isTransfer(r.kind)),
    intervalsOf(records, (r) => isCompute(r.kind)),
  );
}

/** Records grouped by stream, in lane order (streamOrder first, then first appearance). */
export function groupByStream(records: readonly TimelineRecord[]): Map<string, TimelineRecord[]> {
  const groups = new Map<string, { order: number; first: number; records: TimelineRecord[] }>();
  records.forEach((r, index) => {
    let g = groups.get(r.stream);
    if (g === undefined) {
      g = { order: Infinity, first: index, records: [] };
      groups.set(r.stream, g);
    }
    if (r.streamOrder !== undefined) g.order = Math.min(g.order, r.streamOrder);
    g.records.push(r);
  });
  const ordered = [...groups.entries()].sort(([, a], [, b]) =>
    a.order === b.order ? a.first - b.first : a.order < b.order ? -1 : 1,
  );
  return new Map(ordered.map(([stream, g]) => [stream, g.records]));
}

/** A bad record would silently skew every figure, so it is refused with its name. */
function validate(r: TimelineRecord): void {
  if (!Number.isFinite(r.startMs) || !Number.isFinite(r.endMs)) {
    throw new RangeError(`timeline record '${r.name}' on '${r.stream}' has a non-finite time`);
  }
  if (r.endMs < r.startMs) {
    throw new RangeError(`timeline record '${r.name}' on '${r.stream}' ends before it starts`);
  }
}

function countKinds(records: readonly TimelineRecord[]): { kernels: number; transfers: number; bytes: number } {
  let kernels = 0;
  let transfers = 0;
  let bytes = 0;
  for (const r of records) {
    if (r.kind === 'kernel' || r.kind === 'fft') kernels++;
    if (isTransfer(r.kind)) {
      transfers++;
      bytes += r.bytes ?? 0;
    }
  }
  return { kernels, transfers, bytes };
}

/** Earliest start and latest end; a loop, since spreading a long run into Math.min overflows the stack. */
export function extent(records: readonly TimelineRecord[]): { firstMs: number; lastMs: number } {
  let firstMs = Infinity;
  let lastMs = -Infinity;
  for (const r of records) {
    firstMs = Math.min(firstMs, r.startMs);
    lastMs = Math.max(lastMs, r.endMs);
  }
  return records.length === 0 ? { firstMs: 0, lastMs: 0 } : { firstMs, lastMs };
}

export function analyzeTimeline(records: readonly TimelineRecord[]): RunReport {
  records.forEach(validate);
  const run = extent(records);
  const spanMs = run.lastMs - run.firstMs;

  const streams: StreamReport[] = [];
  for (const [stream, own] of groupByStream(records)) {
    const counts = countKinds(own);
    const busyMs = totalLength(intervalsOf(own, () => true));
    const { firstMs, lastMs } = extent(own);
    streams.push({
      stream,
      operations: own.length,
      kernels: counts.kernels,
      transfers: counts.transfers,
      bytesTransferred: counts.bytes,
      busyMs,
      firstMs,
      lastMs,
      utilization: spanMs > 0 ? busyMs / spanMs : 0,
    });
  }

  const transferMs = totalLength(intervalsOf(records, (r) => isTransfer(r.kind)));
  const overlapMs = totalLength(transferComputeOverlap(records));
  const counts = countKinds(records);
  return {
    spanMs,
    operations: records.length,
    kernels: counts.kernels,
    transfers: counts.transfers,
    busyMs: totalLength(intervalsOf(records, () => true)),
    transferComputeOverlapMs: overlapMs,
    transferComputeOverlapPercent: transferMs > 0 ? (100 * overlapMs) / transferMs : 0,
    streams,
  };
}
