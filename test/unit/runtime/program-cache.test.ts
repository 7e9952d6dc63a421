import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { CudaError } from '../../../src/ffi/errors.js';
import { compileFlags, CompileError, defaultArch, parseArch } from '../../../src/runtime/program.js';
import {
  cacheDirectory,
  evictCache,
  programCacheKey,
  type ProgramCacheEntry,
  readCacheEntry,
  trustedCacheDirectory,
  writeCacheEntry,
} from '../../../src/runtime/program-cache.js';

describe('architectures and flags', () => {
  it('parses sm_XY to cubin and compute_XY to PTX', () => {
    expect(parseArch('sm_90')).toEqual({ kind: 'cubin', number: 90 });
    expect(parseArch('sm_90a')).toEqual({ kind: 'cubin', number: 90 });
    expect(parseArch('compute_80')).toEqual({ kind: 'ptx', number: 80 });
    expect(() => parseArch('90')).toThrow(/sm_90/);
    expect(() => parseArch('--gpu-architecture=sm_90')).toThrow(TypeError);
  });
  it("targets the device's own arch, or PTX for the newest arch an older NVRTC knows", () => {
    expect(defaultArch('sm_90', [75, 80, 86, 89, 90, 100])).toBe('sm_90');
    expect(defaultArch('sm_90', [])).toBe('sm_90');
    expect(defaultArch('sm_120', [75, 80, 90, 100])).toBe('compute_100');
    expect(() => defaultArch('sm_70', [75, 80])).toThrow(/none of which runs/);
  });
  it('puts the architecture first and refuses it among the options', () => {
    expect(compileFlags('sm_90', ['-std=c++17'])).toEqual(['--gpu-architecture=sm_90', '-std=c++17']);
    expect(() => compileFlags('sm_90', ['-arch=sm_80'])).toThrow(/compile\(\{ arch \}\)/);
    expect(() => compileFlags('sm_90', ['--gpu-architecture', 'sm_80'])).toThrow(TypeError);
  });
});

