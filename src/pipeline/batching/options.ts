import { checkTimeoutMs } from '../../runtime/timeout.js';
import type { AutoTuneOptions } from './auto-tuner.js';
import type { SubmitOptions } from './types.js';
import { knownKeys, positiveInteger, shownValue } from '../../runtime/value-checks.js';

/** How a Batcher is made. */
export interface BatcherDescriptor {
  /** Items per batch; a batch is dispatched as soon as it holds this many. */
  maxBatchSize: number;
  /** A partial batch is dispatched once its oldest item has been queued this long. */
  maxWaitMs: number;
  /** Submits accepted but not yet fully dispatched; beyond it submit() waits or fails. */
  channelSize: number;
  /**
   * Batches dispatched but not yet settled (default DEFAULT_MAX_CONCURRENT_BATCHES, 16). At the
   * limit a slow dispatcher stops the dispatching, the channel fills, submits wait for room
   * (up to maxWaiting) and beyond that are refused with BatcherFullError: memory stays bounded
   * even when a dispatch never settles. `Infinity` lifts the limit (only when asked for: every
   * submit then goes into flight while dispatches pile up).
   */
  maxConcurrentBatches?: number | undefined;
  /**
   * Most submits waiting for room in a full channel (default: channelSize); beyond it, submit()
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

/** Every key of BatcherDescriptor (the Record makes a new one fail to compile until listed). */
export const BATCHER_KEYS: readonly string[] = Object.keys({
  maxBatchSize: true,
  maxWaitMs: true,
  channelSize: true,
  maxConcurrentBatches: true,
  maxWaiting: true,
  dispatchTimeoutMs: true,
  label: true,
  autoTune: true,
} satisfies Record<keyof BatcherDescriptor, true>);

/** Every key of AutoTuneOptions. */
const AUTO_TUNE_KEYS = Object.keys({
  targetLatencyMs: true,
  minBatchSize: true,
  maxBatchSize: true,
  minWaitMs: true,
  maxWaitMs: true,
} satisfies Record<keyof AutoTuneOptions, true>);

/** @deprecated the name before issue 9; use BatcherDescriptor. */
export type BatcherOptions = BatcherDescriptor;

/**
 * Batches in flight by default: enough to overlap dispatches (a GPU batcher's own default is its
 * number of staging sets), few enough that a dispatch that never settles holds at most 16
 * batches before submits are refused.
 */
export const DEFAULT_MAX_CONCURRENT_BATCHES = 16;

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

/** A positive integer option of the Batcher labelled `label`. */
function positiveOption(label: string, name: string, value: unknown): number {
  return positiveInteger(value, `Batcher "${label}": ${name}`);
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

/**
 * Checks every field (a RangeError naming the field and value; a TypeError for an unknown key or
 * a value of the wrong type) and fills in defaults. `extraKeys`: keys the caller reads itself
 * (a GPU batcher's dispatcher options), accepted besides the Batcher's.
 */
export function resolveBatcherOptions(
  options: BatcherDescriptor,
  extraKeys: readonly string[] = [],
): ResolvedBatcherOptions {
  if (options === null || typeof options !== 'object')
    throw new TypeError(`Batcher: options must be an object, got ${String(options)}`);
  // A label of 123 was kept as a number; a misspelt option (`maxBatch`) silently meant its default.
  if (options.label !== undefined && typeof options.label !== 'string')
    throw new TypeError(`Batcher: label must be a string, got ${shownValue(options.label)}`);
  const label = options.label ?? 'batcher';
  knownKeys(
    options,
    extraKeys.length === 0 ? BATCHER_KEYS : [...BATCHER_KEYS, ...extraKeys],
    `Batcher "${label}" descriptor`,
  );
  const maxBatchSize = positiveOption(label, 'maxBatchSize', options.maxBatchSize);
  const maxWaitMs = checkTimeoutMs(options.maxWaitMs, `Batcher "${label}": maxWaitMs`);
  const channelSize = positiveOption(label, 'channelSize', options.channelSize);
  const maxConcurrentBatches =
    options.maxConcurrentBatches === undefined
      ? DEFAULT_MAX_CONCURRENT_BATCHES
      : options.maxConcurrentBatches === Infinity
        ? Infinity
        : positiveOption(label, 'maxConcurrentBatches', options.maxConcurrentBatches);
  const maxWaiting =
    options.maxWaiting === undefined
      ? channelSize
      : options.maxWaiting === 0
        ? 0
        : positiveOption(label, 'maxWaiting', options.maxWaiting);
  let dispatchTimeoutMs: number | null = null;
  if (options.dispatchTimeoutMs !== undefined) {
    dispatchTimeoutMs = checkTimeoutMs(options.dispatchTimeoutMs, `Batcher "${label}": dispatchTimeoutMs`);
  }
  let autoTune: Required<AutoTuneOptions> | null = null;
  if (options.autoTune !== undefined) {
    const tune = options.autoTune;
    // null read 'targetLatencyMs' of null; 5 was reported as a missing target.
    if (typeof tune !== 'object' || tune === null)
      throw new TypeError(
        `Batcher "${label}": autoTune must be an object { targetLatencyMs, ... }, got ${shownValue(tune)}`,
      );
    knownKeys(tune, AUTO_TUNE_KEYS, `Batcher "${label}" descriptor.autoTune`);
    const targetLatencyMs = nonNegativeFinite(label, 'autoTune.targetLatencyMs', tune.targetLatencyMs);
    if (targetLatencyMs === 0) {
      throw new RangeError(`Batcher "${label}": autoTune.targetLatencyMs must be > 0, got 0`);
    }
    const minBatchSize = positiveOption(label, 'autoTune.minBatchSize', tune.minBatchSize ?? 1);
    const maxTunedBatch = positiveOption(label, 'autoTune.maxBatchSize', tune.maxBatchSize ?? maxBatchSize);
    const minWaitMs = checkTimeoutMs(tune.minWaitMs ?? 0, `Batcher "${label}": autoTune.minWaitMs`);
    const maxTunedWait = checkTimeoutMs(tune.maxWaitMs ?? maxWaitMs, `Batcher "${label}": autoTune.maxWaitMs`);
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

/**
 * The error submit() rejects with for wrong options, or undefined: null and 5 were read as no
 * options and `wait: 'no'` as waiting. Returned, not thrown: submit() reports through its promise.
 */
export function submitOptionsError(options: SubmitOptions, label: string): TypeError | undefined {
  if (typeof options !== 'object' || options === null)
    return new TypeError(
      `Batcher "${label}": submit() options must be an object { wait?, signal? }, got ${shownValue(options)}`,
    );
  if (options.wait !== undefined && typeof options.wait !== 'boolean')
    return new TypeError(`Batcher "${label}": submit() wait must be a boolean, got ${shownValue(options.wait)}`);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    return new TypeError(`Batcher "${label}": submit() signal must be an AbortSignal`);
  return undefined;
}
