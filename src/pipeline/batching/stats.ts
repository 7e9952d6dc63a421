/** What a Batcher counts and samples for its metrics: running totals and bounded windows, never a record per item. */
import { SampleWindow } from './sample-window.js';
import type { BatcherMetrics } from './types.js';

const METRIC_WINDOW = 8192;

/** The Batcher's running figures; metrics() adds the live queue counts the Batcher owns. */
export class BatcherStats {
  batches = 0;
  items = 0;
  fillSum = 0;
  failedBatches = 0;
  completedItems = 0;
  refused = 0;
  firstSubmitAt = -1;
  lastCompletionAt = 0;
  /** Submit-to-dispatch wait per item. */
  readonly waits = new SampleWindow(METRIC_WINDOW);
  /** Submit-to-resolve latency per item. */
  readonly latencies = new SampleWindow(METRIC_WINDOW);

  /** A batch of `size` items was dispatched with room for `capacity`. */
  dispatched(size: number, capacity: number): void {
    this.batches++;
    this.items += size;
    this.fillSum += size / capacity;
  }

  /** A batch of `size` items completed at `now`. */
  completed(size: number, now: number): void {
    this.completedItems += size;
    this.lastCompletionAt = now;
  }

  snapshot(live: { queued: number; inFlight: number; inFlightBatches: number; waiting: number }): BatcherMetrics {
    const [waitP50Ms = 0, waitP99Ms = 0] = this.waits.percentiles([0.5, 0.99]);
    const [latencyP50Ms = 0, latencyP99Ms = 0] = this.latencies.percentiles([0.5, 0.99]);
    const activeMs = this.lastCompletionAt - this.firstSubmitAt;
    return {
      batches: this.batches,
      items: this.items,
      fillRate: this.batches === 0 ? 0 : this.fillSum / this.batches,
      waitP50Ms,
      waitP99Ms,
      latencyP50Ms,
      latencyP99Ms,
      itemsPerSecond: this.firstSubmitAt >= 0 && activeMs > 0 ? (this.completedItems * 1000) / activeMs : 0,
      queued: live.queued,
      inFlight: live.inFlight,
      inFlightBatches: live.inFlightBatches,
      waiting: live.waiting,
      failedBatches: this.failedBatches,
      refused: this.refused,
    };
  }
}
