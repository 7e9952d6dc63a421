/**
 * The serve bench's floor part: the floor rows (floors.ts) at each process count (1, 2 and the
 * host's default, that one run as `tscuda serve` without --workers), the floor alone at more
 * process counts (the best floor over process counts), and the goals: every row >= 0.8 of its
 * floor with the same process count, the default >= 0.8 of the best floor, event-loop lag p99
 * <= 10 ms at c=64.
 */
import {
  floorOnly,
  floorRows,
  ratioOf,
  FLOOR_GOAL,
  type FloorRow,
  type FloorRowSpec,
  type FloorRunOptions,
} from './floors.js';
import { missReasons } from './floor-reasons.js';
import { RPS_MIX, THROUGHPUT_MIX } from './mixes.js';
import { startTscuda, waitReady } from './services.js';

/** The rows of every process count: small bodies at c=64, 16 x 65536 at c=16, both in f32 and as i16 in / f16 out. */
export const FLOOR_SPECS: readonly FloorRowSpec[] = [
  { name: 'small f32', mix: RPS_MIX, wire: 'f32', concurrency: 64 },
  { name: '16x65536 f32', mix: THROUGHPUT_MIX, wire: 'f32', concurrency: 16 },
  { name: 'small i16->f16', mix: RPS_MIX, wire: 'i16-f16', concurrency: 64 },
  { name: '16x65536 i16->f16', mix: THROUGHPUT_MIX, wire: 'i16-f16', concurrency: 16 },
];

/** The event-loop lag goal of a worker at c=64, ms. */
export const LAG_GOAL_MS = 10;

/** How the floor part runs. */
export interface FloorPartOptions extends FloorRunOptions {
  basePort: number;
  /** Process counts with tscuda and floor rows; the default count is added (and run without --workers). */
  workerCounts: readonly number[];
  /** What `tscuda serve` runs without --workers on this host. */
  defaultWorkers: number;
  /** More process counts of the floor alone, for the best floor over process counts. */
  floorSweep: readonly number[];
  /** The simulated engine (--sim): --workers is always given, as the bench's supervisor has no default of its own. */
  sim: boolean;
  lanes: number;
  /** More tscuda serve options of every row (e.g. load shedding off). */
  serveArgs: readonly string[];
}

/** The best floor of a row over every process count measured. */
export interface BestFloor {
  row: string;
  workers: number;
  rps: number;
}

/** A goal of the floor part and whether it was met. */
export interface FloorGoal {
  goal: string;
  row: string;
  tscuda: number | null;
  floor: number | null;
  ratio: number | null;
  met: boolean | null;
}

/** What the floor part measured. */
export interface FloorPart {
  rows: FloorRow[];
  bestFloors: BestFloor[];
  goals: FloorGoal[];
  notes: string[];
}

/** Runs the floor part (see the file's comment). */
export async function runFloorPart(options: FloorPartOptions): Promise<FloorPart> {
  const counts = [...new Set([...options.workerCounts, options.defaultWorkers])].sort((a, b) => a - b);
  const rows: FloorRow[] = [];
  const notes: string[] = [];
  let port = options.basePort;
  for (const workers of counts) {
    const isDefault = workers === options.defaultWorkers;
    const args = [
      ...(isDefault && !options.sim ? [] : ['--workers', String(workers)]),
      '--lanes',
      String(options.lanes),
      '--max-queued',
      '1024',
      ...options.serveArgs,
    ];
    const tscuda = startTscuda(options.root, port++, args, options.verbose);
    try {
      const ready = await waitReady(tscuda.base, 90_000, tscuda.child);
      if (!ready.ready) {
        notes.push(`floor rows with ${workers} workers not run: tscuda serve not ready: ${ready.reason}`);
        continue;
      }
      rows.push(...(await floorRows(tscuda, workers, isDefault, port++, FLOOR_SPECS, options)));
    } catch (error) {
      notes.push(`floor rows with ${workers} workers: ${(error as Error).message}`);
    } finally {
      await tscuda.stop();
    }
  }
  const best = new Map<string, BestFloor>();
  for (const r of rows)
    if (r.floor.rps > (best.get(r.name)?.rps ?? 0))
      best.set(r.name, { row: r.name, workers: r.workers, rps: r.floor.rps });
  const answered = new Map(rows.map((r) => [r.name, r.bytesOut]));
  // The floor alone at more process counts, for the rows in f32 (its i16 rows move fewer bytes of the same kind).
  for (const workers of options.floorSweep.filter((w) => !counts.includes(w)))
    for (const spec of FLOOR_SPECS.filter((s) => s.wire === 'f32')) {
      const bytes = answered.get(spec.name);
      if (bytes === undefined) continue;
      try {
        const rps = await floorOnly(workers, port++, spec, bytes, options);
        if (rps > (best.get(spec.name)?.rps ?? 0)) best.set(spec.name, { row: spec.name, workers, rps });
      } catch (error) {
        notes.push(`floor alone with ${workers} processes: ${(error as Error).message}`);
      }
    }
  const goals: FloorGoal[] = [];
  for (const r of rows)
    goals.push({
      goal: `>= ${FLOOR_GOAL} x the HTTP floor with ${r.workers} process${r.workers === 1 ? '' : 'es'}`,
      row: `${r.name}, ${r.workers} workers`,
      tscuda: r.tscuda.rps,
      floor: r.floor.rps,
      ratio: ratioOf(r.tscuda.rps, r.floor.rps),
      met: r.met,
    });
  for (const r of rows.filter((x) => x.defaultWorkers)) {
    const b = best.get(r.name);
    const q = ratioOf(r.tscuda.rps, b?.rps ?? null);
    goals.push({
      goal: `default tscuda serve (${r.workers} workers) >= ${FLOOR_GOAL} x the best floor over process counts${b === undefined ? '' : ` (${b.workers} processes)`}`,
      row: r.name,
      tscuda: r.tscuda.rps,
      floor: b?.rps ?? null,
      ratio: q,
      met: q === null ? null : q >= FLOOR_GOAL,
    });
  }
  for (const r of rows.filter((x) => x.concurrency === 64))
    goals.push({
      goal: `event-loop lag p99 <= ${LAG_GOAL_MS} ms in a worker at c=64 (ms)`,
      row: `${r.name}, ${r.workers} workers`,
      tscuda: r.tscuda.eventLoopLagP99Ms,
      floor: null,
      ratio: null,
      met: r.tscuda.eventLoopLagP99Ms === null ? null : r.tscuda.eventLoopLagP99Ms <= LAG_GOAL_MS,
    });
  return { rows, bestFloors: [...best.values()], goals, notes };
}

