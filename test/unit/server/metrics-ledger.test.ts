/** The primary's metrics ledger: a replaced worker's counters and histograms stay with its slot, its gauges go. */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MetricsLedger } from '../../../src/server/supervision/metrics-ledger.js';
import type { MetricsSnapshot } from '../../../src/server/supervision/protocol.js';

/** One worker's registry, labelled as a worker labels it (its cluster id). */
function workerRegistry(id: number, counted: number, gauge: number, observed: number[]): Promise<MetricsSnapshot> {
  const registry = new Registry();
  registry.setDefaultLabels({ worker: String(id) });
  new Counter({ name: 'requests_total', help: 'h', labelNames: ['endpoint'], registers: [registry] }).inc(
    { endpoint: '/a' },
    counted,
  );
  new Gauge({ name: 'pending', help: 'h', registers: [registry] }).set(gauge);
  const h = new Histogram({ name: 'seconds', help: 'h', buckets: [1, 10], registers: [registry] });
  for (const v of observed) h.observe(v);
  return registry.getMetricsAsJSON();
}

const value = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};

describe('MetricsLedger', () => {
  it('keeps a dead worker’s counters and histograms in its slot, drops its gauges, never goes backwards', async () => {
    const ledger = new MetricsLedger<object>();
    const a = {};
    const b = {};
    const c = {};
    const counts = 3 + Math.floor(Math.random() * 50);
    ledger.record(a, 0, await workerRegistry(1, counts, 7, [0.5, 5]));
    ledger.record(b, 1, await workerRegistry(2, 11, 2, [20]));
    const before = await ledger.text();
    expect(value(before, 'requests_total{endpoint="/a",worker="0"}')).toBe(counts);
    await ledger.retire(a);
    // Its replacement (cluster id 3) takes slot 0 and has counted 4 so far.
    ledger.record(c, 0, await workerRegistry(3, 4, 1, [0.1]));
    // A late report of the retired worker is ignored (it would count twice).
    ledger.record(a, 0, await workerRegistry(1, 1000, 0, []));
    const after = await ledger.text();
    expect(value(after, 'requests_total{endpoint="/a",worker="0"}')).toBe(counts + 4);
    expect(value(after, 'requests_total{endpoint="/a",worker="1"}')).toBe(11);
    expect(value(after, 'seconds_count{worker="0"}')).toBe(3);
    expect(value(after, 'seconds_bucket{le="1",worker="0"}')).toBe(2);
    expect(value(after, 'pending{worker="0"}')).toBe(1);
    expect(after).not.toMatch(/worker="3"/);
  });
});
