/**
 * The committed results under bench/results/, read and sorted into what the docs quote: the main
 * bench per host, the several-GPU bench, the serve bench and the queue bench. Only whole runs on
 * a GPU are quoted: partial runs (`--only`), the landed tree's comparison runs and runs over a
 * simulated or fake engine stay in the folder for the record but never reach a table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResults, MetricResult } from '../../bench/report/types.js';

/** A results file and what was read from it. */
export interface ResultsFile<T> {
  /** The file's name inside bench/results/, e.g. `nvidia-h200-20261127.json`. */
  file: string;
  data: T;
}

/** The main bench (`npm run bench`) and the several-GPU bench (`bench/tscuda/multi-gpu.ts`) write this shape. */
export type BenchFile = ResultsFile<BenchResults & { settings?: { only?: string | null } }>;

/** One metric of the serve or queue bench; `floor` is the bare transport doing the same moves, where measured. */
export interface DoorMetric {
  name: string;
  unit: string;
  tscuda: number | null;
  /** The bare transport (node:http, BullMQ) making the same moves, in the same run. */
  floor?: number | null | undefined;
  /** The GPU's busy fraction while the row ran. */
  gpuBusy?: number | null | undefined;
  gpuBusyFraction?: number | null | undefined;
  /** The serve bench's Python peer. */
  python?: number | null | undefined;
  /** The queue bench's in-process engine. */
  inProcess?: number | null | undefined;
  /** Goals are written by the benches as text (">= 1.8"), with the verdict beside them. */
  goal?: string | null | undefined;
  /** The queue bench's verdict. */
  met?: boolean | null | undefined;
  /** The serve bench's verdict. */
  pass?: boolean | null | undefined;
}

/** What the serve (`bench/serve/main.ts`) and queue (`bench/queue/main.ts`) benches write. */
export interface DoorResults {
  date: string;
  /** The queue bench's GPU name. */
  gpu?: string | undefined;
  /** The serve bench's GPU name. */
  device?: string | undefined;
  /** The serve bench over a simulated engine (`--sim`) writes 'sim'. */
  mode?: string | undefined;
  /** The Node line the bench ran on (absent in runs that did not record it). */
  node?: string | undefined;
  /** The queue bench over a CUDA-free engine. */
  fake?: boolean | undefined;
  sim?: unknown;
  metrics: DoorMetric[];
}

/** Everything the docs quote, newest first within each list. */
export interface ResultsCatalog {
  /** Whole `npm run bench` runs, newest first. */
  bench: BenchFile[];
  /**
   * Every `npm run bench` run of this project's trees, whole or limited by `--only` (as `npm run
   * bench:signal` is), newest first: where a block quotes a few rows, the newest run that measured them.
   */
  rowRuns: BenchFile[];
  /** `bench/tscuda/multi-gpu.ts` runs, newest first. */
  multiGpu: BenchFile[];
  /** `bench/serve/main.ts` runs, newest first. */
  serve: ResultsFile<DoorResults>[];
  /** `bench/queue/main.ts` runs on a real GPU, newest first. */
  queue: ResultsFile<DoorResults>[];
}

/** A results file that cannot be read as the bench that named it writes it. */
export class ResultsFileError extends Error {
  override name = 'ResultsFileError';
}

/** Comparison runs of another tree: kept for the record, never quoted. */
function isRecordOnly(file: string): boolean {
  return /-landed-|^landed-tree-/.test(file);
}

function parse(dir: string, file: string): unknown {
  try {
    return JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown;
  } catch (e) {
    throw new ResultsFileError(`bench/results/${file}: not readable JSON (${(e as Error).message})`);
  }
}

function hasMetrics(file: string, data: unknown): data is { date: string; metrics: unknown[] } {
  if (typeof data !== 'object' || data === null || !('metrics' in data)) return false;
  const d = data as { date?: unknown; metrics?: unknown };
  if (!Array.isArray(d.metrics)) return false;
  if (typeof d.date !== 'string' || Number.isNaN(Date.parse(d.date)))
    throw new ResultsFileError(`bench/results/${file}: "date" is not a date (${JSON.stringify(d.date)})`);
  for (const [i, m] of d.metrics.entries()) {
    const metric = m as Partial<MetricResult> | null;
    if (typeof metric?.name !== 'string' || typeof metric.unit !== 'string')
      throw new ResultsFileError(`bench/results/${file}: metrics[${i}] has no name or unit`);
  }
  return true;
}

function newestFirst<T extends { date: string }>(a: ResultsFile<T>, b: ResultsFile<T>): number {
  return Date.parse(b.data.date) - Date.parse(a.data.date) || a.file.localeCompare(b.file);
}

/** Reads every `*.json` of `dir` (bench/results/) into the catalog the docs are generated from. */
export function readResults(dir: string): ResultsCatalog {
  const catalog: ResultsCatalog = { bench: [], rowRuns: [], multiGpu: [], serve: [], queue: [] };
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    if (isRecordOnly(file)) continue;
    const data = parse(dir, file);
    if (!hasMetrics(file, data)) continue;
    if (file.startsWith('serve-')) {
      const serve = data as DoorResults;
      if (serve.mode !== 'sim') catalog.serve.push({ file, data: serve });
    } else if (file.startsWith('queue-')) {
      const queue = data as DoorResults;
      if (queue.fake !== true && (queue.sim ?? null) === null) catalog.queue.push({ file, data: queue });
    } else if (file.startsWith('multi-gpu-')) catalog.multiGpu.push({ file, data: data as BenchFile['data'] });
    else catalog.rowRuns.push({ file, data: data as BenchFile['data'] });
  }
  for (const list of [catalog.rowRuns, catalog.multiGpu, catalog.serve, catalog.queue]) list.sort(newestFirst);
  // Whole runs: those no --only limited.
  catalog.bench = catalog.rowRuns.filter((run) => (run.data.settings?.only ?? null) === null);
  return catalog;
}

/** The newest run of `runs` (newest first) that measured every metric of `names`. */
export function newestWithRows(runs: readonly BenchFile[], names: readonly string[]): BenchFile | undefined {
  return runs.find((run) => names.every((name) => run.data.metrics.some((m) => m.name === name)));
}

/** The newest file of each GPU, in the order of their newest runs; `gpuOf` names a file's GPU. */
export function newestPerHost<T extends { date: string }>(
  files: readonly ResultsFile<T>[],
  gpuOf: (data: T) => string,
): ResultsFile<T>[] {
  const seen = new Set<string>();
  return files.filter((f) => {
    const gpu = gpuOf(f.data);
    if (seen.has(gpu)) return false;
    seen.add(gpu);
    return true;
  });
}

/** The name of the GPU a serve or queue run used. */
export function doorGpu(data: DoorResults): string {
  return data.gpu ?? data.device ?? 'unknown GPU';
}
