/**
 * Several-GPU benchmarks, with their baselines in the same run:
 *
 * - `stft_job_multi_gpu_gsamples_per_s`, `stft_job_multi_gpu_speedup`, `stft_job_multi_gpu_pcie_fraction`:
 *   the job mix of `stft_job_gsamples_per_s` on JobEngine({ devices: [0, 1] }) against the same
 *   engine on one GPU and against the two-GPU copy bound, all measured in this run
 *   (multi-gpu-engine.ts).
 * - `p2p_copy_gbps`: a 256 MiB peer copy device 0 -> device 1 (`copyFromPeer`, cuMemcpyPeerAsync,
 *   peer access enabled where the driver allows it), against the same loop in C (compiled here
 *   with nvcc) and PyTorch's cross-device `copy_`.
 * - `nccl_allreduce_busbw_gbps`: a 256 MiB f32 all-reduce, one process per GPU (Communicator.initRank),
 *   as bus bandwidth (2 (n-1)/n x bytes / time, NCCL's definition), against
 *   torch.distributed.all_reduce on the same GPUs (bench/peers/nccl_peer.py).
 *
 * It first prints the topology (nvidia-smi topo -m, nvidia-smi nvlink -s, cuDeviceCanAccessPeer
 * both ways). With fewer than two GPUs every metric is "not measured" with the reason and it
 * exits 0; it runs unchanged on two or more (it uses devices 0 and 1).
 *
 * Run: npx tsx bench/tscuda/multi-gpu.ts [--bytes N] [--reps N] [--iters N] [--out raw.json] [--results-dir bench/results] [--python python3]
 * Writes bench/results/multi-gpu-<gpu>-<date>.{json,md,svg} in the main bench's shape (a few minutes in all).
 * NCCL_NVLS_ENABLE=0 is set in this process and every rank it starts.
 */
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { disableNvlinkMulticast } from '../../src/ffi/index.js';
import { Communicator, generateUniqueId, NcclUniqueId } from '../../src/orchestration/index.js';
import { Device, DeviceBuffer, Stream } from '../../src/runtime/index.js';
import '../../src/runtime/index.js';
import { commitOf, describeEnvironment } from '../harness/environment.js';
import type { BenchRun } from '../harness/merge.js';
import { cPeerCopy } from './multi-gpu-c-peer.js';
import { measureStftMultiGpu, type MultiGpuStft } from './multi-gpu-engine.js';
import { median, summarize, timeOnStream, type Metric } from './multi-gpu-measure.js';
import { metricRecord, peerStatuses, writeMultiGpuRun } from './multi-gpu-results.js';

disableNvlinkMulticast();
const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const SELF = fileURLToPath(import.meta.url);

const { values: opts } = parseArgs({
  options: {
    bytes: { type: 'string', default: String(256 << 20) },
    reps: { type: 'string', default: '10' },
    iters: { type: 'string', default: '20' },
    out: { type: 'string' },
    'results-dir': { type: 'string', default: join(fileURLToPath(new URL('.', import.meta.url)), '..', 'results') },
    python: { type: 'string', default: process.env.PYTHON ?? 'python3' },
  },
  strict: false,
});
const BYTES = Number(opts.bytes);
const REPS = Number(opts.reps);
const ITERS = Number(opts.iters);

// ---- one NCCL rank (a child process) ------------------------------------------------------

async function rankMain(rank: number): Promise<void> {
  const size = Number(process.env.TSCUDA_BENCH_NCCL_SIZE);
  const comm = Communicator.initRank({
    id: NcclUniqueId.fromBase64(process.env.TSCUDA_BENCH_NCCL_ID!),
    rank,
    size,
    device: rank,
  });
  using stream = new Stream({ device: rank, label: `allreduce rank ${rank}` });
  const n = BYTES / 4;
  using x = DeviceBuffer.from(
    'f32',
    Float32Array.from({ length: n }, () => Math.random()),
    { device: rank },
  );
  using one = DeviceBuffer.alloc('f32', 1, { device: rank });
  for (let i = 0; i < 3; i++) void comm.allReduce(x, x, { stream, op: 'max' });
  await stream.done();
  const samples: number[] = [];
  for (let r = 0; r < REPS; r++) {
    await comm.allReduce(one, one, { stream, op: 'max' }); // barrier: the ranks start each repetition together
    const ms = await timeOnStream(stream, ITERS, () => void comm.allReduce(x, x, { stream, op: 'max' }));
    samples.push((((2 * (size - 1)) / size) * BYTES) / (ms / 1e3 / ITERS) / 1e9);
  }
  comm.dispose();
  if (rank === 0) console.log(JSON.stringify({ samples }));
}

