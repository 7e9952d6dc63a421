/**
 * What bounds the STFT job on two GPUs, and the 16-bit job on one (issues 23 and 26)? Not a
 * benchmark with goals: a probe whose JSON answers it. Run on a GPU host (two GPUs for part 3):
 *   tsx bench/probe/multi-gpu-limit.ts [--out probe.json] [--windows 6]
 * 1. copy bounds (src/cli/commands/link-bound.ts): each GPU alone and both at once, one direction
 *    at a time and both directions at once (the job's traffic);
 * 2. the engine's closed loop (the bench's job mix) on GPU 0, on GPUs 0 and 1, f32 and i16, with
 *    the main thread's event-loop utilization while it runs (1.0: the JavaScript thread is the
 *    limit) and the engine's stats;
 * 3. the same one-GPU engine in two processes at once, one per GPU: if two processes reach what
 *    one process on two GPUs does not, the one thread is the limit; if not, the host is;
 * 4. the i16 job at 4, 8 and 12 lanes.
 * A child (`--child DEVICES --mode f32|i16 [--no-graphs]`) runs one engine and prints its rates as JSON.
 */
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { measureLinks } from '../../src/cli/commands/link-bound.js'; // private-path: the CLI's copy-bound measurement
import { JobEngine, type JobSpec } from '../../src/engine/index.js';
import { Device } from '../../src/runtime/index.js';
import { summarize } from '../harness/stats.js';
import { closedLoop, IN_FLIGHT_PER_LANE, LANE_DEPTH, LANES } from '../tscuda/engine.js';
import { jobData, pinnedStftSpec, STFT_B, STFT_N } from '../tscuda/engine-jobs.js';
import { pinnedI16Spec, quantizeI16 } from '../tscuda/engine-i16.js';

const SELF = fileURLToPath(import.meta.url);
const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    windows: { type: 'string', default: '6' },
    child: { type: 'string' },
    mode: { type: 'string', default: 'f32' },
    lanes: { type: 'string' },
    'no-graphs': { type: 'boolean' },
  },
});
const WINDOWS = Number(values.windows);

type Mode = 'f32' | 'i16';

interface EngineRun {
  devices: number[];
  mode: Mode;
  lanes: number;
  gsamplesPerSecond: number;
  rates: number[];
  eventLoopUtilization: number;
  cpuUserMsPerJob: number;
  cpuSystemMsPerJob: number;
  jobs: number;
  stats: string;
}

/** The bench's closed loop on `devices` in `mode`, with the thread's event-loop utilization and CPU per job over the timed windows. */
async function runEngine(devices: number[], mode: Mode, lanes = LANES): Promise<EngineRun> {
  const engine = new JobEngine({
    devices,
    lanes,
    laneDepth: LANE_DEPTH,
    precision: 'f32',
    maxQueued: 4 * lanes * devices.length * IN_FLIGHT_PER_LANE,
    label: `probe ${mode}`,
    computeGraphs: values['no-graphs'] !== true,
  });
  try {
    const base = jobData(STFT_B, STFT_N, 11);
    const counts = mode === 'i16' ? quantizeI16(base) : undefined;
    const specs: JobSpec[] = Array.from({ length: lanes * devices.length * IN_FLIGHT_PER_LANE }, () =>
      counts ? pinnedI16Spec(engine, counts) : pinnedStftSpec(engine, base),
    );
    await Promise.all(specs.map((s) => engine.submit(s).result));
    let elu0 = performance.eventLoopUtilization();
    let cpu0 = process.cpuUsage();
    let jobs0 = engine.stats().jobs;
    let elu = 0;
    let cpu = { user: 0, system: 0 };
    let jobs = 0;
    const rates = await closedLoop(engine, specs, WINDOWS, (phase) => {
      if (phase === 'start') {
        elu0 = performance.eventLoopUtilization();
        cpu0 = process.cpuUsage();
        jobs0 = engine.stats().jobs;
      } else {
        elu = performance.eventLoopUtilization(elu0).utilization;
        cpu = process.cpuUsage(cpu0);
        jobs = engine.stats().jobs - jobs0;
      }
    });
    const s = engine.stats();
    const perDevice = s.devices
      .map((d) => `GPU ${d.device}: ${d.jobs} jobs, busy ${(100 * d.gpuBusyFraction).toFixed(0)}%`)
      .join('; ');
    return {
      devices,
      mode,
      lanes,
      gsamplesPerSecond: summarize(rates).median,
      rates,
      eventLoopUtilization: elu,
      cpuUserMsPerJob: cpu.user / 1e3 / Math.max(1, jobs),
      cpuSystemMsPerJob: cpu.system / 1e3 / Math.max(1, jobs),
      jobs,
      stats: `avg ${s.avgJobMs.toFixed(2)} ms, p99 ${s.p99JobMs.toFixed(2)} ms; ${perDevice}`,
    };
  } finally {
    await engine.close();
  }
}

