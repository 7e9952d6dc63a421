import { execa } from 'execa';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const root = join(dirname(SELF), '..', '..');
/** Product kernels build into the package's kernels/build (shipped); test-only kernels into test/kernels/build (never shipped). */
const TARGETS = [
  { sources: join(root, 'src', 'kernels'), build: join(root, 'kernels', 'build') },
  { sources: join(root, 'test', 'kernels'), build: join(root, 'test', 'kernels', 'build') },
];
/** sm_80 and sm_90 machine code, plus compute_90 PTX so newer GPUs can JIT it: what the package ships. */
const SHIPPED_ARCH_FLAGS = [
  '-gencode',
  'arch=compute_80,code=sm_80',
  '-gencode',
  'arch=compute_90,code=sm_90',
  '-gencode',
  'arch=compute_90,code=compute_90',
];

/**
 * TSCUDA_KERNEL_ARCH=90 (a compute capability without the dot) builds machine code for that GPU
 * alone, in about a third of the time: for a lent GPU host, whose build is thrown away with it.
 * Each fatbin's flags are written beside it (`.flags`), so a one-architecture fatbin is rebuilt by
 * the next build that wants the shipped ones rather than taken as up to date.
 */
function archFlags(): string[] {
  const arch = process.env.TSCUDA_KERNEL_ARCH;
  if (arch === undefined || arch === '') return SHIPPED_ARCH_FLAGS;
  if (!/^\d{2,3}$/.test(arch))
    throw new Error(`TSCUDA_KERNEL_ARCH: expected a compute capability without the dot (e.g. 90), got ${arch}`);
  return ['-gencode', `arch=compute_${arch},code=sm_${arch}`];
}

/** nvcc on PATH, else in CUDA_HOME/bin, CUDA_PATH/bin or /usr/local/cuda/bin. */
export function findNvcc(): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'nvcc')),
    ...[process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda']
      .filter((p): p is string => !!p)
      .map((p) => join(p, 'bin', 'nvcc')),
  ];
  return candidates.find((c) => existsSync(c));
}

/** One kernel source to compile into `out` with `flags`. */
interface Compile {
  src: string;
  out: string;
}

/** Whether `out` was built from `src` as it is now, with `flags`, by this script as it is now. */
function upToDate({ src, out }: Compile, flags: string): boolean {
  if (!existsSync(out) || !existsSync(`${out}.flags`)) return false;
  if (readFileSync(`${out}.flags`, 'utf8') !== flags) return false;
  return statSync(out).mtimeMs >= Math.max(statSync(src).mtimeMs, statSync(SELF).mtimeMs);
}

/** Compiles one source; resolves with the error text, or undefined when it built. */
async function compile(nvcc: string, { src, out }: Compile, flags: string[]): Promise<string | undefined> {
  // Written beside the output and renamed, so a failed or interrupted compile never leaves a fatbin that looks up to date.
  const partial = `${out}.${process.pid}.tmp`;
  try {
    // -lineinfo: compute-sanitizer reports name source lines; it does not change the generated code.
    await execa(nvcc, ['-fatbin', '-O3', '-lineinfo', ...flags, '-o', partial, src]);
    renameSync(partial, out);
    writeFileSync(`${out}.flags`, flags.join(' '));
    console.log(`build:kernels: ${basename(src)} -> ${relative(root, out)} (${statSync(out).size} bytes)`);
    return undefined;
  } catch (e) {
    rmSync(partial, { force: true });
    const err = e as { stderr?: string; message?: string };
    return `build:kernels: ${basename(src)} failed:\n${err.stderr || err.message}`;
  }
}

async function main(): Promise<number> {
  const nvcc = findNvcc();
  if (!nvcc) {
    console.log(
      'build:kernels: nvcc not found (PATH, CUDA_HOME, /usr/local/cuda); skipping. The npm package ships prebuilt fatbins.',
    );
    return 0;
  }
  const flags = archFlags();
  const todo: Compile[] = [];
  for (const { sources, build } of TARGETS) {
    mkdirSync(build, { recursive: true });
    for (const file of readdirSync(sources)
      .filter((f) => f.endsWith('.cu'))
      .sort()) {
      const job = { src: join(sources, file), out: join(build, `${basename(file, '.cu')}.fatbin`) };
      if (upToDate(job, flags.join(' '))) console.log(`build:kernels: ${file} up to date`);
      else todo.push(job);
    }
  }
  // The sources compile independently: as many at once as the host has cores for (nvcc is single-threaded).
  const failures: string[] = [];
  const width = Math.max(1, Math.min(todo.length, availableParallelism()));
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < todo.length) {
        const failure = await compile(nvcc, todo[next++]!, flags);
        if (failure !== undefined) failures.push(failure);
      }
    }),
  );
  for (const failure of failures) console.error(failure);
  return failures.length > 0 ? 1 : 0;
}

process.exitCode = await main();