// ---- the launcher --------------------------------------------------------------------------

async function topology(): Promise<string[]> {
  const lines: string[] = [];
  for (const args of [
    ['topo', '-m'],
    ['nvlink', '-s'],
  ]) {
    const r = await execa('nvidia-smi', args, { reject: false, timeout: 30_000 });
    lines.push(
      `$ nvidia-smi ${args.join(' ')}`,
      (r.exitCode === 0 ? r.stdout : `(failed: ${r.stderr || r.message})`).trimEnd(),
    );
  }
  const count = Device.count();
  for (let a = 0; a < count; a++)
    for (let b = 0; b < count; b++)
      if (a !== b) lines.push(`cuDeviceCanAccessPeer(${a} -> ${b}) = ${Device.get(a).canAccessPeer(b) ? 1 : 0}`);
  return lines;
}

async function tscudaPeerCopy(): Promise<Metric> {
  const [d0, d1] = [Device.get(0), Device.get(1)];
  if (d0.canAccessPeer(d1)) d0.enablePeerAccess(d1);
  if (d1.canAccessPeer(d0)) d1.enablePeerAccess(d0);
  using stream = new Stream({ device: d1, label: 'p2p' });
  using src = DeviceBuffer.alloc('u8', BYTES, { device: d0 }).memset(1);
  using dst = DeviceBuffer.alloc('u8', BYTES, { device: d1 });
  for (let i = 0; i < 3; i++) dst.copyFromPeer(src, { stream });
  await stream.done();
  const samples: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const ms = await timeOnStream(stream, ITERS, () => void dst.copyFromPeer(src, { stream }));
    samples.push((BYTES * ITERS) / (ms / 1e3) / 1e9);
  }
  return summarize(samples);
}

async function tscudaAllReduce(): Promise<Metric> {
  const id = generateUniqueId();
  const size = 2;
  const ranks = Array.from({ length: size }, (_, rank) =>
    execa(
      process.execPath,
      [...process.execArgv, SELF, '--bytes', String(BYTES), '--reps', String(REPS), '--iters', String(ITERS)],
      {
        env: {
          TSCUDA_BENCH_NCCL_RANK: String(rank),
          TSCUDA_BENCH_NCCL_SIZE: String(size),
          TSCUDA_BENCH_NCCL_ID: id.toBase64(),
        },
        reject: false,
        timeout: 180_000,
      },
    ),
  );
  const results = await Promise.all(ranks);
  const failed = results.find((r) => r.exitCode !== 0);
  if (failed) return { notMeasured: `a rank failed: ${failed.stderr.slice(-400)}` };
  return summarize(
    (JSON.parse(results[0]!.stdout.trim().split('\n').pop()!) as { samples: number[] }).samples,
    'two processes, Communicator.initRank, f32 max in place',
  );
}

