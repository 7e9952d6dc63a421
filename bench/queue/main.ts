/**
 * The queue bench: the same STFT job mix through the Redis queue with 1 and 2 worker processes
 * (one per GPU on a two-GPU host, else both on GPU 0) against the in-process JobEngine and against
 * the queue's floor, bare BullMQ making the same data moves on the same Redis servers with the
 * same processes (floor.ts; `--no-floor` skips it): jobs/s and the small job's p50, goals 0.8x and
 * 1.2x the floor; the queue's added latency on a small job; and a fault run (2 workers, one SIGKILLed every few
 * seconds and restarted, thousands of small jobs: none lost, none completed twice, all settled).
 * `--fake MS` runs it all without a GPU over the FakeEngine (jobs of MS ms), to check the bench;
 * `--sim NS` over SimEngine, a simulated GPU per worker process (`--sim-poll spin`: its completions
 * noticed on setImmediate as the real poller notices them; default timers) (NS ns per sample: 3.4 is ~0.9 ms
 * for the mix's job, the H200's in-process rate), to measure the queue's own costs without a GPU.
 * The queue runs submit from `--clients` processes (default 3: a deployment has several fronts,
 * and one Node process moving 2 MiB per job was what the 2-worker run waited on) and keep the
 * samples and results on `--blob-stores` redis-servers besides the queue's (default 3: one Redis
 * thread moving every byte was the other limit; see docs/scale-out.md); the same 1- and 2-worker
 * runs with one client and one Redis (the setup before these options) are measured beside, in
 * the notes. Each run reports the CPU time per job of every client, worker and Redis (INFO cpu),
 * in the notes and under `cpu` in the JSON: a process near 100% of a core is the limit.
 * redis-server comes from TSCUDA_REDIS_SERVER or PATH.
 * `--only-overhead` runs only what queue_overhead_p50_ms needs (the in-process latency and the
 * 1-worker run; `--jobs` still sizes that run's throughput part, which warms the path as in a full
 * run): a quick look while working on the queue's latency.
 * `--concurrency N` sets each worker's jobs held at once (default the worker's: 3 per lane).
 * `--pin` puts each worker process on `--pin-cores` physical cores of its own (default 2) and the
 * bench, its clients and Redis servers on the rest, as separate hosts would keep them (cpu-sets.ts).
 * The 1- and 2-worker runs are measured `--pairs` times (default 3), alternating which goes first;
 * a pair is one run of each, and the pair with the median speedup is reported (every pair in the
 * notes): one pair of 2000-job runs moved between 1.42 and 2.07 from call to call on one host.
 *   tsx bench/queue/main.ts [--fake 2 | --sim 3.4 [--sim-poll spin]] [--clients 6] [--blob-stores 6] [--jobs 2000] [--pairs 3] [--fault-jobs 3000] [--fault-seconds 20] [--kill-every 3] [--concurrency N] [--pin [--pin-cores 2]] [--only-overhead]
 * Writes queue-<gpu>-<yyyymmdd>.{json,md} to $TSCUDA_BENCH_OUT, else bench/results/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { JobSpec } from '../../src/engine/index.js';
import { JobQueue } from '../../src/queue/index.js';
import { startRedis, type TestRedis } from '../../test/unit/queue/redis-server.js';
import { yyyymmdd } from '../harness/naming.js';
import { cpuPerJob, cpuSnapshot, describeCpu, type CpuPerJob } from './cpu.js';
import { describeCpus, pinProcess, planCpuSets, readTopology, type CpuPlan } from './cpu-sets.js';
import { latencyP50, mixJob, rates, throughput } from './mix.js';
import { describeSetup, queueRun, type QueueSetup, type RunResult } from './runs.js';
import { startWorkerProcess, type WorkerChild as Child } from './workers.js';
import { queueFloorRun, type FloorRunResult } from './floor-run.js';
import { faultRun, type QueueMetric } from './fault-run.js';
import { makeBenchEngine } from './engine-choice.js';
import { writeQueueResults } from './results-files.js';

const ROOT = join(import.meta.dirname, '..', '..');
const { values } = parseArgs({
  options: {
    fake: { type: 'string' },
    sim: { type: 'string' },
    jobs: { type: 'string', default: '2000' },
    window: { type: 'string', default: '64' },
    'overhead-runs': { type: 'string', default: '300' },
    'fault-jobs': { type: 'string', default: '3000' },
    'kill-every': { type: 'string', default: '3' },
    'fault-seconds': { type: 'string', default: '20' },
    lanes: { type: 'string', default: '4' },
    'blob-stores': { type: 'string', default: '6' },
    clients: { type: 'string', default: '6' },
    'only-overhead': { type: 'boolean', default: false },
    pairs: { type: 'string', default: '3' },
    concurrency: { type: 'string' },
    'sim-poll': { type: 'string', default: 'timer' },
    pin: { type: 'boolean', default: false },
    'pin-cores': { type: 'string', default: '2' },
    'no-floor': { type: 'boolean', default: false },
  },
});
const onlyOverhead = values['only-overhead'];

/** How far the client processes' own finishing times spread within a run (the tail, when fewer than all still submit). */
function describeTail(r: RunResult): string[] {
  if (r.clientMs === undefined || r.clientMs.length < 2) return [];
  const s = (ms: number): string => (ms / 1000).toFixed(2);
  return [
    `clients finished after ${s(Math.min(...r.clientMs))}-${s(Math.max(...r.clientMs))} s of the run's ${s(r.wallMs)} s`,
  ];
}
const fakeMs = values.fake === undefined ? undefined : Number(values.fake);
const simNs = values.sim === undefined ? undefined : Number(values.sim);
const simPollOption = values['sim-poll'];
if (simPollOption !== 'timer' && simPollOption !== 'spin')
  throw new Error(`--sim-poll must be timer or spin, got ${simPollOption}`);
