/**
 * Several-GPU benchmarks, with their baselines in the same run:
 *
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
 * Run: npx tsx bench/tscuda/multi-gpu.ts [--bytes N] [--reps N] [--iters N] [--out results.json] [--python python3]
 * NCCL_NVLS_ENABLE=0 is set in this process and every rank it starts.
 */
import { execa } from 'execa';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { disableNvlinkMulticast } from '../../src/ffi/nccl.js';
import { Communicator } from '../../src/orchestration/nccl/communicator.js';
import { generateUniqueId, NcclUniqueId } from '../../src/orchestration/nccl/unique-id.js';
import { Device } from '../../src/runtime/device.js';
import { Event } from '../../src/runtime/event.js';
import '../../src/runtime/index.js';
import { DeviceBuffer } from '../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../src/runtime/stream.js';
import { findNvcc } from '../harness/native.js';

disableNvlinkMulticast();
const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const SELF = fileURLToPath(import.meta.url);

const { values: opts } = parseArgs({
  options: {
    bytes: { type: 'string', default: String(256 << 20) },
    reps: { type: 'string', default: '10' },
    iters: { type: 'string', default: '20' },
    out: { type: 'string' },
    python: { type: 'string', default: process.env.PYTHON ?? 'python3' },
  },
  strict: false,
});
const BYTES = Number(opts.bytes);
const REPS = Number(opts.reps);
const ITERS = Number(opts.iters);

type Metric = { median: number; spread: number; samples: number[]; note?: string } | { notMeasured: string };

function summarize(samples: number[], note?: string): Metric {
  const s = [...samples].sort((a, b) => a - b);
  const m = s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { median: m, spread: m ? (s[s.length - 1]! - s[0]!) / m : 0, samples, ...(note ? { note } : {}) };
}

const median = (m: Metric | undefined): number | undefined => (m && 'median' in m ? m.median : undefined);

/** Milliseconds between two timing events around `iters` calls of `enqueue` on `stream`. */
async function timeOnStream(stream: Stream, iters: number, enqueue: () => void): Promise<number> {
  using start = new Event({ context: stream.context, timing: true });
  using end = new Event({ context: stream.context, timing: true });
  start.record(stream);
  for (let i = 0; i < iters; i++) enqueue();
  end.record(stream);
  await end.done();
  return end.elapsedSince(start);
}

// ---- one NCCL rank (a child process) ------------------------------------------------------

async function rankMain(rank: number): Promise<void> {
  const size = Number(process.env.TSCUDA_BENCH_NCCL_SIZE);
  const comm = Communicator.initRank({ id: NcclUniqueId.fromBase64(process.env.TSCUDA_BENCH_NCCL_ID!), rank, size, device: rank });
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
    lines.push(`$ nvidia-smi ${args.join(' ')}`, (r.exitCode === 0 ? r.stdout : `(failed: ${r.stderr || r.message})`).trimEnd());
  }
  const count = Device.count();
  for (let a = 0; a < count; a++) for (let b = 0; b < count; b++) if (a !== b) lines.push(`cuDeviceCanAccessPeer(${a} -> ${b}) = ${Device.get(a).canAccessPeer(b) ? 1 : 0}`);
  return lines;
}

const C_SOURCE = String.raw`
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_ = "?"; cuGetErrorName(r_, &s_); fprintf(stderr, "%s failed: %s\n", #x, s_); return 1; } } while (0)
static int enable(CUcontext self, CUcontext peer) {
  CK(cuCtxSetCurrent(self));
  CUresult r = cuCtxEnablePeerAccess(peer, 0);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CK(r);
  return 0;
}
int main(int argc, char** argv) {
  size_t bytes = strtoull(argv[1], 0, 10); int reps = atoi(argv[2]), iters = atoi(argv[3]);
  CUdevice d0, d1; CUcontext c0, c1; int can01 = 0, can10 = 0;
  CK(cuInit(0)); CK(cuDeviceGet(&d0, 0)); CK(cuDeviceGet(&d1, 1));
  CK(cuDevicePrimaryCtxRetain(&c0, d0)); CK(cuDevicePrimaryCtxRetain(&c1, d1));
  CK(cuDeviceCanAccessPeer(&can01, d0, d1)); CK(cuDeviceCanAccessPeer(&can10, d1, d0));
  if (can01 && enable(c0, c1)) return 1;
  if (can10 && enable(c1, c0)) return 1;
  CUdeviceptr src, dst; CUstream s; CUevent a, b;
  CK(cuCtxSetCurrent(c0)); CK(cuMemAlloc(&src, bytes)); CK(cuMemsetD8(src, 1, bytes));
  CK(cuCtxSetCurrent(c1)); CK(cuMemAlloc(&dst, bytes));
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)); CK(cuEventCreate(&a, 0)); CK(cuEventCreate(&b, 0));
  for (int i = 0; i < 3; i++) CK(cuMemcpyPeerAsync(dst, c1, src, c0, bytes, s));
  CK(cuStreamSynchronize(s));
  printf("{\"samples\":[");
  for (int r = 0; r < reps; r++) {
    float ms = 0;
    CK(cuEventRecord(a, s));
    for (int i = 0; i < iters; i++) CK(cuMemcpyPeerAsync(dst, c1, src, c0, bytes, s));
    CK(cuEventRecord(b, s)); CK(cuEventSynchronize(b)); CK(cuEventElapsedTime(&ms, a, b));
    printf("%s%.6f", r ? "," : "", (double)bytes * iters / (ms / 1e3) / 1e9);
  }
  printf("]}\n");
  return 0;
}
`;