async function torchPeer(): Promise<{ metrics?: Record<string, Metric>; reason?: string; version?: string }> {
  const r = await execa(
    opts.python as string,
    [
      join(ROOT, 'bench/peers/nccl_peer.py'),
      '--bytes',
      String(BYTES),
      '--reps',
      String(REPS),
      '--iters',
      String(ITERS),
    ],
    {
      reject: false,
      timeout: 240_000,
    },
  );
  try {
    const line = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      available: boolean;
      reason?: string;
      version?: string;
      metrics?: Record<string, Metric>;
    };
    return line.available
      ? { metrics: line.metrics!, ...(line.version ? { version: line.version } : {}) }
      : { reason: line.reason ?? 'unavailable' };
  } catch {
    return { reason: `nccl_peer.py printed no result (exit ${r.exitCode}): ${r.stderr.slice(-300)}` };
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const date = new Date();
  const lines = await topology();
  for (const l of lines) console.log(l);
  const count = Device.count();
  const machine = Device.get(0).name;
  const out: Record<string, unknown> = {
    machine,
    devices: count,
    bytes: BYTES,
    reps: REPS,
    iters: ITERS,
    ncclNvlsEnable: process.env.NCCL_NVLS_ENABLE,
    topology: lines,
  };
  let metrics: Record<string, Metric>;
  let stft: MultiGpuStft | { notMeasured: string };
  let torch: Awaited<ReturnType<typeof torchPeer>> = { reason: 'not run' };
  if (count < 2) {
    const reason = `needs 2 GPUs, this machine has ${count}`;
    metrics = { p2p_copy_gbps: { notMeasured: reason }, nccl_allreduce_busbw_gbps: { notMeasured: reason } };
    stft = { notMeasured: reason };
    console.log(`multi-gpu: not measured: ${reason}`);
  } else {
    try {
      stft = await measureStftMultiGpu();
      console.log(
        `stft job: one GPU ${stft.one.median.toFixed(2)}, two GPUs ${stft.two.median.toFixed(2)} Gsamples/s (bound ${stft.boundTwo.toFixed(2)})`,
      );
    } catch (e) {
      stft = { notMeasured: `failed: ${e instanceof Error ? e.message : String(e)}` };
    }
    const p2p = await tscudaPeerCopy();
    const c = await cPeerCopy(BYTES, REPS, ITERS);
    const allReduce = await tscudaAllReduce();
    torch = await torchPeer();
    metrics = { p2p_copy_gbps: p2p, c_p2p_copy_gbps: c, nccl_allreduce_busbw_gbps: allReduce };
    if (torch.metrics) {
      metrics.torch_nccl_allreduce_busbw_gbps = torch.metrics.nccl_allreduce_busbw_gbps!;
      metrics.torch_p2p_copy_gbps = torch.metrics.p2p_copy_gbps!;
    } else out.torchReason = torch.reason;
    const ratio = (a: Metric | undefined, b: Metric | undefined): number | undefined =>
      median(a) && median(b) ? median(a)! / median(b)! : undefined;
    out.ratios = {
      p2p_copy_vs_c: ratio(p2p, c),
      nccl_allreduce_busbw_vs_torch: ratio(allReduce, metrics.torch_nccl_allreduce_busbw_gbps),
    };
    for (const [name, m] of Object.entries(metrics))
      console.log(
        `${name}: ${'median' in m ? `${m.median.toFixed(1)} GB/s (spread ${(m.spread * 100).toFixed(1)}%)` : `not measured: ${m.notMeasured}`}`,
      );
    console.log(`ratios: ${JSON.stringify(out.ratios)}`);
  }
  out.metrics = metrics;
  out.stft = stft;
  if (opts.out) writeFileSync(opts.out as string, `${JSON.stringify(out, null, 1)}\n`);

  // The main bench's shape: one record per metric, tscuda beside C and PyTorch, goals judged.
  const env = describeEnvironment(Device.get(0));
  const stftNotes = 'notMeasured' in stft ? [] : stft.notes;
  const stftSide = (pick: (s: MultiGpuStft) => { median: number; spread: number; samples: number }) =>
    'notMeasured' in stft ? stft : pick(stft);
  const records = [
    metricRecord({
      name: 'stft_job_multi_gpu_gsamples_per_s',
      unit: 'Gsamples/s',
      goal: 'notMeasured' in stft ? null : { kind: 'abs-min', value: 0.8 * stft.boundTwo },
      tscuda: stftSide((s) => s.two),
      notes: [
        ...stftNotes,
        'goal: 0.8 of the two-GPU copy bound measured in this run (pinned H2D and D2H on both GPUs at once)',
      ],
    }),
    metricRecord({
      name: 'stft_job_multi_gpu_speedup',
      unit: 'x',
      goal: 'notMeasured' in stft || stft.linkScaling < 0.9 ? null : { kind: 'abs-min', value: 1.9 },
      tscuda: stftSide((s) => ({
        median: s.two.median / s.one.median,
        spread: s.two.spread + s.one.spread,
        samples: s.two.samples,
      })),
      notes: [
        'notMeasured' in stft
          ? 'two GPUs over one'
          : `two GPUs over one: ${stft.two.median.toFixed(2)} / ${stft.one.median.toFixed(2)} Gsamples/s, same job mix, same run`,
        'goal: 1.9 where the two links do not share a bottleneck (both directions on both GPUs at once >= 90% of the sum of each GPU alone); none where they do (the pcie fraction is the goal there)',
      ],
    }),
    metricRecord({
      name: 'stft_job_multi_gpu_pcie_fraction',
      unit: 'fraction',
      goal: { kind: 'abs-min', value: 0.8 },
      tscuda: stftSide((s) => ({ median: s.two.median / s.boundTwo, spread: s.two.spread, samples: s.two.samples })),
      notes: [
        "stft_job_multi_gpu_gsamples_per_s over the GB/s each way of pinned H2D and D2H running on both GPUs at once (the job's traffic) / 4 B per sample, both measured in this run",
      ],
    }),
    metricRecord({
      name: 'p2p_copy_gbps',
      unit: 'GB/s',
      goal: { kind: 'ratio-min', value: 0.97 },
      tscuda: metrics.p2p_copy_gbps,
      c: metrics.c_p2p_copy_gbps,
      torch: metrics.torch_p2p_copy_gbps,
      notes: [
        `${BYTES} bytes device 0 -> 1, copyFromPeer (cuMemcpyPeerAsync) with peer access where the driver allows it, ${ITERS} copies per repetition`,
      ],
    }),
    metricRecord({
      name: 'nccl_allreduce_busbw_gbps',
      unit: 'GB/s',
      goal: { kind: 'peers-min', value: 0.95 },
      tscuda: metrics.nccl_allreduce_busbw_gbps,
      torch: metrics.torch_nccl_allreduce_busbw_gbps,
      notes: [
        `${BYTES} bytes f32, one process per GPU (Communicator.initRank), bus bandwidth 2 (n - 1) / n x bytes / time; goal: >= 0.95x torch.distributed.all_reduce`,
      ],
    }),
  ];
  const run: BenchRun = {
    gpu: `${count} x ${env.gpu}`,
    driver: env.driver,
    cuda: env.cuda,
    commit: await commitOf(ROOT),
    date: date.toISOString(),
    metrics: records,
    versions: env.versions,
    peers: peerStatuses(
      metrics.c_p2p_copy_gbps,
      torch.metrics ? { version: torch.version } : { reason: torch.reason ?? 'not run' },
    ),
    tscuda: { status: 'ok' },
    settings: { reps: REPS, iters: ITERS, rounds: 1, only: null },
    durationS: (performance.now() - started) / 1000,
  };
  const written = writeMultiGpuRun(run, opts['results-dir'] as string, date);
  for (const r of records)
    console.log(
      `${r.name}: ${r.tscuda === null ? 'not measured' : r.tscuda.toPrecision(4)} ${r.unit}${r.met === null ? '' : r.met ? ' (goal met)' : ' (goal NOT met)'}`,
    );
  console.log(`wrote ${written} (.md, .svg beside it) in ${run.durationS.toFixed(0)} s`);
  console.log(
    JSON.stringify({
      machine,
      devices: count,
      metrics: Object.fromEntries(Object.entries(metrics).map(([k, m]) => [k, 'median' in m ? m.median : m])),
    }),
  );
}

const rankEnv = process.env.TSCUDA_BENCH_NCCL_RANK;
if (rankEnv !== undefined) await rankMain(Number(rankEnv));
else await main();