describe('programCacheKey', () => {
  const base = {
    source: 'x',
    name: 'a.cu',
    headers: { 'a.h': '1', 'b.h': '2' },
    flags: ['--gpu-architecture=sm_90'],
    nameExpressions: ['k<float>'],
    nvrtcVersion: '13.0',
  };
  it('is a sha256 that ignores header order', () => {
    const k = programCacheKey(base);
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(programCacheKey({ ...base, headers: { 'b.h': '2', 'a.h': '1' } })).toBe(k);
  });
  it('changes with source, headers, options, arch, name expressions and NVRTC version', () => {
    const keys = [
      programCacheKey(base),
      programCacheKey({ ...base, source: 'y' }),
      programCacheKey({ ...base, headers: { 'a.h': '1', 'b.h': '3' } }),
      programCacheKey({ ...base, flags: [...base.flags, '--use_fast_math'] }),
      programCacheKey({ ...base, flags: ['--gpu-architecture=compute_90'] }),
      programCacheKey({ ...base, nameExpressions: ['k<double>'] }),
      programCacheKey({ ...base, nvrtcVersion: '13.1' }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('disk cache entries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tscuda-cache-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const entry = (): ProgramCacheEntry => ({
    image: Uint8Array.from({ length: 1000 }, () => Math.floor(Math.random() * 256)),
    kind: 'cubin',
    log: 'warning: something',
    loweredNames: { 'k<float>': '_Z1kIfEvPT_' },
  });

  it('round-trips image, kind, log and lowered names, leaving no temporary files', () => {
    const e = entry();
    expect(writeCacheEntry(dir, 'a'.repeat(64), e)).toBe(true);
    const back = readCacheEntry(dir, 'a'.repeat(64), ['k<float>']);
    expect(back).toBeDefined();
    expect(Buffer.from(back!.image).equals(Buffer.from(e.image))).toBe(true);
    expect(back!.kind).toBe('cubin');
    expect(back!.log).toBe(e.log);
    expect(back!.loweredNames).toEqual(e.loweredNames);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
  it('ignores a missing, truncated, altered or incomplete entry', () => {
    expect(readCacheEntry(dir, 'f'.repeat(64))).toBeUndefined();
    const k = 'b'.repeat(64);
    const e = entry();
    writeCacheEntry(dir, k, e);
    // a name expression the entry does not have
    expect(readCacheEntry(dir, k, ['k<double>'])).toBeUndefined();
    // one byte of the image altered
    const altered = Buffer.from(e.image);
    altered[500] = altered[500]! ^ 0xff;
    writeFileSync(join(dir, `${k}.bin`), altered);
    expect(readCacheEntry(dir, k)).toBeUndefined();
    // truncated image
    writeFileSync(join(dir, `${k}.bin`), Buffer.from(e.image).subarray(0, 10));
    expect(readCacheEntry(dir, k)).toBeUndefined();
    // malformed sidecar
    writeCacheEntry(dir, k, e);
    writeFileSync(join(dir, `${k}.json`), readFileSync(join(dir, `${k}.json`), 'utf8').slice(0, 20));
    expect(readCacheEntry(dir, k)).toBeUndefined();
    // rewriting repairs it
    writeCacheEntry(dir, k, e);
    expect(readCacheEntry(dir, k)).toBeDefined();
  });
  it('detects an entry rewritten whole (image and sidecar hash agree) without the per-user secret', () => {
    const k = 'd'.repeat(64);
    const e = entry();
    writeCacheEntry(dir, k, e);
    const forged = Buffer.from(e.image);
    forged[0] = forged[0]! ^ 0x01;
    const meta = JSON.parse(readFileSync(join(dir, `${k}.json`), 'utf8')) as { sha256: string; bytes: number };
    meta.sha256 = createHash('sha256').update(forged).digest('hex');
    writeFileSync(join(dir, `${k}.bin`), forged);
    writeFileSync(join(dir, `${k}.json`), JSON.stringify(meta));
    expect(readCacheEntry(dir, k)).toBeUndefined();
  });
  it('makes its directory 0700, tightens a group-writable one, and writes entries 0600', () => {
    const d = join(dir, 'private');
    expect(trustedCacheDirectory(d)).toBe(true);
    expect(statSync(d).mode & 0o777).toBe(0o700);
    chmodSync(d, 0o777);
    expect(trustedCacheDirectory(d)).toBe(true);
    expect(statSync(d).mode & 0o077).toBe(0);
    writeCacheEntry(d, 'e'.repeat(64), entry());
    expect(statSync(join(d, `${'e'.repeat(64)}.bin`)).mode & 0o077).toBe(0);
    expect(statSync(join(d, '.secret')).mode & 0o077).toBe(0);
  });
  it('refuses keys that are not sha256 hex (no path tricks)', () => {
    expect(writeCacheEntry(dir, '../escape', entry())).toBe(false);
    expect(readCacheEntry(dir, '../escape')).toBeUndefined();
  });
  it('evicts the least recently used entries beyond its size cap', () => {
    const d = mkdtempSync(join(tmpdir(), 'tscuda-cache-evict-'));
    try {
      const keys = ['1', '2', '3', '4'].map((c) => c.repeat(64));
      for (const k of keys) writeCacheEntry(d, k, entry(), 1e9);
      expect(readCacheEntry(d, keys[0]!)).toBeDefined(); // touched: now the most recent
      const removed = evictCache(d, 2 * 1200);
      expect(removed).toBeGreaterThan(0);
      expect(readCacheEntry(d, keys[0]!)).toBeDefined();
      expect(readdirSync(d).filter((f) => f.endsWith('.bin')).length).toBeLessThanOrEqual(2);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
  it('reports a directory it cannot write instead of throwing', () => {
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, 'x');
    expect(writeCacheEntry(join(file, 'sub'), 'c'.repeat(64), entry())).toBe(false);
  });
});

describe('cacheDirectory', () => {
  it('is $TSCUDA_CACHE_DIR, else $XDG_CACHE_HOME/tscuda/nvrtc, else ~/.cache/tscuda/nvrtc', () => {
    const saved = { dir: process.env.TSCUDA_CACHE_DIR, xdg: process.env.XDG_CACHE_HOME };
    try {
      process.env.TSCUDA_CACHE_DIR = '/tmp/somewhere';
      process.env.XDG_CACHE_HOME = '/tmp/xdg';
      expect(cacheDirectory()).toBe('/tmp/somewhere');
      delete process.env.TSCUDA_CACHE_DIR;
      expect(cacheDirectory()).toBe('/tmp/xdg/tscuda/nvrtc');
      delete process.env.XDG_CACHE_HOME;
      expect(cacheDirectory()).toBe(join(homedir(), '.cache', 'tscuda', 'nvrtc'));
    } finally {
      for (const [k, v] of [
        ['TSCUDA_CACHE_DIR', saved.dir],
        ['XDG_CACHE_HOME', saved.xdg],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('CompileError', () => {
  it("carries NVRTC's whole log in its message and .log", () => {
    const log = 'bad.cu(1): error: identifier "nope" is undefined\n\n1 error detected in the compilation of "bad.cu".';
    const e = new CompileError('bad.cu', log, 'NVRTC_ERROR_COMPILATION', ['--gpu-architecture=sm_90']);
    expect(e.log).toBe(log);
    expect(e.message).toContain(log);
    expect(e.message).toContain('NVRTC_ERROR_COMPILATION');
    expect(e.name).toBe('CompileError');
    expect(e).toBeInstanceOf(CudaError);
    expect(e.library).toBe('nvrtc');
    expect(e.status).toBe('NVRTC_ERROR_COMPILATION');
  });
});