const simPoll: 'timer' | 'spin' = simPollOption;
const JOBS = Number(values.jobs);
const WINDOW = Number(values.window);
const started = performance.now();

/** --pin: the CPU sets, and this process (whose children inherit its set) moved onto the rest. */
function pinPlan(): CpuPlan | undefined {
  if (!values.pin) return undefined;
  const topology = readTopology();
  const plan = topology && planCpuSets(topology, 2, Number(values['pin-cores']));
  if (plan === undefined) {
    process.stderr.write(
      `--pin: this host's CPUs (${topology?.length ?? 'unknown'}) cannot give 2 workers ${values['pin-cores']} cores each and keep as many for the rest\n`,
    );
    process.exit(2);
  }
  pinProcess(process.pid, plan.rest);
  return plan;
}
const cpuPlan = pinPlan();

/** Worker process `index` (0 or 1: its GPU is placement[index], its CPU set cpuPlan.workers[index]). */
async function startWorker(
  redis: TestRedis,
  queue: string,
  name: string,
  index: number,
  lockMs: number,
  blobStores: string[] | undefined,
): Promise<Child> {
  const child = await startWorkerProcess({
    redisUrl: redis.url,
    queue,
    name,
    device: placement[index]!,
    lanes: Number(values.lanes),
    lockMs,
    fakeMs,
    simNs,
    blobStores,
    extra: [
      ...(values.concurrency === undefined ? [] : ['--concurrency', values.concurrency]),
      ...(simNs === undefined ? [] : ['--sim-poll', simPoll]),
    ],
  });
  if (cpuPlan !== undefined) pinProcess(child.process.pid!, cpuPlan.workers[index]!);
  return child;
}

// Ended by a signal or a closed pipe (| head), the program still exits through process.exit, so the
// Redis servers and processes it started go with it (startRedis and execa stop theirs on exit).
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
process.stdout.on('error', () => process.exit(1));
const metrics: QueueMetric[] = [];
const notes: string[] = [];
const redis = await startRedis();
// Blob stores: more redis-servers that hold the samples and results (JobQueue's blobStores).
const storeServers = await Promise.all(Array.from({ length: Number(values['blob-stores']) }, () => startRedis()));
const blobStores = storeServers.length === 0 ? undefined : storeServers.map((s) => s.url);
const info = [new Redis(redis.url), ...storeServers.map((s) => new Redis(s.url))];
const setup: QueueSetup = { clients: Number(values.clients), blobStores };
// The setup of the runs before --clients and --blob-stores existed, measured beside for comparison.
const single: QueueSetup = { clients: 1, blobStores: undefined };
const cpu: Record<string, CpuPerJob> = {};
const { engine, gpu, devices } = await makeBenchEngine({
  simNs,
  simPoll,
  fakeMs,
  lanes: Number(values.lanes),
});
const placement = devices >= 2 ? [0, 1] : [0, 0];
if (devices < 2)
  notes.push(
    'one GPU: the two worker processes share GPU 0 (the speedup is then of the queue path, not of a second GPU)',
  );
notes.push(`queue runs: ${describeSetup(setup)} (--clients, --blob-stores)`);
if (cpuPlan !== undefined)
  notes.push(
    `--pin: worker processes on CPUs ${cpuPlan.workers.map((w, i) => `${describeCpus(w)} (worker ${i})`).join(' and ')}, ${values['pin-cores']} physical cores each; the bench, its clients and Redis servers on ${describeCpus(cpuPlan.rest)}`,
  );
if (simNs !== undefined)
  notes.push(
    `--sim ${simNs}: CUDA-free SimEngine, a simulated GPU per process (${simNs} ns per sample, completions noticed on ${simPoll === 'spin' ? 'setImmediate as the real poller' : 'timers'}); not a GPU measurement`,
  );
