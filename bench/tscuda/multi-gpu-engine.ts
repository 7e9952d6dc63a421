/**
 * The STFT job of `stft_job_gsamples_per_s` (bench/tscuda/engine.ts: the same series, flags, lanes,
 * depth and jobs in flight per lane, engine-lent pinned arrays) on one GPU and on two, in one run,
 * with the bound of two GPUs measured in the same run: pinned H2D and D2H on both at once
 * (src/cli/commands/link-bound.ts, shared with `tscuda demo`).
 *
 *   stft_job_multi_gpu_gsamples_per_s   JobEngine({ devices: [0, 1] }), input samples per second
 *   stft_job_multi_gpu_speedup          that over JobEngine({ devices: [0] }), same run
 *   stft_job_multi_gpu_pcie_fraction    that over the two-GPU bound: GB/s each way with H2D and
 *                                       D2H running on both GPUs at once / 4 B per sample
 *
 * The job copies 4 B per sample in and 4 B out at the same time, so its bound is the copy rate
 * with both directions busy on every GPU at once (the traffic it makes), not one direction at a
 * time: on a 2 x H100 host one direction at a time scales 98% from one GPU to two, both directions
 * at once only 76% (the host's side of the links is shared). Both figures are in the notes.
 */
import { measureLinks, type LinkBounds } from '../../src/cli/commands/link-bound.js'; // private-path: the CLI's copy-bound measurement, the same bound `tscuda demo --devices` prints
import { JobEngine } from '../../src/engine/index.js';
import { Device } from '../../src/runtime/index.js';
import { summarize, type PassSummary } from '../harness/stats.js';
import { checkStft, closedLoop, graphsNote, IN_FLIGHT_PER_LANE, LANE_DEPTH, LANES, WINDOW_MS } from './engine.js';
import { jobData, pinnedStftSpec, STFT_B, STFT_N } from './engine-jobs.js';

/** Timed windows per engine (after one warm-up window), as the one-GPU metric's maximum. */
const WINDOWS = 8;
const LINK_BYTES = 256 * 2 ** 20;

/** What one run of the two engines measured. */
export interface MultiGpuStft {
  /** Gsamples/s per timed window. */
  one: PassSummary;
  two: PassSummary;
  links: LinkBounds;
  /** GB/s each way with H2D and D2H at once / 4 B per sample: one GPU alone (device 0), and both GPUs at once. */
  boundOne: number;
  boundTwo: number;
  /** How the two-GPU bound compares with the sum of each GPU's alone: >= 0.9 means links of their own. */
  linkScaling: number;
  notes: string[];
}

/** Runs the job mix on `devices` (their lanes all together) and returns the rates per window and a note of the engine's stats. */
async function run(
  devices: readonly number[],
  base: Float32Array,
): Promise<{ rates: number[]; check: string; stats: string }> {
  const lanes = LANES * devices.length;
  const engine = new JobEngine({
    devices,
    lanes: LANES,
    laneDepth: LANE_DEPTH,
    precision: 'f32',
    maxQueued: 4 * lanes * IN_FLIGHT_PER_LANE,
    label: `bench stft ${devices.length} GPU(s)`,
  });
  try {
    const specs = Array.from({ length: lanes * IN_FLIGHT_PER_LANE }, () => pinnedStftSpec(engine, base));
    // The first job on every lane is checked against the float64 reference (a wrong GPU is not measured, never fast).
    const first = await Promise.all(specs.slice(0, lanes).map((s) => engine.submit(s).result));
    const checks = first.map((r) => checkStft(r, base));
    const rates = await closedLoop(engine, specs, WINDOWS);
    const s = engine.stats();
    const perDevice = s.devices
      .map(
        (d) =>
          `GPU ${d.device}: ${d.jobs} jobs, ${(d.samplesPerSecond / 1e9).toFixed(2)} Gsamples/s, busy ${(100 * d.gpuBusyFraction).toFixed(0)}%`,
      )
      .join('; ');
    return {
      rates,
      check: checks[0]!,
      stats: `engine.stats() on ${devices.length} GPU(s): ${s.jobs} jobs, avg ${s.avgJobMs.toFixed(2)} ms, p99 ${s.p99JobMs.toFixed(2)} ms; ${perDevice}; ${graphsNote(engine)}`,
    };
  } finally {
    await engine.close();
  }
}

/** The one-GPU and two-GPU engines on the same job mix, and the copy bounds; devices 0 and 1. */
export async function measureStftMultiGpu(): Promise<MultiGpuStft> {
  const devices = [Device.get(0), Device.get(1)];
  const links = measureLinks(devices, LINK_BYTES);
  const alone = links.perDevice[0]!;
  const boundOne = alone.both / 4;
  const boundTwo = links.together.both / 4;
  const oneWayTwo = Math.min(links.together.h2d, links.together.d2h) / 4;
  const base = jobData(STFT_B, STFT_N, 11);
  const one = await run([0], base);
  const two = await run([0, 1], base);
  const linkScaling = links.together.both / links.perDevice.reduce((sum, l) => sum + l.both, 0);
  const oneWayScaling =
    Math.min(links.together.h2d, links.together.d2h) /
    links.perDevice.reduce((sum, l) => sum + Math.min(l.h2d, l.d2h), 0);
  const shape = `${LANES} lanes per GPU of depth ${LANE_DEPTH}, ${IN_FLIGHT_PER_LANE} jobs in flight per lane of ${STFT_B} x ${STFT_N} float32 samples, flags stft + cycles, engine-lent pinned arrays, ${WINDOWS} windows of ${WINDOW_MS} ms (the job of stft_job_gsamples_per_s)`;
  const linkNote =
    `pinned copies of 256 MiB, this run: ` +
    links.perDevice
      .map(
        (l) =>
          `GPU ${l.device} alone H2D ${l.h2d.toFixed(1)} GB/s, D2H ${l.d2h.toFixed(1)} GB/s, both directions at once ${l.both.toFixed(1)} GB/s each way`,
      )
      .join('; ') +
    `; both GPUs at once H2D ${links.together.h2d.toFixed(1)} GB/s, D2H ${links.together.d2h.toFixed(1)} GB/s, both directions ${links.together.both.toFixed(1)} GB/s each way` +
    ` -> bound ${boundTwo.toFixed(2)} Gsamples/s (one GPU: ${boundOne.toFixed(2)}); one direction at a time it would be ${oneWayTwo.toFixed(2)}, a rate the job's traffic (both ways at once) cannot reach`;
  const verdict =
    linkScaling >= 0.9
      ? `the two GPUs' links do not share a bottleneck (both directions on both GPUs at once: ${(100 * linkScaling).toFixed(0)}% of the sum of each alone): speedup goal 1.9`
      : `the two GPUs' links share a bottleneck: both directions on both GPUs at once carry ${(100 * linkScaling).toFixed(0)}% of the sum of each GPU alone (one direction at a time ${(100 * oneWayScaling).toFixed(0)}%), so two GPUs can be at most ${(boundTwo / boundOne).toFixed(2)}x one; the goal is 0.8 of the two-GPU bound, the speedup is reported`;
  return {
    one: summarize(one.rates),
    two: summarize(two.rates),
    links,
    boundOne,
    boundTwo,
    linkScaling,
    notes: [shape, one.check, two.check, linkNote, verdict, one.stats, two.stats],
  };
}
