/**
 * The operations of an AsyncCoordinator: their ids, kinds and states, the options each queue call
 * takes, and how a settled operation of the Coordinator behind it is reported.
 */
import type { SettledOperation } from '../orchestration/operation.js';
import type { OperationKind } from '../report/timeline.js';
import type { Stream } from '../runtime/stream.js';

/** Ids the AsyncCoordinator hands out: its Coordinator's operation ids. */
export type AsyncOperationId = number;
/** What an AsyncCoordinator operation does. */
export type AsyncOperationKind = 'upload' | 'compute' | 'download';
/** An operation's state as the AsyncCoordinator reports it (the Coordinator's, coarser). */
export type AsyncOperationStatus = 'pending' | 'completed' | 'failed';

/** What poll() reports for each operation that settled since the previous poll(). */
export interface SettledAsyncOperation {
  id: AsyncOperationId;
  kind: AsyncOperationKind;
  name: string;
  status: 'completed' | 'failed';
  error?: Error | undefined;
}

/** Enqueues a computation on `stream` (kernel launches, library calls); must not block. */
export type ComputeFn = (stream: Stream) => void;

/** Options every queued operation takes. */
export interface OperationOptions {
  /** Operations this one waits for, on the GPU (an event and cuStreamWaitEvent per other stream). */
  deps?: readonly AsyncOperationId[] | undefined;
  /** Shown in poll() results, errors and the profiler timeline. */
  name?: string | undefined;
}

/** Options of queueUpload() / queueDownload(). */
export interface TransferOptions extends OperationOptions {
  /** Elements to copy from the start of both sides; default: the whole host buffer. */
  length?: number | undefined;
}

/** Options of queueCompute(). */
export interface ComputeOptions {
  name?: string | undefined;
  /** Run on this stream instead of the compute stream (parallel branches of a fork). */
  stream?: Stream | undefined;
  /** Bracket the operation in the profiler (default true). */
  profile?: boolean | undefined;
}

/** The AsyncCoordinator's kind of each Coordinator kind it uses (the rest are compute). */
const ASYNC_KIND: Partial<Record<OperationKind, AsyncOperationKind>> = { upload: 'upload', download: 'download' };

/** A Coordinator's settled operation as the AsyncCoordinator reports it. */
export function toAsync(s: SettledOperation): SettledAsyncOperation {
  const kind = ASYNC_KIND[s.kind] ?? 'compute';
  return s.error === undefined
    ? { id: s.id, kind, name: s.name, status: s.status }
    : { id: s.id, kind, name: s.name, status: s.status, error: s.error };
}
