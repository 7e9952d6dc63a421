/**
 * The STFT job of `stft_job_gsamples_per_s` (bench/tscuda/engine.ts: the same series, flags, lanes,
 * depth and jobs in flight per lane, engine-lent pinned arrays) on one GPU and on two, in one run,
 * with the bound of two GPUs measured in the same run: pinned H2D and D2H on both at once
 * (src/cli/commands/link-bound.ts, shared with `tscuda demo`).
 *
 *   stft_job_multi_gpu_gsamples_per_s   JobEngine({ devices: [0, 1] }), input samples per second
 *   stft_job_multi_gpu_speedup          that over JobEngine({ devices: [0] }), same run
 *   stft_job_multi_gpu_pcie_fraction    that over the two-GPU bound min(H2D, D2H together) / 4 B
 */
import { measureLinks, type LinkBounds } from '../../src/cli/commands/link-bound.js'; // private-path: the CLI's copy-bound measurement, the same bound `tscuda demo --devices` prints
import { JobEngine } from '../../src/engine/index.js';
import { Device } from '../../src/runtime/index.js';
import { summarize, type PassSummary } from '../harness/stats.js';
import { checkStft, closedLoop, IN_FLIGHT_PER_LANE, jobData, LANE_DEPTH, LANES, pinnedStftSpec, STFT_B, STFT_N, WINDOW_MS } from './engine.js';

/** Timed windows per engine (after one warm-up window), as the one-GPU metric's maximum. */
const WINDOWS = 8;
const LINK_BYTES = 256 * 2 ** 20;

/** What one run of the two engines measured. */
export interface MultiGpuStft {
  /** Gsamples/s per timed window. */
  one: PassSummary;
  two: PassSummary;
  links: LinkBounds;
  /** min(H2D, D2H) GB/s / 4 B per sample: one GPU alone (device 0), and both at once. */
  boundOne: number;
  boundTwo: number;
  /** How the two-GPU bound compares with twice one GPU's: >= 0.9 means links of their own. */
  linkScaling: number;
  notes: string[];
}

/** Runs the job mix on `devices` (their lanes all together) and returns the rates per window and a note of the engine's stats. */
async function run(devices: readonly number[], base: Float32Array): Promise<{ rates: number[]; check: string; stats: string }> {
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
      .map((d) => `GPU ${d.device}: ${d.jobs} jobs, ${(d.samplesPerSecond / 1e9).toFixed(2)} Gsamples/s, busy ${(100 * d.gpuBusyFraction).toFixed(0)}%`)
      .join('; ');
    return {
      rates,
      check: checks[0]!,
      stats: `engine.stats() on ${devices.length} GPU(s): ${s.jobs} jobs, avg ${s.avgJobMs.toFixed(2)} ms, p99 ${s.p99JobMs.toFixed(2)} ms; ${perDevice}`,
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
  const boundOne = Math.min(alone.h2d, alone.d2h) / 4;
  const boundTwo = Math.min(links.together.h2d, links.together.d2h) / 4;
  const base = jobData(STFT_B, STFT_N, 11);
  const one = await run([0], base);
  const two = await run([0, 1], base);
  const linkScaling = boundTwo / (2 * boundOne);
  const shape = `${LANES} lanes per GPU of depth ${LANE_DEPTH}, ${IN_FLIGHT_PER_LANE} jobs in flight per lane of ${STFT_B} x ${STFT_N} float32 samples, flags stft + cycles, engine-lent pinned arrays, ${WINDOWS} windows of ${WINDOW_MS} ms (the job of stft_job_gsamples_per_s)`;
  const linkNote =
    `pinned copies of 256 MiB, this run: ` +
    links.perDevice.map((l) => `GPU ${l.device} alone H2D ${l.h2d.toFixed(1)} GB/s, D2H ${l.d2h.toFixed(1)} GB/s`).join('; ') +
    `; both at once H2D ${links.together.h2d.toFixed(1)} GB/s, D2H ${links.together.d2h.toFixed(1)} GB/s -> bound ${boundTwo.toFixed(2)} Gsamples/s (one GPU: ${boundOne.toFixed(2)})`;
  const verdict =
    linkScaling >= 0.9
      ? `the two GPUs' links do not share a bottleneck (together ${(100 * linkScaling).toFixed(0)}% of twice one): speedup goal 1.9`
      : `the two GPUs' links share a bottleneck (together only ${(100 * linkScaling).toFixed(0)}% of twice one): the goal is 0.8 of the two-GPU bound, the speedup is reported`;
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
