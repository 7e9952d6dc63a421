/**
 * Does the GPU's compute hold the 16-bit STFT job below its link bound (issue 26)? Not a benchmark
 * with goals: a probe. The bench's i16 job (pinned i16 in, f16 filtered wave out) runs in the
 * bench's closed loop with parts of its compute left out, the variants alternated over rounds so
 * the link's drift shows; if the rate rises as compute leaves, compute is (part of) the limit.
 *   tsx bench/probe/i16-compute.ts [--rounds 2] [--windows 5] [--only full,no-cycles]
 * Variants: full (the bench's job), no-cycles (no band powers, no dominant cycle), no-detrend
 * (detrend false: no statistics pass), bare (neither, and no window).
 */
import { parseArgs } from 'node:util';
import { JobEngine, type JobSpec } from '../../src/engine/index.js';
import { Device } from '../../src/runtime/index.js';
import { measureLinks } from '../../src/cli/commands/link-bound.js'; // private-path: the CLI's copy-bound measurement
import { summarize } from '../harness/stats.js';
import { closedLoop, IN_FLIGHT_PER_LANE, LANE_DEPTH, LANES } from '../tscuda/engine.js';
import { jobData, STFT_B, STFT_N } from '../tscuda/engine-jobs.js';
import { pinnedI16Spec, quantizeI16 } from '../tscuda/engine-i16.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    windows: { type: 'string', default: '5' },
    only: { type: 'string' },
  },
});

const VARIANTS: Record<string, (spec: JobSpec) => JobSpec> = {
  full: (s) => s,
  'no-cycles': (s) => ({ ...s, flags: ['stft'], into: { ...s.into, bandPowers: undefined } }),
  'no-detrend': (s) => ({ ...s, detrend: false }),
  bare: (s) => ({
    ...s,
    flags: ['stft'],
    detrend: false,
    window: 'boxcar',
    into: { ...s.into, bandPowers: undefined },
  }),
};
const names = values.only ? values.only.split(',') : Object.keys(VARIANTS);
const device = Device.get(0);
const { h2d, d2h, both } = measureLinks([device], 256 * 2 ** 20).perDevice[0]!;
const bound16 = Math.min(h2d, d2h) / 2;
console.log(
  `link: H2D ${h2d.toFixed(1)} GB/s, D2H ${d2h.toFixed(1)} GB/s, both at once ${both.toFixed(1)} GB/s each way; 16-bit bound ${bound16.toFixed(2)} Gsamples/s`,
);
const counts = quantizeI16(jobData(STFT_B, STFT_N, 11));
const results: Record<string, number[]> = {};
for (let round = 1; round <= Number(values.rounds); round++) {
  for (const name of names) {
    const variant = VARIANTS[name];
    if (!variant) throw new RangeError(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(', ')}`);
    const engine = new JobEngine({
      device,
      lanes: LANES,
      laneDepth: LANE_DEPTH,
      precision: 'f32',
      maxQueued: 4 * LANES * IN_FLIGHT_PER_LANE,
      label: `probe ${name}`,
    });
    try {
      const specs = Array.from({ length: LANES * IN_FLIGHT_PER_LANE }, () => variant(pinnedI16Spec(engine, counts)));
      await engine.submit(specs[0]!).result;
      const rates = await closedLoop(engine, specs, Number(values.windows));
      const median = summarize(rates).median;
      (results[name] ??= []).push(median);
      const stats = engine.stats();
      const avg = stats.avgJobMs;
      console.log(
        `round ${round} ${name.padEnd(11)} ${median.toFixed(2)} Gsamples/s = ${(median / bound16).toFixed(3)} of the bound; avg ${avg.toFixed(2)} ms per job`,
      );
    } finally {
      await engine.close();
    }
  }
}
console.log(JSON.stringify({ bound16, h2d, d2h, both, results }));