if (values.child !== undefined) {
  const run = await runEngine(
    values.child.split(',').map(Number),
    values.mode as Mode,
    values.lanes ? Number(values.lanes) : LANES,
  );
  process.stdout.write(`${JSON.stringify(run)}\n`);
  process.exit(0);
}

const log = (what: string, value: unknown): void => void process.stdout.write(`${what}: ${JSON.stringify(value)}\n`);
const report: Record<string, unknown> = {
  date: new Date().toISOString(),
  gpus: Device.count(),
  name: Device.get(0).name,
};
const two = Device.count() >= 2;
const links = measureLinks(two ? [Device.get(0), Device.get(1)] : [Device.get(0)], 256 * 2 ** 20);
report.links = links;
log('links', links);

const runs: EngineRun[] = [];
const record = (r: EngineRun): void => {
  runs.push(r);
  log(`engine ${r.mode} on [${r.devices}] lanes ${r.lanes}`, {
    gs: r.gsamplesPerSecond.toFixed(2),
    elu: r.eventLoopUtilization.toFixed(3),
    userMsPerJob: r.cpuUserMsPerJob.toFixed(3),
    sysMsPerJob: r.cpuSystemMsPerJob.toFixed(3),
    stats: r.stats,
  });
};
record(await runEngine([0], 'f32'));
if (two) record(await runEngine([0, 1], 'f32'));
record(await runEngine([0], 'i16'));
if (two) record(await runEngine([0, 1], 'i16'));
for (const lanes of [8, 12]) record(await runEngine([0], 'i16', lanes));
report.engine = runs;

if (two) {
  const child = (device: number, mode: Mode) =>
    execa('tsx', [SELF, '--child', String(device), '--mode', mode, '--windows', String(WINDOWS)], {
      reject: false,
      timeout: 120_000,
    });
  const processes: Record<string, unknown> = {};
  for (const mode of ['f32', 'i16'] as const) {
    const both = await Promise.all([child(0, mode), child(1, mode)]);
    const parsed = both.map((p) =>
      p.exitCode === 0
        ? (JSON.parse(p.stdout.trim().split('\n').pop()!) as EngineRun)
        : { error: p.stderr.slice(-2000) },
    );
    const sum = parsed.reduce((a, p) => a + ('gsamplesPerSecond' in p ? p.gsamplesPerSecond : 0), 0);
    processes[mode] = { sum, each: parsed };
    log(`two processes ${mode}`, {
      sum: sum.toFixed(2),
      each: parsed.map((p) =>
        'gsamplesPerSecond' in p
          ? `${p.gsamplesPerSecond.toFixed(2)} (elu ${p.eventLoopUtilization.toFixed(2)}, ${p.stats})`
          : p.error,
      ),
    });
  }
  report.twoProcesses = processes;
}
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
process.exit(0);
