import { checkTimeoutMs } from '../../runtime/timeout.js';
import type { AutoTuneOptions } from './auto-tuner.js';

/** How a Batcher is made. */
export interface BatcherDescriptor {
  /** Items per batch; a batch is dispatched as soon as it holds this many. */
  maxBatchSize: number;
  /** A partial batch is dispatched once its oldest item has been queued this long. */
  maxWaitMs: number;
  /** Submits accepted but not yet fully dispatched; beyond it submit() waits or fails. */
  channelSize: number;
  /**
   * Batches dispatched but not yet settled. Default: unlimited. With a limit, a slow
   * dispatcher stops the dispatching, the queue fills, and backpressure reaches submitters.
   */
  maxConcurrentBatches?: number | undefined;
  /**
   * Most submits waiting for room in a full channel (default 65536); beyond it, submit()
   * rejects with BatcherFullError instead of queueing without bound. 0: never wait.
   */
  maxWaiting?: number | undefined;
  /**
   * A dispatch not settled this long after it started fails its batch with BatcherTimeoutError
   * and aborts `info.signal` (default: no limit). Its place among maxConcurrentBatches is freed.
   */
  dispatchTimeoutMs?: number | undefined;
  label?: string | undefined;
  autoTune?: AutoTuneOptions | undefined;
}

/** @deprecated the name before issue 9; use BatcherDescriptor. */
export type BatcherOptions = BatcherDescriptor;

/** A BatcherDescriptor checked and with its defaults filled in. */
export interface ResolvedBatcherOptions {
  maxBatchSize: number;
  maxWaitMs: number;
  channelSize: number;
  maxConcurrentBatches: number;
  maxWaiting: number;
  dispatchTimeoutMs: number | null;
  label: string;
  autoTune: Required<AutoTuneOptions> | null;
}

function positiveInteger(label: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new RangeError(`Batcher "${label}": ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

function nonNegativeFinite(label: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError(`Batcher "${label}": ${name} must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}

function ordered(label: string, lowName: string, low: number, highName: string, high: number): void {
  if (low > high) {
    throw new RangeError(`Batcher "${label}": ${lowName} (${low}) must not exceed ${highName} (${high})`);
  }
}

/** Checks every field (a RangeError naming the field and value) and fills in defaults. */
export function resolveBatcherOptions(options: BatcherDescriptor): ResolvedBatcherOptions {
  if (options === null || typeof options !== 'object') throw new TypeError(`Batcher: options must be an object, got ${String(options)}`);
  const label = options.label ?? 'batcher';
  const maxBatchSize = positiveInteger(label, 'maxBatchSize', options.maxBatchSize);
  const maxWaitMs = nonNegativeFinite(label, 'maxWaitMs', options.maxWaitMs);
  const channelSize = positiveInteger(label, 'channelSize', options.channelSize);
  const maxConcurrentBatches =
    options.maxConcurrentBatches === undefined || options.maxConcurrentBatches === Infinity
      ? Infinity
      : positiveInteger(label, 'maxConcurrentBatches', options.maxConcurrentBatches);
  const maxWaiting = options.maxWaiting === undefined ? 65536 : options.maxWaiting === 0 ? 0 : positiveInteger(label, 'maxWaiting', options.maxWaiting);
  let dispatchTimeoutMs: number | null = null;
  if (options.dispatchTimeoutMs !== undefined) {
    dispatchTimeoutMs = checkTimeoutMs(options.dispatchTimeoutMs, `Batcher "${label}": dispatchTimeoutMs`);
  }
  let autoTune: Required<AutoTuneOptions> | null = null;
  if (options.autoTune !== undefined) {
    const tune = options.autoTune;
    const targetLatencyMs = nonNegativeFinite(label, 'autoTune.targetLatencyMs', tune.targetLatencyMs);
    if (targetLatencyMs === 0) {
      throw new RangeError(`Batcher "${label}": autoTune.targetLatencyMs must be > 0, got 0`);
    }
    const minBatchSize = positiveInteger(label, 'autoTune.minBatchSize', tune.minBatchSize ?? 1);
    const maxTunedBatch = positiveInteger(label, 'autoTune.maxBatchSize', tune.maxBatchSize ?? maxBatchSize);
    const minWaitMs = nonNegativeFinite(label, 'autoTune.minWaitMs', tune.minWaitMs ?? 0);
    const maxTunedWait = nonNegativeFinite(label, 'autoTune.maxWaitMs', tune.maxWaitMs ?? maxWaitMs);
    ordered(label, 'autoTune.minBatchSize', minBatchSize, 'maxBatchSize', maxBatchSize);
    ordered(label, 'maxBatchSize', maxBatchSize, 'autoTune.maxBatchSize', maxTunedBatch);
    ordered(label, 'autoTune.minWaitMs', minWaitMs, 'maxWaitMs', maxWaitMs);
    ordered(label, 'maxWaitMs', maxWaitMs, 'autoTune.maxWaitMs', maxTunedWait);
    autoTune = {
      targetLatencyMs,
      minBatchSize,
      maxBatchSize: maxTunedBatch,
      minWaitMs,
      maxWaitMs: maxTunedWait,
    };
  }
  return { maxBatchSize, maxWaitMs, channelSize, maxConcurrentBatches, maxWaiting, dispatchTimeoutMs, label, autoTune };
}