if (fakeMs !== undefined)
  notes.push(
    `--fake ${fakeMs}: CUDA-free FakeEngine (each job ${fakeMs} ms), to check the bench; not a GPU measurement`,
  );
const inProcessRun = (spec: JobSpec): Promise<unknown> => engine.submit(spec, { wait: true }).then((job) => job.result);
const runWith = (s: QueueSetup, workers: number, latencyRuns = 0): Promise<RunResult> =>
  queueRun({
    redisUrl: redis.url,
    redisInfo: info.slice(0, 1 + (s.blobStores?.length ?? 0)),
    setup: s,
    workers,
    jobs: JOBS,
    window: WINDOW,
    latencyRuns,
    startWorker: (queue, i, stores) => startWorker(redis, queue, `w${i}`, i, 30_000, stores),
  });
try {
  // In-process baseline: the same mix straight into one JobEngine.
  const inProcessSpecs = Array.from({ length: Math.min(JOBS, 32) }, mixJob);
  await throughput(2 * WINDOW, WINDOW, inProcessSpecs, inProcessRun); // warm, as the queue runs are (runs.ts)
  const before = await cpuSnapshot(info.slice(0, 1), []);
  const inProcess = rates(await throughput(onlyOverhead ? 0 : JOBS, WINDOW, inProcessSpecs, inProcessRun));
  cpu.inProcess = cpuPerJob(before, await cpuSnapshot(info.slice(0, 1), []), JOBS);
  const inProcessLatency = await latencyP50(Number(values['overhead-runs']), inProcessRun);
  const runs: Record<number, RunResult> = {};
  // The latency is measured in the first 1-worker run; throughput and speedup over alternated pairs.
  const first = await runWith(setup, 1, Number(values['overhead-runs']));
  const overhead = first.latencyMs! - inProcessLatency;
  runs[1] = first;
  if (!onlyOverhead) {
    const pairs: { one: RunResult; two: RunResult; speedup: number }[] = [];
    for (let p = 0; p < Math.max(1, Number(values.pairs)); p++) {
      let one: RunResult, two: RunResult;
      if (p === 0) [one, two] = [first, await runWith(setup, 2)];
      else if (p % 2 === 1) [two, one] = [await runWith(setup, 2), await runWith(setup, 1)];
      else [one, two] = [await runWith(setup, 1), await runWith(setup, 2)];
      pairs.push({ one, two, speedup: two.jobsPerS / one.jobsPerS });
    }
    const median = [...pairs].sort((a, b) => a.speedup - b.speedup)[(pairs.length - 1) >> 1]!;
    runs[1] = median.one;
    runs[2] = median.two;
    notes.push(
      `1- and 2-worker runs in ${pairs.length} alternated pair(s), the pair of median speedup reported: ` +
        pairs
          .map(
            (x, i) =>
              `pair ${i + 1}: ${x.one.jobsPerS.toFixed(0)} / ${x.two.jobsPerS.toFixed(0)} jobs/s = ${x.speedup.toFixed(2)}x`,
          )
          .join('; '),
    );
  }
  // The floor: bare BullMQ with the same setup, processes, jobs and window (floor.ts).
  const floors: Record<number, FloorRunResult> = {};
  if (!values['no-floor'])
    for (const count of Object.keys(runs).map(Number))
      floors[count] = await queueFloorRun({
        redisUrl: redis.url,
        blobStores: setup.blobStores,
        workers: count,
        concurrency: Number(values.concurrency ?? 3 * Number(values.lanes)),
        clients: setup.clients,
        jobs: onlyOverhead ? 0 : JOBS,
        window: WINDOW,
        latencyRuns: count === 1 ? Number(values['overhead-runs']) : 0,
      });
  if (!values['no-floor'])
    notes.push(
      'floor: bare BullMQ (Queue, a Worker whose processor moves the bytes and returns, QueueEvents) with the same Redis servers, client processes, jobs and window, run after the tscuda runs',
    );
  const ratioOf = (a: number | null | undefined, b: number | null | undefined): number | null =>
    a == null || b == null || b === 0 ? null : Number((a / b).toFixed(3));
  for (const [count, r] of Object.entries(runs)) {
    cpu[`${count}w`] = r.cpu;
    const floor = floors[Number(count)];
    const jobsRatio = ratioOf(r.jobsPerS, floor?.jobsPerS);
    metrics.push({
      name: `queue_stft_jobs_per_s_${count}w`,
      unit: 'jobs/s',
      better: 'higher',
      tscuda: r.jobsPerS,
      inProcess: inProcess.jobsPerS,
      floor: floor?.jobsPerS ?? null,
      floorRatio: jobsRatio,
      ...(onlyOverhead || floor === undefined
        ? {}
        : { goal: '>= 0.8 x floor', met: jobsRatio !== null && jobsRatio >= 0.8 }),
      notes: [
        `${count} worker process(es) on GPU(s) ${placement.slice(0, Number(count)).join(',')}; ${JOBS} jobs of 16 x 16384 f32, ${WINDOW} in flight`,
        describeCpu(r.cpu),
        ...describeTail(r),
      ],
    });
    metrics.push({
      name: `queue_stft_gsamples_per_s_${count}w`,
      unit: 'Gsamples/s',
      better: 'higher',
      tscuda: r.gsamplesPerS,
      inProcess: inProcess.gsamplesPerS,
      floor: floor?.gsamplesPerS ?? null,
      floorRatio: ratioOf(r.gsamplesPerS, floor?.gsamplesPerS),
      notes: [],
    });
  }
  if (!onlyOverhead && (setup.clients !== single.clients || setup.blobStores !== undefined)) {
    const [one, two] = [await runWith(single, 1), await runWith(single, 2)];
    cpu['1w-single'] = one.cpu;
    cpu['2w-single'] = two.cpu;
    notes.push(
      `for comparison, ${describeSetup(single)}: 1 worker ${one.jobsPerS.toFixed(0)} jobs/s, 2 workers ${two.jobsPerS.toFixed(0)} jobs/s (speedup ${(two.jobsPerS / one.jobsPerS).toFixed(2)})`,
      `  1 worker: ${describeCpu(one.cpu)}`,
      `  2 workers: ${describeCpu(two.cpu)}`,
    );
  }
  if (runs[2] !== undefined) {
    const speedup = runs[2].jobsPerS / runs[1]!.jobsPerS;
    metrics.push({
      name: 'queue_two_worker_speedup',
      unit: 'x',
      better: 'higher',
      tscuda: speedup,
      inProcess: null,
      goal: '>= 1.8',
      met: speedup >= 1.8,
      notes: ['2-worker jobs/s over 1-worker jobs/s'],
    });
  }
  const floorP50 = floors[1]?.latencyMs ?? null;
  const p50Ratio = ratioOf(first.latencyMs, floorP50);
  metrics.push({
    name: 'queue_small_job_p50_ms',
    unit: 'ms',
    better: 'lower',
    tscuda: first.latencyMs ?? null,
    inProcess: inProcessLatency,
    floor: floorP50,
    floorRatio: p50Ratio,
    goal: '<= 1.2 x floor',
    ...(p50Ratio === null ? {} : { met: p50Ratio <= 1.2 }),
    notes: [
      'one 4 x 4096 job at a time through the queue (1 worker), end to end; the floor: the same moves through bare BullMQ',
    ],
  });
  metrics.push({
    name: 'queue_overhead_p50_ms',
    unit: 'ms',
    better: 'lower',
    tscuda: overhead,
    inProcess: inProcessLatency,
    goal: '< 1',
    met: overhead < 1,
    notes: [
      'one 4 x 4096 job at a time: p50 end-to-end through the queue (1 worker) minus the in-process p50 (inProcess column)',
    ],
  });

  if (!onlyOverhead)
    metrics.push(
      ...(await faultRun({
        redisUrl: redis.url,
        blobStores,
        startWorker: (queue, workerName, index, lockMs) =>
          startWorker(redis, queue, workerName, index, lockMs, blobStores),
        faultJobs: Number(values['fault-jobs']),
        killEveryS: Number(values['kill-every']),
        faultSeconds: Number(values['fault-seconds']),
      })),
    );
} finally {
  await engine.close();
  for (const i of info) i.disconnect();
  await redis.dispose();
  for (const s of storeServers) await s.dispose();
}
if (cpu.inProcess !== undefined) notes.push(`in-process: ${describeCpu(cpu.inProcess)}`);

const date = new Date();
const results = {
  date: date.toISOString(),
  gpu,
  // Not a GPU measurement: the FakeEngine or the simulated GPU.
  fake: fakeMs !== undefined || simNs !== undefined,
  sim: simNs ?? null,
  settings: {
    jobs: JOBS,
    window: WINDOW,
    lanes: Number(values.lanes),
    faultJobs: Number(values['fault-jobs']),
    faultSeconds: Number(values['fault-seconds']),
    killEveryS: Number(values['kill-every']),
    blobStores: storeServers.length,
    clients: setup.clients,
    workerConcurrency: values.concurrency === undefined ? 'default (3 per lane)' : Number(values.concurrency),
    simPoll: simNs === undefined ? null : simPoll,
  },
  metrics,
  notes,
  cpu,
  durationS: (performance.now() - started) / 1000,
};
const dir = process.env.TSCUDA_BENCH_OUT ?? join(ROOT, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const { base, markdown } = writeQueueResults(dir, gpu, date, results, metrics, notes);
console.log(markdown);
console.log(`wrote ${base}.json and .md`);
process.exit(0);
