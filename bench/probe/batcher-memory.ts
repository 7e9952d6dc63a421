/**
 * Memory of a Batcher whose dispatch never settles (issue 22): 100,000 submits of one item
 * each, and what the batcher holds afterwards: batches in flight, submits queued and waiting,
 * submits refused with BatcherFullError, and the heap's growth (after a forced GC). CUDA-free.
 * Runs the defaults and, for comparison, the unbounded setting (maxConcurrentBatches: Infinity,
 * maxWaiting 65536: what the defaults were before issue 22).
 *   node --expose-gc --import tsx bench/probe/batcher-memory.ts [--submits 100000] [--batch 4] [--channel 1024]
 */
import { parseArgs } from 'node:util';
import { Batcher, BatcherFullError, type BatcherDescriptor } from '../../src/pipeline/index.js';

const { values } = parseArgs({
  options: { submits: { type: 'string' }, batch: { type: 'string' }, channel: { type: 'string' } },
});
const SUBMITS = Number(values.submits ?? 100_000);
const BATCH = Number(values.batch ?? 4);
const CHANNEL = Number(values.channel ?? 1024);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (the heap is measured after a forced collection)');
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function heapUsed(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await settle();
    gc!();
  }
  return process.memoryUsage().heapUsed;
}

interface Row {
  setting: string;
  submits: number;
  refused: number;
  inFlightBatches: number;
  inFlightItems: number;
  queued: number;
  waiting: number;
  heapGrowthMiB: number;
  ms: number;
}

async function probe(setting: string, extra: Partial<BatcherDescriptor>): Promise<Row> {
  const before = await heapUsed();
  const t0 = performance.now();
  const batcher = new Batcher<number, number>(() => new Promise<readonly number[]>(() => undefined), {
    maxBatchSize: BATCH,
    maxWaitMs: 1,
    channelSize: CHANNEL,
    label: setting,
    ...extra,
  });
  let refused = 0;
  let closed = 0;
  for (let i = 0; i < SUBMITS; i++) {
    // No array of promises here: whatever stays on the heap is what the batcher holds.
    void batcher.submitOne(i).catch((e: unknown) => (e instanceof BatcherFullError ? refused++ : closed++));
    // Yield now and then so the batcher's timers and dispatches run as they would under load.
    if (i % 1000 === 999) await settle();
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
  const m = batcher.metrics;
  const after = await heapUsed();
  const row: Row = {
    setting,
    submits: SUBMITS,
    refused,
    inFlightBatches: m.inFlightBatches,
    inFlightItems: m.inFlight,
    queued: m.queued,
    waiting: m.waiting,
    heapGrowthMiB: (after - before) / 2 ** 20,
    ms: performance.now() - t0,
  };
  batcher.dispose(); // rejects everything it held with BatcherClosedError
  await settle();
  if (refused + closed !== SUBMITS)
    throw new Error(`${setting}: ${SUBMITS - refused - closed} submits did not settle after dispose()`);
  return row;
}

const rows = [
  await probe('defaults', {}),
  await probe('unbounded (maxConcurrentBatches: Infinity, maxWaiting: 65536)', {
    maxConcurrentBatches: Infinity,
    maxWaiting: 65536,
  }),
];
console.log(
  `Batcher with a dispatch that never settles: ${SUBMITS} submitOne() calls, maxBatchSize ${BATCH}, maxWaitMs 1, channelSize ${CHANNEL} (node ${process.version})`,
);
console.log(
  '| setting | refused (BatcherFullError) | batches in flight | items in flight | queued | waiting | heap growth |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(
    `| ${r.setting} | ${r.refused} | ${r.inFlightBatches} | ${r.inFlightItems} | ${r.queued} | ${r.waiting} | ${r.heapGrowthMiB.toFixed(1)} MiB |`,
  );
}