async function cPeerCopy(): Promise<Metric> {
  const nvcc = findNvcc();
  if (!nvcc) return { notMeasured: 'nvcc not found to build the C cuMemcpyPeerAsync baseline' };
  const dir = join(tmpdir(), `tscuda-multigpu-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'p2p.c'), C_SOURCE);
  const built = await execa(nvcc, ['-O2', '-o', join(dir, 'p2p'), join(dir, 'p2p.c'), '-lcuda'], { reject: false });
  if (built.exitCode !== 0) return { notMeasured: `nvcc failed: ${built.stderr.slice(-400)}` };
  const run = await execa(join(dir, 'p2p'), [String(BYTES), String(REPS), String(ITERS)], { reject: false, timeout: 300_000 });
  if (run.exitCode !== 0) return { notMeasured: `C baseline failed: ${run.stderr.slice(-400)}` };
  return summarize((JSON.parse(run.stdout) as { samples: number[] }).samples, 'C: cuMemcpyPeerAsync loop, same size and stream setup');
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
    execa(process.execPath, [...process.execArgv, SELF, '--bytes', String(BYTES), '--reps', String(REPS), '--iters', String(ITERS)], {
      env: { TSCUDA_BENCH_NCCL_RANK: String(rank), TSCUDA_BENCH_NCCL_SIZE: String(size), TSCUDA_BENCH_NCCL_ID: id.toBase64() },
      reject: false,
      timeout: 600_000,
    }),
  );
  const results = await Promise.all(ranks);
  const failed = results.find((r) => r.exitCode !== 0);
  if (failed) return { notMeasured: `a rank failed: ${failed.stderr.slice(-400)}` };
  return summarize((JSON.parse(results[0]!.stdout.trim().split('\n').pop()!) as { samples: number[] }).samples, 'two processes, Communicator.initRank, f32 max in place');
}

async function torchPeer(): Promise<{ metrics?: Record<string, Metric>; reason?: string; version?: string }> {
  const r = await execa(opts.python as string, [join(ROOT, 'bench/peers/nccl_peer.py'), '--bytes', String(BYTES), '--reps', String(REPS), '--iters', String(ITERS)], {
    reject: false,
    timeout: 900_000,
  });
  try {
    const line = JSON.parse(r.stdout.trim().split('\n').pop()!) as { available: boolean; reason?: string; version?: string; metrics?: Record<string, Metric> };
    return line.available ? { metrics: line.metrics!, ...(line.version ? { version: line.version } : {}) } : { reason: line.reason ?? 'unavailable' };
  } catch {
    return { reason: `nccl_peer.py printed no result (exit ${r.exitCode}): ${r.stderr.slice(-300)}` };
  }
}

async function main(): Promise<void> {
  const lines = await topology();
  for (const l of lines) console.log(l);
  const count = Device.count();
  const machine = Device.get(0).name;
  const out: Record<string, unknown> = { machine, devices: count, bytes: BYTES, reps: REPS, iters: ITERS, ncclNvlsEnable: process.env.NCCL_NVLS_ENABLE, topology: lines };
  let metrics: Record<string, Metric>;
  if (count < 2) {
    const reason = `needs 2 GPUs, this machine has ${count}`;
    metrics = { p2p_copy_gbps: { notMeasured: reason }, nccl_allreduce_busbw_gbps: { notMeasured: reason } };
    console.log(`multi-gpu: not measured: ${reason}`);
  } else {
    const p2p = await tscudaPeerCopy();
    const c = await cPeerCopy();
    const allReduce = await tscudaAllReduce();
    const torch = await torchPeer();
    metrics = { p2p_copy_gbps: p2p, c_p2p_copy_gbps: c, nccl_allreduce_busbw_gbps: allReduce };
    if (torch.metrics) {
      metrics.torch_nccl_allreduce_busbw_gbps = torch.metrics.nccl_allreduce_busbw_gbps!;
      metrics.torch_p2p_copy_gbps = torch.metrics.p2p_copy_gbps!;
    } else out.torchReason = torch.reason;
    const ratio = (a: Metric | undefined, b: Metric | undefined): number | undefined => (median(a) && median(b) ? median(a)! / median(b)! : undefined);
    out.ratios = {
      p2p_copy_vs_c: ratio(p2p, c),
      nccl_allreduce_busbw_vs_torch: ratio(allReduce, metrics.torch_nccl_allreduce_busbw_gbps),
    };
    for (const [name, m] of Object.entries(metrics))
      console.log(`${name}: ${'median' in m ? `${m.median.toFixed(1)} GB/s (spread ${(m.spread * 100).toFixed(1)}%)` : `not measured: ${m.notMeasured}`}`);
    console.log(`ratios: ${JSON.stringify(out.ratios)}`);
  }
  out.metrics = metrics;
  if (opts.out) writeFileSync(opts.out as string, `${JSON.stringify(out, null, 1)}\n`);
  console.log(JSON.stringify({ machine, devices: count, metrics: Object.fromEntries(Object.entries(metrics).map(([k, m]) => [k, 'median' in m ? m.median : m])) }));
}

const rankEnv = process.env.TSCUDA_BENCH_NCCL_RANK;
if (rankEnv !== undefined) await rankMain(Number(rankEnv));
else await main();
