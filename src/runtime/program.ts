import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CudaError, nvrtc } from '../ffi/index.js';
import type { nvrtcProgram } from '../ffi/generated/types.js';
import type { Context } from './context.js';
import { Device } from './device.js';
import { Module } from './module.js';

export interface ProgramDescriptor {
  source: string;
  /** The file name NVRTC reports in messages. */
  name?: string;
  /** Headers the source may #include, by include name. */
  headers?: Record<string, string>;
  label?: string;
}

export interface CompileOptions {
  /** NVRTC options, e.g. ['-std=c++17', '--use_fast_math']. */
  options?: string[];
  /** 'sm_90' compiles to a cubin; 'compute_90' to PTX. Default: the device's own sm_XY. */
  arch?: string;
  device?: Device;
  /** C++ names to lower (templates, overloads): `kernel<float>`. */
  nameExpressions?: string[];
  /** Use the memory and disk cache (default true). */
  cache?: boolean;
}

/** NVRTC rejected the source: the message carries NVRTC's whole log. */
export class CompileError extends Error {
  override readonly name = 'CompileError';
  constructor(
    readonly programName: string,
    readonly log: string,
  ) {
    super(`NVRTC could not compile ${programName}:\n${log}`);
  }
}

function check(status: number, call: string, during: string): void {
  if (status !== 0) throw new CudaError('nvrtc', status, call, { during, description: nvrtc().nvrtcGetErrorString(status as never) ?? '' });
}

export function nvrtcVersion(): string {
  const major: [number | null] = [0];
  const minor: [number | null] = [0];
  check(nvrtc().nvrtcVersion(major, minor), 'nvrtcVersion', 'reading the NVRTC version');
  return `${major[0]}.${minor[0]}`;
}

interface CacheEntry {
  image: Uint8Array;
  kind: 'cubin' | 'ptx';
  log: string;
  loweredNames: Record<string, string>;
}

const memoryCache = new Map<string, CacheEntry>();

export function cacheDirectory(): string {
  return process.env.TSCUDA_CACHE_DIR ?? join(homedir(), '.cache', 'tscuda', 'nvrtc');
}

/** Forgets compiled programs held in memory (the disk cache stays). */
export function clearProgramMemoryCache(): void {
  memoryCache.clear();
}

function readDiskCache(key: string): CacheEntry | undefined {
  try {
    const meta = JSON.parse(readFileSync(join(cacheDirectory(), `${key}.json`), 'utf8')) as Omit<CacheEntry, 'image'> & { bytes: number };
    const image = readFileSync(join(cacheDirectory(), `${key}.bin`));
    if (image.byteLength !== meta.bytes || (meta.kind !== 'cubin' && meta.kind !== 'ptx')) return undefined;
    return { image, kind: meta.kind, log: meta.log, loweredNames: meta.loweredNames };
  } catch {
    return undefined; // missing or corrupt: compile again
  }
}

function writeDiskCache(key: string, entry: CacheEntry): void {
  try {
    const dir = cacheDirectory();
    mkdirSync(dir, { recursive: true });
    const tmp = `.${key}.${process.pid}.tmp`;
    writeFileSync(join(dir, tmp + 'b'), entry.image);
    renameSync(join(dir, tmp + 'b'), join(dir, `${key}.bin`));
    writeFileSync(join(dir, tmp + 'j'), JSON.stringify({ kind: entry.kind, log: entry.log, loweredNames: entry.loweredNames, bytes: entry.image.byteLength }));
    renameSync(join(dir, tmp + 'j'), join(dir, `${key}.json`));
  } catch {
    /* a read-only home only costs recompilation */
  }
}

export class CompiledProgram {
  constructor(
    readonly image: Uint8Array,
    readonly kind: 'cubin' | 'ptx',
    readonly log: string,
    readonly loweredNames: ReadonlyMap<string, string>,
    readonly fromCache: boolean,
    readonly label: string,
  ) {}

  /** Loads the image as a Module. */
  load(context?: Context): Module {
    return Module.load({ data: this.image, label: this.label, ...(context ? { context } : {}) });
  }

  /** The mangled name of a name expression given at compile time. */
  lowered(nameExpression: string): string {
    const name = this.loweredNames.get(nameExpression);
    if (!name) throw new Error(`"${nameExpression}" was not among the name expressions compiled into ${this.label}`);
    return name;
  }
}

