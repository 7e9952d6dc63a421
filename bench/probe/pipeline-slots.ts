/**
 * pipeline_overlap_efficiency of the balanced pipeline (bench/tscuda/balanced.ts) against the
 * number of slots of ManagedContext's triple mode, runs interleaved so drift hits all alike:
 *   tsx bench/probe/pipeline-slots.ts [--runs 5] [--mib 16] [--steps 64]
 */
import { parseArgs } from 'node:util';
import { percentile } from '../harness/stats.js';
import { runBalancedPipeline } from '../tscuda/balanced.js';

const { values } = parseArgs({
  options: { runs: { type: 'string' }, mib: { type: 'string' }, steps: { type: 'string' } },
});
const runs = Number(values.runs ?? 5);
const bytesPerStep = Number(values.mib ?? 16) * 2 ** 20;
const steps = Number(values.steps ?? 64);
const counts = [3, 4, 5, 6];
const results = new Map<number, number[]>(counts.map((c) => [c, []]));
await runBalancedPipeline({ steps, bytesPerStep, mode: 'triple' }); // warm-up
for (let r = 0; r < runs; r++) {
  for (const slots of counts)
    results
      .get(slots)!
      .push((await runBalancedPipeline({ steps, bytesPerStep, mode: 'triple', slots })).overlapEfficiency);
}
for (const [slots, xs] of results) {
  console.log(
    `slots ${slots}: efficiency median ${percentile(xs, 0.5).toFixed(3)} (min ${Math.min(...xs).toFixed(3)}, max ${Math.max(...xs).toFixed(3)})`,
  );
}