/** The floor part as Markdown: the rows, what bounds the floor, the goals. */
export function floorMarkdown(part: FloorPart): string[] {
  const f = (v: number | null, digits = 2): string =>
    v === null ? '—' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(digits);
  const kib = (b: number): string =>
    b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(2)} MiB` : `${(b / 1024).toFixed(1)} KiB`;
  return [
    '## Against the HTTP floor',
    '',
    "Each row's load against tscuda serve and against a bare node:http server with the same process count (node:cluster) that reads each body into memory and answers precomputed bytes of tscuda's answer size, alternated in the same run with the same client processes (best step of each). CPU: the server's whole process tree per answered request. GB/s per core: body bytes both ways per CPU second of the server.",
    '',
    '| row | workers | c | bytes in / out | tscuda req/s | floor req/s | tscuda / floor | p50 ms (tscuda / floor) | p99 ms (tscuda / floor) | CPU ms/req (tscuda / floor) | GB/s per core (tscuda / floor) | lag p99 ms | GPU busy | met |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | --- | --- | --- | ---: | ---: | --- |',
    ...part.rows.map(
      (r) =>
        `| ${r.name} | ${r.workers}${r.defaultWorkers ? ' (default)' : ''} | ${r.concurrency} | ${kib(r.bytesIn)} / ${kib(r.bytesOut)} | ${f(r.tscuda.rps)} | ${f(r.floor.rps)} | ${f(r.metrics[0]!.ratio, 3)} | ${r.tscuda.p50Ms} / ${r.floor.p50Ms} | ${r.tscuda.p99Ms} / ${r.floor.p99Ms} | ${f(r.tscuda.cpuMsPerRequest, 3)} / ${f(r.floor.cpuMsPerRequest, 3)} | ${f(r.gbPerSPerCore.tscuda)} / ${f(r.gbPerSPerCore.floor)} | ${f(r.tscuda.eventLoopLagP99Ms, 1)} | ${f(r.tscuda.gpuBusy)} | ${r.met === null ? 'not measured' : r.met ? 'yes' : 'no'} |`,
    ),
    '',
    ...part.rows
      .filter((r) => r.tscuda.non2xx + r.tscuda.errors + r.floor.non2xx + r.floor.errors > 0)
      .map(
        (r) =>
          `- ${r.name}, ${r.workers} workers: tscuda answered ${r.tscuda.non2xx} non-2xx (429: load shedding) and left ${r.tscuda.errors} unanswered; the floor ${r.floor.non2xx} and ${r.floor.errors} (throughput counts 200s only)`,
      ),
    '',
    `Best floor over process counts: ${part.bestFloors.map((b) => `${b.row} ${b.rps.toFixed(0)} req/s (${b.workers} processes)`).join('; ') || '—'}.`,
    '',
    '| goal | row | tscuda | floor | ratio | met |',
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...part.goals.map(
      (g) =>
        `| ${g.goal} | ${g.row} | ${f(g.tscuda)} | ${f(g.floor)} | ${f(g.ratio, 3)} | ${g.met === null ? 'not measured' : g.met ? 'yes' : 'no'} |`,
    ),
    '',
    ...(part.rows.some((r) => r.met === false)
      ? [
          'Why a row is below its goal, from its own measurements:',
          '',
          ...missReasons(part.rows).map((l) => `- ${l}`),
          '',
        ]
      : []),
  ];
}