/** CUDA C++ compiled at run time with NVRTC, cached in memory and on disk. */
export class Program {
  readonly source: string;
  readonly name: string;
  readonly headers: Record<string, string>;
  readonly label: string;

  constructor(descriptor: ProgramDescriptor) {
    if (typeof descriptor.source !== 'string' || descriptor.source.trim() === '') throw new TypeError('Program needs CUDA source text');
    this.source = descriptor.source;
    this.name = descriptor.name ?? 'program.cu';
    this.headers = descriptor.headers ?? {};
    this.label = descriptor.label ?? this.name;
  }

  compile(options: CompileOptions = {}): CompiledProgram {
    const arch = options.arch ?? (options.device ?? Device.get(0)).arch;
    const archMatch = /^(sm|compute)_(\d+[a-z]?)$/.exec(arch);
    if (!archMatch) throw new TypeError(`arch must look like 'sm_90' or 'compute_90', got ${arch}`);
    const kind = archMatch[1] === 'sm' ? 'cubin' : 'ptx';
    const flags = [`--gpu-architecture=${arch}`, ...(options.options ?? [])];
    const names = options.nameExpressions ?? [];
    const key = createHash('sha256')
      .update(JSON.stringify([this.source, Object.entries(this.headers).sort(), flags, names, nvrtcVersion()]))
      .digest('hex')
      .slice(0, 40);
    const useCache = options.cache ?? true;
    if (useCache) {
      const hit = memoryCache.get(key) ?? readDiskCache(key);
      if (hit) {
        memoryCache.set(key, hit);
        return new CompiledProgram(hit.image, hit.kind, hit.log, new Map(Object.entries(hit.loweredNames)), true, this.label);
      }
    }
    const entry = this.#compile(flags, names, kind);
    if (useCache) {
      memoryCache.set(key, entry);
      writeDiskCache(key, entry);
    }
    return new CompiledProgram(entry.image, entry.kind, entry.log, new Map(Object.entries(entry.loweredNames)), false, this.label);
  }

  #compile(flags: string[], names: string[], kind: 'cubin' | 'ptx'): CacheEntry {
    const api = nvrtc();
    const cell: [nvrtcProgram | null] = [null];
    const includeNames = Object.keys(this.headers);
    check(api.nvrtcCreateProgram(cell, this.source, this.name, includeNames.length, includeNames.map((n) => this.headers[n]!), includeNames), 'nvrtcCreateProgram', this.label);
    const prog = cell[0]!;
    try {
      for (const n of names) check(api.nvrtcAddNameExpression(prog, n), 'nvrtcAddNameExpression', `${this.label}: ${n}`);
      const status = api.nvrtcCompileProgram(prog, flags.length, flags);
      const log = this.#log(prog);
      if (status !== 0) throw new CompileError(this.name, log || `(no log; ${String(api.nvrtcGetErrorString(status as never))})`);
      const size: [number | bigint | null] = [0];
      const image = kind === 'cubin'
        ? (check(api.nvrtcGetCUBINSize(prog, size), 'nvrtcGetCUBINSize', this.label), Buffer.alloc(Number(size[0])))
        : (check(api.nvrtcGetPTXSize(prog, size), 'nvrtcGetPTXSize', this.label), Buffer.alloc(Number(size[0])));
      check(kind === 'cubin' ? api.nvrtcGetCUBIN(prog, image) : api.nvrtcGetPTX(prog, image), kind === 'cubin' ? 'nvrtcGetCUBIN' : 'nvrtcGetPTX', this.label);
      const loweredNames: Record<string, string> = {};
      for (const n of names) {
        const out: (string | null)[] = [null];
        check(api.nvrtcGetLoweredName(prog, n, out as never), 'nvrtcGetLoweredName', `${this.label}: ${n}`);
        loweredNames[n] = String(out[0]);
      }
      return { image, kind, log, loweredNames };
    } finally {
      api.nvrtcDestroyProgram([prog]);
    }
  }

  #log(prog: nvrtcProgram): string {
    const api = nvrtc();
    const size: [number | bigint | null] = [0];
    if (api.nvrtcGetProgramLogSize(prog, size) !== 0) return '';
    const buf = Buffer.alloc(Number(size[0]));
    if (api.nvrtcGetProgramLog(prog, buf) !== 0) return '';
    return buf.toString('utf8').replace(/\0+$/, '').trim();
  }
}
