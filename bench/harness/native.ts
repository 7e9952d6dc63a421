/** Builds bench/native/bench.cu with nvcc (cached under the OS temp folder) and runs it. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerOutcome, tail, type PeerOutcome } from './peers.js';
import { runProcess } from './processes.js';

export const NATIVE_SOURCE = join('bench', 'native', 'bench.cu');

/** nvcc on PATH, in CUDA_HOME / CUDA_PATH, or in /usr/local/cuda (as build:kernels looks). */
export function findNvcc(): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '')
      .split(':')
      .filter(Boolean)
      .map((d) => join(d, 'nvcc')),
    ...[process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda']
      .filter((p): p is string => !!p)
      .map((p) => join(p, 'bin', 'nvcc')),
  ];
  return candidates.find((c) => existsSync(c));
}

/** The compile command of bench.cu's header, with the device's architecture (sm_90 on an H100). */
export function nvccArgs(source: string, output: string, arch: string): string[] {
  return ['-O2', `-arch=${arch}`, '-o', output, source, '-lcuda', '-lcufft'];
}

export type BuildResult =
  { ok: true; binary: string; cached: boolean; seconds: number } | { ok: false; reason: string };

/** Compiles once per (source, arch, nvcc): later runs reuse the binary in the temp folder. */
export async function buildNative(root: string, arch: string, log: (line: string) => void): Promise<BuildResult> {
  const source = join(root, NATIVE_SOURCE);
  if (!existsSync(source)) return { ok: false, reason: `${NATIVE_SOURCE} not found` };
  const nvcc = findNvcc();
  if (!nvcc) return { ok: false, reason: 'nvcc not found (PATH, CUDA_HOME, CUDA_PATH, /usr/local/cuda)' };
  const key = createHash('sha256').update(readFileSync(source)).update(`\0${arch}\0${nvcc}`).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), 'tscuda-bench', key);
  const binary = join(dir, 'bench_native');
  if (existsSync(binary)) return { ok: true, binary, cached: true, seconds: 0 };
  mkdirSync(dir, { recursive: true });
  const partial = join(dir, `bench_native.${process.pid}.tmp`);
  const args = nvccArgs(source, partial, arch);
  log(`nvcc ${args.join(' ')}`);
  const r = await runProcess(nvcc, args, { timeoutMs: 240_000, onStderrLine: (l) => log(`  nvcc: ${l}`) });
  if (r.exitCode !== 0 || !existsSync(partial)) {
    rmSync(partial, { force: true });
    return {
      ok: false,
      reason: `nvcc failed (${r.failure ?? `status ${String(r.exitCode)}`})${r.stderr ? `:\n${tail(r.stderr, 15)}` : ''}`,
    };
  }
  renameSync(partial, binary);
  return { ok: true, binary, cached: false, seconds: r.wallS };
}

export interface ChildRunOptions {
  only: string;
  reps: number;
  iters: number;
  timeoutMs: number;
  onStderrLine: (line: string) => void;
}

export function protocolArgs(o: Pick<ChildRunOptions, 'only' | 'reps' | 'iters'>): string[] {
  return ['--only', o.only, '--reps', String(o.reps), '--iters', String(o.iters)];
}

export async function runNative(binary: string, o: ChildRunOptions): Promise<PeerOutcome> {
  const r = await runProcess(binary, protocolArgs(o), { timeoutMs: o.timeoutMs, onStderrLine: o.onStderrLine });
  return peerOutcome('c', r);
}
