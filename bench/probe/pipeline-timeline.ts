/**
 * Where the balanced pipeline's iterations lose time: runs it triple-buffered under a Profiler
 * and prints, over the steady-state steps, each stage's duration as the pipeline ran it (against
 * its calibration), the gaps each stream sat idle, and what the compute of each step waited for:
 *   tsx bench/probe/pipeline-timeline.ts [--runs 3] [--slots 4] [--mib 16] [--steps 64]
 */
import { parseArgs } from 'node:util';
import { percentile } from '../harness/stats.js';
import { runBalancedPipeline } from '../tscuda/balanced.js';
import { Profiler } from '../../src/orchestration/index.js';
import type { TimelineRecord } from '../../src/index.js';

const { values } = parseArgs({
  options: { runs: { type: 'string' }, slots: { type: 'string' }, mib: { type: 'string' }, steps: { type: 'string' } },
});
const runs = Number(values.runs ?? 3);
const slots = Number(values.slots ?? 4);
const bytesPerStep = Number(values.mib ?? 16) * 2 ** 20;
const steps = Number(values.steps ?? 64);

const fmt = (x: number): string => x.toFixed(3);
const med = (xs: number[]): number => (xs.length === 0 ? NaN : percentile(xs, 0.5));

await runBalancedPipeline({ steps, bytesPerStep, mode: 'triple', slots }); // warm-up
for (let r = 0; r < runs; r++) {
  using profiler = new Profiler({ label: 'pipeline timeline' });
  const result = await runBalancedPipeline({ steps, bytesPerStep, mode: 'triple', slots, profiler });
  const records = await profiler.collect();
  const byStep = new Map<number, Partial<Record<'upload' | 'compute' | 'download', TimelineRecord>>>();
  for (const rec of records) {
    const m = /^(upload|compute|download) #(\d+)$/.exec(rec.name);
    if (!m) continue;
    const stage = m[1] as 'upload' | 'compute' | 'download';
    const step = Number(m[2]);
    const entry = byStep.get(step) ?? {};
    entry[stage] = rec;
    byStep.set(step, entry);
  }
  const ids = [...byStep.keys()].sort((a, b) => a - b);
  const inner = ids.slice(3, -3);
  const dur = { upload: [] as number[], compute: [] as number[], download: [] as number[] };
  const idle = { upload: [] as number[], compute: [] as number[], download: [] as number[] };
  let computeWaitedUpload = 0;
  let computeWaitedOther = 0;
  const iter: number[] = [];
  for (const id of inner) {
    const cur = byStep.get(id)!;
    const prev = byStep.get(id - 1);
    for (const stage of ['upload', 'compute', 'download'] as const) {
      const c = cur[stage];
      const p = prev?.[stage];
      if (c) dur[stage].push(c.endMs - c.startMs);
      if (c && p) idle[stage].push(c.startMs - p.endMs);
    }
    const c = cur.compute;
    const u = cur.upload;
    const pc = prev?.compute;
    if (c && u && pc) {
      const gap = c.startMs - pc.endMs;
      if (gap > 0.01) {
        if (Math.abs(c.startMs - u.endMs) < 0.01) computeWaitedUpload++;
        else computeWaitedOther++;
      }
    }
    if (cur.download && prev?.download) iter.push(cur.download.endMs - prev.download.endMs);
  }
  const big = (xs: number[]): string =>
    `${xs.filter((x) => x > 0.05).length}/${xs.length} over 0.05 ms, sum ${fmt(xs.reduce((a, b) => a + Math.max(0, b), 0))} ms`;
  console.log(
    `run ${r} slots ${slots}: efficiency ${fmt(result.overlapEfficiency)}, host iteration ${fmt(result.msPerIteration)} ms, GPU iteration median ${fmt(med(iter))} ms; ` +
      `calibrated upload ${fmt(result.perStageMs.upload)} compute ${fmt(result.perStageMs.compute)} download ${fmt(result.perStageMs.download)}`,
  );
  for (const stage of ['upload', 'compute', 'download'] as const) {
    console.log(
      `  ${stage}: in-pipeline duration median ${fmt(med(dur[stage]))} p90 ${fmt(percentile(dur[stage], 0.9))}; idle before it: median ${fmt(med(idle[stage]))}, ${big(idle[stage])}`,
    );
  }
  console.log(
    `  compute idle gaps: ${computeWaitedUpload} waited for their upload to end, ${computeWaitedOther} for something else (a late enqueue or the slot's previous download)`,
  );
  const worst = inner
    .map((id) => ({ id, gap: (byStep.get(id)!.compute?.startMs ?? 0) - (byStep.get(id - 1)?.compute?.endMs ?? 0) }))
    .sort((a, b) => b.gap - a.gap)
    .slice(0, 3);
  for (const w of worst) {
    const s = byStep.get(w.id)!;
    console.log(
      `  worst compute gap before #${w.id}: ${fmt(w.gap)} ms; its upload ${fmt(s.upload!.startMs)}..${fmt(s.upload!.endMs)}, compute ${fmt(s.compute!.startMs)}, previous download ends ${fmt(byStep.get(w.id - 1)?.download?.endMs ?? NaN)}`,
    );
  }
}
