/**
 * The service's metrics in the primary: every live worker's series, plus what the workers that
 * are gone had counted, so a counter of the service never goes backwards across a worker restart.
 *
 * Why not prom-client's AggregatorRegistry.clusterMetrics(): it asks the live workers only, so a
 * replaced worker's series vanish and every `sum()` over them drops; a Prometheus `rate()`
 * survives a counter reset, a dashboard reading totals does not. Here each worker's series are
 * labelled with its slot (`worker="0"`, ... the place a replacement takes over, not the cluster's
 * ever-growing worker id, so the series stay few), and a slot's dead workers' last counters and
 * histograms (never gauges: a gauge is a reading of a live process) are added to its live one.
 * The last counters of a worker are the ones it reported when it left (after its drain) or, when
 * it died without a word (`kill -9`), the last snapshot taken from it: the service's counters
 * then never go below a value already shown.
 */
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client';
import type { MetricsSnapshot } from './protocol.js';

/** How long a collection waits for a worker's answer before its last snapshot stands in, ms. */
const COLLECT_TIMEOUT_MS = 2000;

/** The label that names a worker's slot in the aggregated series. */
const SLOT_LABEL = 'worker';

/** Series a dead worker leaves to its slot: those that only grow. */
function monotonic(snapshot: MetricsSnapshot): MetricsSnapshot {
  // prom-client declares `type` as a numeric enum; at run time it is the text of the exposition format.
  return snapshot.filter((m) => String(m.type) === 'counter' || String(m.type) === 'histogram');
}

/** The snapshot with every series labelled by `slot`. */
function relabel(snapshot: MetricsSnapshot, slot: number): MetricsSnapshot {
  return snapshot.map((m) => ({
    ...m,
    values: m.values.map((v) => ({ ...v, labels: { ...v.labels, [SLOT_LABEL]: String(slot) } })),
  }));
}

/** Keeps each worker's last snapshot and the slots' retired counters; aggregates them on demand. */
export class MetricsLedger<W extends object> {
  private readonly last = new Map<W, { slot: number; snapshot: MetricsSnapshot }>();
  private readonly retired = new Map<number, MetricsSnapshot>();
  private readonly gone = new WeakSet<W>();
  private readonly pending = new Map<number, (metrics: MetricsSnapshot | null) => void>();
  private nextRequest = 1;

  /**
   * Asks each live worker (`ask` sends it a collect with the request id; its answer comes back
   * through answer()), records what arrives within COLLECT_TIMEOUT_MS, and resolves with the
   * service's text (a worker that did not answer in time counts with its last snapshot).
   */
  async collect(
    workers: readonly (readonly [W, number])[],
    ask: (worker: W, requestId: number) => void,
  ): Promise<string> {
    await Promise.all(
      workers.map(
        ([worker, slot]) =>
          new Promise<void>((resolve) => {
            const requestId = this.nextRequest++;
            const timer = setTimeout(() => {
              this.pending.delete(requestId);
              resolve();
            }, COLLECT_TIMEOUT_MS);
            this.pending.set(requestId, (metrics) => {
              clearTimeout(timer);
              this.pending.delete(requestId);
              if (metrics !== null) this.record(worker, slot, metrics);
              resolve();
            });
            ask(worker, requestId);
          }),
      ),
    );
    return this.text();
  }

  /** A worker's answer to a collect (null when it could not read its registry). */
  answer(requestId: number, metrics: MetricsSnapshot | null): void {
    this.pending.get(requestId)?.(metrics);
  }

  /** A fresh snapshot of a live worker (its answer to a collect, or its final report); ignored once it is retired. */
  record(worker: W, slot: number, snapshot: MetricsSnapshot): void {
    if (!this.gone.has(worker)) this.last.set(worker, { slot, snapshot: relabel(snapshot, slot) });
  }

  /** The worker is gone: its last counters stay with its slot. */
  async retire(worker: W): Promise<void> {
    if (this.gone.has(worker)) return;
    this.gone.add(worker);
    const entry = this.last.get(worker);
    this.last.delete(worker);
    if (entry === undefined) return;
    const before = this.retired.get(entry.slot);
    const kept = monotonic(entry.snapshot);
    // Summed now, so a slot keeps one set of series however many workers it has had.
    this.retired.set(
      entry.slot,
      before === undefined
        ? kept
        : await AggregatorRegistry.aggregate<PrometheusContentType>([before, kept]).getMetricsAsJSON(),
    );
  }

  /** The Prometheus text of the service: the live workers' last snapshots and the retired counters, summed per series. */
  async text(): Promise<string> {
    const parts: MetricsSnapshot[] = [...[...this.last.values()].map((e) => e.snapshot), ...this.retired.values()];
    return AggregatorRegistry.aggregate<PrometheusContentType>(parts).metrics();
  }
}
