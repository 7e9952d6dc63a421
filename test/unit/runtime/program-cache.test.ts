import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cacheDirectory,
  compileFlags,
  CompileError,
  defaultArch,
  parseArch,
  programCacheKey,
  type ProgramCacheEntry,
  readCacheEntry,
  writeCacheEntry,
} from '../../../src/runtime/program.js';

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
  const base = { source: 'x', name: 'a.cu', headers: { 'a.h': '1', 'b.h': '2' }, flags: ['--gpu-architecture=sm_90'], nameExpressions: ['k<float>'], nvrtcVersion: '13.0' };
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
  it('reports a directory it cannot write instead of throwing', () => {
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, 'x');
    expect(writeCacheEntry(join(file, 'sub'), 'c'.repeat(64), entry())).toBe(false);
  });
});

describe('cacheDirectory', () => {
  it('is $TSCUDA_CACHE_DIR, else ~/.cache/tscuda/nvrtc', () => {
    const saved = process.env.TSCUDA_CACHE_DIR;
    try {
      process.env.TSCUDA_CACHE_DIR = '/tmp/somewhere';
      expect(cacheDirectory()).toBe('/tmp/somewhere');
      delete process.env.TSCUDA_CACHE_DIR;
      expect(cacheDirectory()).toBe(join(homedir(), '.cache', 'tscuda', 'nvrtc'));
    } finally {
      if (saved === undefined) delete process.env.TSCUDA_CACHE_DIR;
      else process.env.TSCUDA_CACHE_DIR = saved;
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
    expect(e).toBeInstanceOf(Error);
  });
});
