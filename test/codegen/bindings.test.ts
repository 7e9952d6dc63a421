import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emit } from '../../codegen/emit.js';
import { extract, findClang, findHeader, LIBRARY_SOURCES } from '../../codegen/extract.js';
import { GENERATED_DIR, readSnapshots, SNAPSHOT_DIR, snapshotText } from '../../codegen/main.js';
import { CUDA_TOOLKIT_VERSION } from '../../src/ffi/cuda-version.js';

const root = join(import.meta.dirname, '..', '..');
const clang = await findClang();

describe('emission', () => {
  it('reproduces the committed TypeScript from the committed snapshots', async () => {
    const { files } = emit(await readSnapshots());
    expect(files.size).toBe(6);
    for (const [name, text] of files)
      expect(text, `src/ffi/generated/${name}`).toBe(await readFile(join(GENERATED_DIR, name), 'utf8'));
  });

  it('binds the whole headers: every function of each library', async () => {
    const { counts } = emit(await readSnapshots());
    // cuda.h: 449 current entry points (+88 legacy ABIs); nvrtc.h's 25th name, nvrtcGetTypeName, is a C++ inline template, no symbol.
    expect(counts).toEqual({
      driver: { functions: 449, legacy: 88, perThread: 85 },
      runtime: { functions: 310, legacy: 0, perThread: 68 },
      cufft: { functions: 35, legacy: 0, perThread: 0 },
      nvrtc: { functions: 24, legacy: 0, perThread: 0 },
      nccl: { functions: 41, legacy: 0, perThread: 0 },
    });
  });

  it('generates from the headers of the one CUDA release src/ffi/cuda-version.ts names', async () => {
    for (const snap of await readSnapshots())
      expect(snap.cudaVersion, `codegen/snapshots/${snap.library}.json`).toBe(CUDA_TOOLKIT_VERSION);
  });

  it('binds driver functions to the versioned symbols the header macros select', async () => {
    const [driver] = await readSnapshots();
    const byName = new Map(driver!.functions.filter((f) => !f.legacy).map((f) => [f.name, f]));
    expect(byName.get('cuMemAlloc')?.symbol).toBe('cuMemAlloc_v2');
    expect(byName.get('cuCtxCreate')?.symbol).toBe('cuCtxCreate_v4');
    expect(byName.get('cuMemcpyHtoDAsync')?.perThreadSymbol).toBe('cuMemcpyHtoDAsync_v2_ptsz');
    expect(byName.get('cuLaunchKernel')?.perThreadSymbol).toBe('cuLaunchKernel_ptsz');
  });
});

for (const source of LIBRARY_SOURCES) {
  const header = findHeader(root, source.header);
  const reason = !clang ? 'clang not installed' : !header ? `${source.header} not present here` : '';
  describe.skipIf(!!reason)(`extraction of ${source.header}${reason ? ` (skipped: ${reason})` : ''}`, () => {
    it('reproduces the committed snapshot', async () => {
      const snap = await extract(clang!, root, source, CUDA_TOOLKIT_VERSION);
      expect(snapshotText(snap) === (await readFile(join(SNAPSHOT_DIR, `${source.library}.json`), 'utf8'))).toBe(true);
    });
  });
}
