/**
 * The g++ build of src/kernels/signal.cu, filter.cu and sos.cu for the CPU (include/cuda_runtime.h
 * standing in for CUDA), cached in the temporary folder by the sources' hash so that every
 * emulation test file (and run) shares one build. Imports nothing from src: test files mock
 * modules of src while loading this.
 */
import { execaSync } from 'execa';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { absentTool, notInstalled, toolFailure } from '../../../setup/tool-probe.js';

const HERE = import.meta.dirname;

/** The sources the emulation compiles: its build is reused while none of them changes. */
const SOURCES = [
  join(HERE, 'harness.cpp'),
  join(HERE, '../../../../src/kernels/signal.cu'),
  join(HERE, '../../../../src/kernels/filter.cu'),
  join(HERE, '../../../../src/kernels/sos.cu'),
  join(HERE, 'include/cuda_runtime.h'),
  join(HERE, 'include/cuda_fp16.h'),
  join(HERE, 'include/cuda_bf16.h'),
];

function build(): { so: string; reason: string } {
  // One build per content of the sources, shared by every test file (and run) that loads it.
  const hash = createHash('sha256');
  for (const source of SOURCES) hash.update(readFileSync(source));
  const cached = join(tmpdir(), `tscuda-emu-${hash.digest('hex').slice(0, 16)}.so`);
  if (existsSync(cached)) return { so: cached, reason: '' };
  const so = join(mkdtempSync(join(tmpdir(), 'tscuda-emu-')), 'signal_emu.so');
  // Bounded, but generously: on a loaded 2-core machine the compile takes tens of seconds.
  const r = execaSync(
    'g++',
    ['-O1', '-shared', '-fPIC', '-pthread', `-I${join(HERE, 'include')}`, '-o', so, join(HERE, 'harness.cpp')],
    { reject: false, timeout: 600_000 },
  );
  if (r.exitCode === 0) {
    // rename is atomic: a file built at the same time by another worker is replaced whole.
    renameSync(so, cached);
    return { so: cached, reason: '' };
  }
  // Only an absent compiler skips; a compiler that failed here is a failure (tool-probe.ts).
  if (notInstalled(r)) return { so: '', reason: absentTool('g++ is not installed') };
  throw toolFailure('g++ (building the kernel emulation)', r);
}

/** The compiled emulation (`so`), or why it could not be built (`reason`). */
export const emu = build();
