/** The Batcher's auto-tuner: steers maxBatchSize and maxWaitMs toward a latency target. */
export interface AutoTuneOptions {
  /** Submit-to-resolve latency the tuner steers the slowest item of each batch towards. */
  targetLatencyMs: number;
  /** Default 1. */
  minBatchSize?: number | undefined;
  /** Default: the Batcher's configured maxBatchSize (dispatchers often size buffers by it). */
  maxBatchSize?: number | undefined;
  /** Default 0. */
  minWaitMs?: number | undefined;
  /** Default: the Batcher's configured maxWaitMs. */
  maxWaitMs?: number | undefined;
}

/** What the tuner adjusts. */
export interface TunedParameters {
  maxBatchSize: number;
  maxWaitMs: number;
}

const SHRINK = 0.75;
const GROW = 1.25;
/** Below this fraction of the target there is latency to spare for fuller batches. */
const SPARE_FRACTION = 0.5;
/** Multiplicative steps never reach a bound exactly; snap to it when this close. */
const WAIT_SNAP_MS = 0.05;
const WAIT_MIN_STEP_MS = 0.1;

/**
 * A deliberately simple controller with a dead band [SPARE_FRACTION * target, target] so
 * that it settles instead of oscillating. Its signal is each batch's worst item latency
 * (the oldest item's submit-to-completion time), an O(1) stand-in for a p99 that would
 * need a sort per batch.
 */
export class AutoTuner {
  readonly targetLatencyMs: number;
  readonly minBatchSize: number;
  readonly maxBatchSize: number;
  readonly minWaitMs: number;
  readonly maxWaitMs: number;

  constructor(options: Required<AutoTuneOptions>) {
    this.targetLatencyMs = options.targetLatencyMs;
    this.minBatchSize = options.minBatchSize;
    this.maxBatchSize = options.maxBatchSize;
    this.minWaitMs = options.minWaitMs;
    this.maxWaitMs = options.maxWaitMs;
  }

  /** The parameters to use after a batch, or null to keep the current ones. */
  next(current: TunedParameters, batchLatencyMs: number, batchWasFull: boolean): TunedParameters | null {
    const { maxBatchSize, maxWaitMs } = current;
    if (batchLatencyMs > this.targetLatencyMs) {
      // Waiting is the cheaper thing to give up: it costs latency and buys only fill.
      if (maxWaitMs > this.minWaitMs) {
        const wait = maxWaitMs * SHRINK;
        return { maxBatchSize, maxWaitMs: wait - this.minWaitMs < WAIT_SNAP_MS ? this.minWaitMs : wait };
      }
      if (maxBatchSize > this.minBatchSize) {
        return { maxBatchSize: Math.max(this.minBatchSize, Math.floor(maxBatchSize * SHRINK)), maxWaitMs };
      }
      return null;
    }
    if (batchLatencyMs < this.targetLatencyMs * SPARE_FRACTION) {
      if (batchWasFull) {
        if (maxBatchSize >= this.maxBatchSize) return null;
        const size = Math.max(maxBatchSize + 1, Math.ceil(maxBatchSize * GROW));
        return { maxBatchSize: Math.min(this.maxBatchSize, size), maxWaitMs };
      }
      if (maxWaitMs >= this.maxWaitMs) return null;
      const wait = Math.max(maxWaitMs * GROW, maxWaitMs + WAIT_MIN_STEP_MS);
      return { maxBatchSize, maxWaitMs: Math.min(this.maxWaitMs, wait) };
    }
    return null;
  }
}
