import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const root = join(dirname(SELF), '..', '..');
/** Product kernels build into the package's kernels/build (shipped); test-only kernels into test/kernels/build (never shipped). */
const TARGETS = [
  { sources: join(root, 'src', 'kernels'), build: join(root, 'kernels', 'build') },
  { sources: join(root, 'test', 'kernels'), build: join(root, 'test', 'kernels', 'build') },
];
/** sm_80 and sm_90 machine code, plus compute_90 PTX so newer GPUs can JIT it. */
const ARCH_FLAGS = [
  '-gencode',
  'arch=compute_80,code=sm_80',
  '-gencode',
  'arch=compute_90,code=sm_90',
  '-gencode',
  'arch=compute_90,code=compute_90',
];

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

async function main(): Promise<number> {
  const nvcc = findNvcc();
  if (!nvcc) {
    console.log(
      'build:kernels: nvcc not found (PATH, CUDA_HOME, /usr/local/cuda); skipping. The npm package ships prebuilt fatbins.',
    );
    return 0;
  }
  for (const { sources, build } of TARGETS) {
    mkdirSync(build, { recursive: true });
    for (const file of readdirSync(sources)
      .filter((f) => f.endsWith('.cu'))
      .sort()) {
      const src = join(sources, file);
      const out = join(build, `${basename(file, '.cu')}.fatbin`);
      // Up to date when newer than its source and than this script (which holds the flags).
      if (existsSync(out) && statSync(out).mtimeMs >= Math.max(statSync(src).mtimeMs, statSync(SELF).mtimeMs)) {
        console.log(`build:kernels: ${file} up to date`);
        continue;
      }
      // Written beside the output and renamed, so a failed or interrupted compile never leaves a fatbin that looks up to date.
      const partial = `${out}.${process.pid}.tmp`;
      try {
        // -lineinfo: compute-sanitizer reports name source lines; it does not change the generated code.
        await execa(nvcc, ['-fatbin', '-O3', '-lineinfo', ...ARCH_FLAGS, '-o', partial, src]);
        renameSync(partial, out);
      } catch (e) {
        rmSync(partial, { force: true });
        const err = e as { stderr?: string; message?: string };
        console.error(`build:kernels: ${file} failed:\n${err.stderr || err.message}`);
        return 1;
      }
      console.log(`build:kernels: ${file} -> ${relative(root, out)} (${statSync(out).size} bytes)`);
    }
  }
  return 0;
}

process.exitCode = await main();
