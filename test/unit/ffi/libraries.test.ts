import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { CUDA_MAJOR, PIP_WHEEL_FOLDER } from '../../../src/ffi/cuda-version.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  libraryStatus,
  searchFolders,
  sitePackagesFolders,
  type SearchEnvironment,
} from '../../../src/ffi/libraries.js';

const root = mkdtempSync(join(tmpdir(), 'tscuda-libs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Creates `<prefix>/lib/<python>/site-packages/<wheel>/<file>` and returns the wheel's lib folder. */
function wheel(prefix: string, python: string, wheelDir: string, file: string): string {
  const dir = join(root, prefix, 'lib', python, 'site-packages', wheelDir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), '');
  return dir;
}

const env = (vars: Record<string, string>, home = join(root, 'nohome')): SearchEnvironment => ({ env: vars, home });

describe('library search', () => {
  it('finds pip wheels in $VIRTUAL_ENV', () => {
    const dir = wheel('venv', 'python3.12', 'nvidia/cufft/lib', 'libcufft.so.12');
    expect(searchFolders('cufft', env({ VIRTUAL_ENV: join(root, 'venv') }))).toContain(dir);
    expect(searchFolders('cufft', env({}))).not.toContain(dir);
  });
  it('finds pip wheels and conda packages in $CONDA_PREFIX', () => {
    const dir = wheel('conda', 'python3.11', `${PIP_WHEEL_FOLDER}/lib`, `libnvrtc.so.${CUDA_MAJOR}`);
    const folders = searchFolders('nvrtc', env({ CONDA_PREFIX: join(root, 'conda') }));
    expect(folders).toContain(dir);
    expect(folders).toContain(join(root, 'conda', 'lib'));
  });
  it('finds the user site under ~/.local or $PYTHONUSERBASE without spawning Python', () => {
    const home = join(root, 'home');
    const dir = wheel('home/.local', 'python3.10', 'nvidia/cuda_runtime/lib', 'libcudart.so.12');
    expect(searchFolders('runtime', env({}, home))).toContain(dir);
    const base = wheel('userbase', 'python3.13', 'nvidia/cuda_runtime/lib', 'libcudart.so.13');
    const folders = searchFolders('runtime', env({ PYTHONUSERBASE: join(root, 'userbase') }, home));
    expect(folders).toContain(base);
    expect(folders).not.toContain(dir);
  });
  it("finds NCCL's wheel folder nvidia/nccl/lib", () => {
    const dir = wheel('nccl-venv', 'python3.12', 'nvidia/nccl/lib', 'libnccl.so.2');
    expect(searchFolders('nccl', env({ VIRTUAL_ENV: join(root, 'nccl-venv') }))).toContain(dir);
  });
  it('puts CUDA paths from the environment before the system loader, and lists site-packages that exist only', () => {
    const folders = searchFolders('runtime', env({ TSCUDA_CUDA_PATH: '/opt/mycuda' }));
    expect(folders.indexOf('/opt/mycuda/lib64')).toBeLessThan(folders.indexOf(undefined));
    expect(sitePackagesFolders(env({ VIRTUAL_ENV: join(root, 'absent') }))).not.toContain(
      join(root, 'absent', 'lib', 'python3.12', 'site-packages'),
    );
  });
  it('reports a missing library with where it looked and how to get it, without throwing', () => {
    const status = libraryStatus('nccl');
    if (status.found) expect(status.path).toMatch(/libnccl/);
    else {
      expect(status.searched.some((s) => s.includes('libnccl.so.2'))).toBe(true);
      expect(status.hint).toMatch(/NCCL/);
    }
  });
});
