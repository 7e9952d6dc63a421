/**
 * A stream of a StreamPool as the pool keeps it: its priority and purpose, whether the pool made
 * it, and what the pool measured of the work submitted to it (counted at submission, settled by
 * the one event behind each piece of work).
 */
import type { CUevent } from '../ffi/generated/types.js';
import type { OperationKind } from '../report/timeline.js';
import type { Stream } from '../runtime/stream.js';
import type { PriorityLevel, StreamPurpose } from './strategy.js';

/** Heard by whoever submitted work once it completes (error: the CUDA error it failed with). */
export type SettleListener = (error: Error | undefined) => void;

/** What the pool measured of one stream's work (submitted through run() / submit()). */
export interface StreamMetrics {
  operations: number;
  transfers: number;
  kernelLaunches: number;
  /** Mean time from submission to observed completion, over completed operations. */
  averageLatencyMs: number;
  /** Wall time during which the stream had submitted work not yet completed. */
  busyMs: number;
  /** Most bytes (of operations given `bytes`) in flight on the stream at once. */
  peakMemoryBytes: number;
  outstanding: number;
}

/** One stream of a pool and what the pool measured of its work. */
export interface Member {
  readonly stream: Stream;
  /** Made by the pool (disposed with it), or the caller's. */
  readonly owned: boolean;
  readonly priority: PriorityLevel;
  readonly purpose: StreamPurpose;
  outstanding: number;
  bytesInFlight: number;
  operations: number;
  transfers: number;
  kernelLaunches: number;
  completed: number;
  latencyTotal: number;
  busyMs: number;
  busyUntil: number;
  peakMemoryBytes: number;
}

/** Operation kinds counted as transfers, and as launches. */
const TRANSFERS: ReadonlySet<OperationKind> = new Set(['upload', 'download', 'copy']);
const LAUNCHES: ReadonlySet<OperationKind> = new Set(['kernel', 'fft']);

/** A member with nothing measured yet: `owned` when the pool made the stream (and disposes it). */
export function newMember(stream: Stream, owned: boolean, priority: PriorityLevel, purpose: StreamPurpose): Member {
  return {
    stream,
    owned,
    priority,
    purpose,
    outstanding: 0,
    bytesInFlight: 0,
    operations: 0,
    transfers: 0,
    kernelLaunches: 0,
    completed: 0,
    latencyTotal: 0,
    busyMs: 0,
    busyUntil: 0,
    peakMemoryBytes: 0,
  };
}

/**
 * Counts one piece of work on member `m` and puts one event behind it, watched by the context's
 * poller (stream.trackCompletion); the member's record is updated and `listener` told when it
 * completes. Returns the event while pending.
 */
export function trackWork(
  m: Member,
  kind: OperationKind,
  bytes: number,
  listener: SettleListener | undefined,
): CUevent | undefined {
  m.operations++;
  if (TRANSFERS.has(kind)) m.transfers++;
  else if (LAUNCHES.has(kind)) m.kernelLaunches++;
  m.outstanding++;
  m.bytesInFlight += bytes;
  if (m.bytesInFlight > m.peakMemoryBytes) m.peakMemoryBytes = m.bytesInFlight;
  const submitted = performance.now();
  const settle = (error: Error | undefined): void => {
    const now = performance.now();
    m.outstanding--;
    m.completed++;
    m.bytesInFlight -= bytes;
    m.latencyTotal += now - submitted;
    // Busy time as the union of [submitted, completed] intervals, kept in submission order.
    m.busyMs += Math.max(0, now - Math.max(submitted, m.busyUntil));
    if (now > m.busyUntil) m.busyUntil = now;
    listener?.(error);
  };
  return m.stream.trackCompletion(settle);
}

/** A snapshot of what was measured of member `m` (counts since it joined). */
export function memberMetrics(m: Member): StreamMetrics {
  return {
    operations: m.operations,
    transfers: m.transfers,
    kernelLaunches: m.kernelLaunches,
    averageLatencyMs: m.completed ? m.latencyTotal / m.completed : 0,
    busyMs: m.busyMs,
    peakMemoryBytes: m.peakMemoryBytes,
    outstanding: m.outstanding,
  };
}
