/**
 * Why a floor row missed its goal, from what the row itself measured: the server's CPU per request
 * against the floor's, how many cores that kept busy, and whether the GPU was anywhere near busy.
 * Pure, so the reasons the results print are tested without a GPU (test/unit/bench/floor-reasons.test.ts).
 */
import { FLOOR_GOAL, type FloorRow } from './floors.js';

/** One line per row below its goal saying what bounds it, measured; rows that met it (or were not measured) say nothing. */
export function missReasons(rows: readonly FloorRow[]): string[] {
  const lines: string[] = [];
  for (const r of rows) {
    if (r.met !== false) continue;
    const ratio = r.floor.rps > 0 ? r.tscuda.rps / r.floor.rps : null;
    const head = `${r.name}, ${r.workers} worker${r.workers === 1 ? '' : 's'}: ${ratio === null ? 'no floor' : `${ratio.toFixed(2)} of the floor`} (goal ${FLOOR_GOAL})`;
    const ts = r.tscuda.cpuMsPerRequest;
    const fl = r.floor.cpuMsPerRequest;
    if (ts === null || fl === null || fl <= 0) {
      lines.push(`${head}; the servers' CPU was not read, so what bounds it is not measured`);
      continue;
    }
    // Cores the server kept busy: CPU ms per request times requests per ms.
    const cores = (ts * r.tscuda.rps) / 1000;
    const floorCores = (fl * r.floor.rps) / 1000;
    const busy = r.tscuda.gpuBusy === null ? 'GPU busy not read' : `GPU busy ${r.tscuda.gpuBusy.toFixed(2)}`;
    const bound =
      cores >= 0.85 * r.workers
        ? `its ${r.workers} process${r.workers === 1 ? ' is' : 'es are'} CPU-bound (${cores.toFixed(2)} cores busy)`
        : `its processes were ${cores.toFixed(2)} cores busy of ${r.workers}: the client or latency bounds it, not the server's CPU alone`;
    lines.push(
      `${head}: the server spends ${ts.toFixed(3)} CPU ms per request against the floor's ${fl.toFixed(3)} ` +
        `(${(ts / fl).toFixed(1)}x; the floor ${floorCores.toFixed(2)} cores busy), and ${bound}; ${busy}. ` +
        "The difference is the server's own work per request (routing, validation, fusing, encoding, metrics), not the GPU.",
    );
  }
  return lines;
}
