/**
 * `npm run docs:numbers`: every generated block of README.md and docs/ rewritten from the committed
 * results under bench/results/. The numbers test runs `regenerate` into memory and compares: a
 * figure that differs from its file, or a verdict the file does not give, fails it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { headlineTables, hostSections, multiGpuSection, perCallSentence, rowsSection } from './bench-tables.js';
import { findBlocks, NumbersBlockError, replaceBlocks } from './blocks.js';
import { demoSection, newestDemo, type DemoRun } from './demo-summary.js';
import { QUEUE_DOOR, resultsSection, SERVE_DOOR, throughputSection } from './door-tables.js';
import { newestPerHost, newestWithRows, readResults, type ResultsCatalog } from './results.js';
import { rowMetricNames } from '../../bench/signal-ops/row.js';
import { SIGNAL_OP_ROWS } from '../../bench/signal-ops/rows/index.js';

/** What the docs quote: the results files, and the newest demo run. */
export type DocsCatalog = ResultsCatalog & { demo: DemoRun | undefined };

/** Renders one block from the catalog; `base` is the path from the document to bench/results/. */
type Generator = (catalog: DocsCatalog, base: string) => string;

/** Every block a document may hold, by name. */
export const GENERATORS: Readonly<Record<string, Generator>> = {
  /** docs/benchmarks.md: the newest whole `npm run bench` run of each GPU, every metric. */
  'bench-hosts': (c, base) =>
    hostSections(
      newestPerHost(c.bench, (d) => d.gpu),
      base,
    ),
  /** The newest several-GPU run and what bounds it. */
  'bench-multi-gpu': (c, base) => multiGpuSection(c.multiGpu[0], base),
  /** docs/engine.md: the job engine's f32 and CWT rows of the newest whole run, with the link bound. */
  'bench-engine-jobs': (c, base) =>
    rowsSection(
      c.bench[0],
      [
        'stft_job_gsamples_per_s',
        'stft_job_pcie_fraction',
        'stft_job_pageable_gsamples_per_s',
        'cwt_job_gsamples_per_s',
      ],
      base,
    ),
  /** docs/16-bit-samples.md: the 16-bit job's rows of the newest whole run, with the link bound. */
  'bench-i16-job': (c, base) =>
    rowsSection(c.bench[0], ['stft_job_i16_gsamples_per_s', 'stft_job_i16_bound_fraction'], base),
  /**
   * docs/signal.md: the signal operations' rows (issue 41), with their HBM notes, from the newest run
   * that measured them all: a whole `npm run bench` or `npm run bench:signal` (their peers run in the same run either way).
   */
  'bench-signal-ops': (c, base) => {
    const names = SIGNAL_OP_ROWS.flatMap(rowMetricNames);
    return rowsSection(newestWithRows(c.rowRuns, names), names, base);
  },
  /** docs/orchestration.md: peer copies and NCCL all-reduce of the newest several-GPU run. */
  'bench-multi-gpu-collectives': (c, base) =>
    rowsSection(c.multiGpu[0], ['p2p_copy_gbps', 'nccl_allreduce_busbw_gbps'], base),
  /** The per-call goal against koffi's floor: met and missed, from the newest whole run. */
  'bench-per-call': (c) => perCallSentence(c.bench[0]),
  /** README.md: a few rows of the newest one- and two-GPU runs, then the per-call sentence. */
  'readme-performance': (c, base) =>
    `${headlineTables(c.bench[0], c.multiGpu[0], base)}\n\n${perCallSentence(c.bench[0])}`,
  /** docs/engine.md: the newest committed `tscuda demo` run. */
  'demo-summary': (c, base) => demoSection(c.demo, base),
  /** docs/serving.md: tscuda serve against the bare node:http floor. */
  'serve-throughput': (c, base) => throughputSection(c.serve, SERVE_DOOR, base),
  /** Every metric of the newest serve run per host. */
  'serve-results': (c, base) => resultsSection(c.serve, SERVE_DOOR, base),
  /** docs/scale-out.md: the queue against bare BullMQ. */
  'queue-throughput': (c, base) => throughputSection(c.queue, QUEUE_DOOR, base),
  /** Every metric of the newest queue run per host. */
  'queue-results': (c, base) => resultsSection(c.queue, QUEUE_DOOR, base),
};

/** README.md and every Markdown file under docs/ (the generated API reference aside), relative to `root`. */
export function documentFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir)
      .sort()
      .flatMap((e) => {
        const p = join(dir, e);
        if (statSync(p).isDirectory()) return e === 'api' && dir === join(root, 'docs') ? [] : walk(p);
        return e.endsWith('.md') ? [p] : [];
      });
  return [join(root, 'README.md'), ...walk(join(root, 'docs'))].map((p) => relative(root, p));
}

/** `text` (the document `file`, relative to the root) with every block regenerated from `catalog`. */
export function regenerate(text: string, file: string, catalog: DocsCatalog): string {
  const base = relative(dirname(file), 'bench/results') || '.';
  return replaceBlocks(text, file, (name) => {
    const generator = GENERATORS[name];
    if (generator === undefined)
      throw new NumbersBlockError(
        `${file}: no generator named numbers:${name} (known: ${Object.keys(GENERATORS).join(', ')})`,
      );
    return generator(catalog, base);
  });
}

/** One document as committed and as regenerated. */
export interface RegeneratedDocument {
  file: string;
  committed: string;
  regenerated: string;
  /** How many generated blocks it holds. */
  blocks: number;
}

/** Everything under `root`/bench/results/ that the docs quote. */
export function readCatalog(root: string): DocsCatalog {
  const dir = join(root, 'bench', 'results');
  return { ...readResults(dir), demo: newestDemo(dir) };
}

/** Every document of the tree at `root`, regenerated in memory from its bench/results/. */
export function regenerateAll(root: string): RegeneratedDocument[] {
  const catalog = readCatalog(root);
  return documentFiles(root).map((file) => {
    const committed = readFileSync(join(root, file), 'utf8');
    return {
      file,
      committed,
      regenerated: regenerate(committed, file, catalog),
      blocks: findBlocks(committed, file).length,
    };
  });
}
