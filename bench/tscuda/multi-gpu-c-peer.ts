/** The C baseline of the peer-copy benchmark (multi-gpu.ts): the same loop as tscuda's, in C over the driver API. */
import { execa } from 'execa';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findNvcc } from '../harness/native.js';
import { summarize, type Metric } from './multi-gpu-measure.js';

/** The C program: peer access both ways, then timed cuMemcpyPeerAsync loops, printing GB/s per repetition as JSON. */
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

/**
 * The C baseline of p2p_copy_gbps: a cuMemcpyPeerAsync loop of `bytes` device 0 -> device 1, built
 * here with nvcc, `reps` repetitions of `iters` copies; not measured (with the reason) without nvcc.
 */
export async function cPeerCopy(bytes: number, reps: number, iters: number): Promise<Metric> {
  const nvcc = findNvcc();
  if (!nvcc) return { notMeasured: 'nvcc not found to build the C cuMemcpyPeerAsync baseline' };
  const dir = join(tmpdir(), `tscuda-multigpu-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'p2p.c'), C_SOURCE);
  const built = await execa(nvcc, ['-O2', '-o', join(dir, 'p2p'), join(dir, 'p2p.c'), '-lcuda'], { reject: false });
  if (built.exitCode !== 0) return { notMeasured: `nvcc failed: ${built.stderr.slice(-400)}` };
  const run = await execa(join(dir, 'p2p'), [String(bytes), String(reps), String(iters)], {
    reject: false,
    timeout: 120_000,
  });
  if (run.exitCode !== 0) return { notMeasured: `C baseline failed: ${run.stderr.slice(-400)}` };
  return summarize(
    (JSON.parse(run.stdout) as { samples: number[] }).samples,
    'C: cuMemcpyPeerAsync loop, same size and stream setup',
  );
}
