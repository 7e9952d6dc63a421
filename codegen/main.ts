import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emit } from './emit.js';
import { emitLaunchers, PRODUCT_LAUNCHERS, TEST_LAUNCHERS } from './kernels/launchers.js';
import { extract, findClang, findHeader, LIBRARY_SOURCES } from './extract.js';
import type { Snapshot } from './snapshot.js';
import { CUDA_TOOLKIT_VERSION } from '../src/ffi/cuda-version.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SNAPSHOT_DIR = join(root, 'codegen', 'snapshots');
export const GENERATED_DIR = join(root, 'src', 'ffi', 'generated');

export async function readSnapshots(): Promise<Snapshot[]> {
  return Promise.all(
    LIBRARY_SOURCES.map(
      async (s) => JSON.parse(await readFile(join(SNAPSHOT_DIR, `${s.library}.json`), 'utf8')) as Snapshot,
    ),
  );
}

export function snapshotText(snap: Snapshot): string {
  return JSON.stringify(snap, null, 1) + '\n';
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  if (!check) {
    const clang = await findClang();
    for (const source of LIBRARY_SOURCES) {
      if (!clang) {
        console.log(
          `extract: clang not found (apt-get install clang-19); keeping the committed snapshot of ${source.header}`,
        );
        continue;
      }
      if (!findHeader(root, source.header)) {
        console.log(`extract: ${source.header} not found (copy it into .headers/); keeping the committed snapshot`);
        continue;
      }
      const snap = await extract(clang, root, source, CUDA_TOOLKIT_VERSION);
      await mkdir(SNAPSHOT_DIR, { recursive: true });
      await writeFile(join(SNAPSHOT_DIR, `${source.library}.json`), snapshotText(snap));
    }
  }
  const { files, counts } = emit(await readSnapshots());
  const launchers = emitLaunchers(join(root, 'src', 'kernels'), PRODUCT_LAUNCHERS);
  files.set('../../kernels/launchers.generated.ts', launchers.text);
  const testLaunchers = emitLaunchers(join(root, 'test', 'kernels'), TEST_LAUNCHERS);
  files.set('../../../test/kernels/launchers.generated.ts', testLaunchers.text);
  console.log(
    `launchers: ${launchers.kernels} product kernels in ${launchers.files} files, ${testLaunchers.kernels} test kernels in ${testLaunchers.files}`,
  );
  let differences = 0;
  for (const [name, text] of files) {
    const path = join(GENERATED_DIR, name);
    if (check) {
      const committed = await readFile(path, 'utf8').catch(() => '');
      if (committed !== text) {
        differences++;
        console.error(
          `codegen:check: ${join('src/ffi/generated', name)} differs from what the snapshots and kernels emit`,
        );
      }
    } else {
      await mkdir(GENERATED_DIR, { recursive: true });
      await writeFile(path, text);
    }
  }
  for (const [lib, c] of Object.entries(counts)) {
    console.log(
      `${lib}: ${c.functions} functions bound${c.perThread ? `, ${c.perThread} with per-thread-stream variants` : ''}${c.legacy ? `, ${c.legacy} legacy ABI entry points` : ''}`,
    );
  }
  if (differences) process.exit(1);
  if (check) console.log('codegen:check: generated bindings match the snapshots');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
