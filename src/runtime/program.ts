import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CudaError, nvrtc, statusName } from '../ffi/index.js';
import type { nvrtcProgram } from '../ffi/generated/types.js';
import type { Context } from './context.js';
import { Device } from './device.js';
import { Module } from './module.js';

export interface ProgramDescriptor {
  /** CUDA C++ source text. */
  source: string;
  /** The file name NVRTC uses in its messages and for `__FILE__` (default 'program.cu'). */
  name?: string;
  /** Headers the source may `#include "..."`, by include name: `{ 'util.cuh': '...' }`. */
  headers?: Record<string, string>;
  label?: string;
}

export interface CompileOptions {
  /** NVRTC options, e.g. ['-std=c++17', '--use_fast_math', '-DN=4']. The architecture goes in `arch`, not here. */
  options?: string[];
  /**
   * 'sm_90' compiles to a cubin for that GPU; 'compute_90' to PTX (the driver JIT-compiles it at
   * load, also for newer GPUs). Default: the device's own sm_XY, or, when this NVRTC is older than
   * the device, PTX for the newest architecture it supports.
   */
  arch?: string;
  /** The device whose architecture is the default, and whose context `load()` uses (default device 0). */
  device?: Device;
  /** C++ names to lower (templates, overloads, namespaced kernels): 'scale<float>'. Look them up with `lowered()`. */
  nameExpressions?: string[];
  /** Use the memory and disk cache (default true). */
  cache?: boolean;
}

export type ProgramImageKind = 'cubin' | 'ptx';

/** NVRTC rejected the program. The message carries NVRTC's whole log; so does `.log`. */
export class CompileError extends Error {
  override readonly name = 'CompileError';
  constructor(
    /** The program's file name (`name` of the descriptor). */
    readonly programName: string,
    /** NVRTC's whole compilation log. */
    readonly log: string,
    /** The nvrtcResult name, e.g. NVRTC_ERROR_COMPILATION or NVRTC_ERROR_INVALID_OPTION. */
    readonly status: string = 'NVRTC_ERROR_COMPILATION',
    /** The flags the compile was given, architecture first. */
    readonly options: readonly string[] = [],
  ) {
    super(`NVRTC could not compile ${programName} (${status}${options.length ? `; ${options.join(' ')}` : ''}):\n${log}`);
  }
}

function check(status: number, call: string, during: string): void {
  if (status !== 0) {
    let description: string | undefined;
    try {
      description = nvrtc().nvrtcGetErrorString(status as never) ?? undefined;
    } catch {
      /* the status name is enough */
    }
    throw new CudaError('nvrtc', status, call, description === undefined ? { during } : { during, description });
  }
}

let version: string | undefined;
/** The NVRTC version, 'major.minor' (e.g. '13.0'); part of every cache key. */
export function nvrtcVersion(): string {
  if (version !== undefined) return version;
  const major: [number | null] = [0];
  const minor: [number | null] = [0];
  check(nvrtc().nvrtcVersion(major, minor), 'nvrtcVersion', 'reading the NVRTC version');
  return (version = `${major[0]}.${minor[0]}`);
}

let supported: number[] | undefined;
/** The real architectures this NVRTC compiles for, ascending: [75, 80, 86, 87, 89, 90, ...]. Empty when it cannot say. */
export function nvrtcSupportedArchs(): number[] {
  if (supported) return supported;
  const api = nvrtc();
  try {
    const count = new Int32Array(1);
    if (api.nvrtcGetNumSupportedArchs(count) !== 0 || count[0]! <= 0) return (supported = []);
    const archs = new Int32Array(count[0]!);
    if (api.nvrtcGetSupportedArchs(archs) !== 0) return (supported = []);
    return (supported = Array.from(archs));
  } catch {
    return (supported = []); // an NVRTC without the query: trust the device's arch
  }
}

/** 'sm_90' → { kind: 'cubin', number: 90 }; 'compute_90' → PTX; 'sm_90a' keeps its suffix. Throws on anything else. */
export function parseArch(arch: string): { kind: ProgramImageKind; number: number } {
  const m = /^(sm|compute)_(\d+)[a-z]?$/.exec(arch);
  if (!m) throw new TypeError(`arch must look like 'sm_90' (cubin) or 'compute_90' (PTX), got ${JSON.stringify(arch)}`);
  return { kind: m[1] === 'sm' ? 'cubin' : 'ptx', number: Number(m[2]) };
}

/**
 * The architecture a compile without `arch` targets: the device's own sm_XY when NVRTC supports it,
 * else PTX for the newest architecture NVRTC supports below it (the driver JIT-compiles that PTX).
 */
export function defaultArch(deviceArch: string, supportedArchs: readonly number[]): string {
  const { number } = parseArch(deviceArch);
  if (supportedArchs.length === 0 || supportedArchs.includes(number)) return `sm_${number}`;
  const below = supportedArchs.filter((a) => a <= number);
  if (below.length === 0) throw new RangeError(`NVRTC supports ${supportedArchs.map((a) => `sm_${a}`).join(', ')}, none of which runs on this ${deviceArch} device`);
  return `compute_${Math.max(...below)}`;
}

/** The NVRTC flags of a compile: the architecture first, then the caller's options (which must not set it again). */
export function compileFlags(arch: string, options: readonly string[] = []): string[] {
  parseArch(arch);
  for (const o of options) {
    if (typeof o !== 'string') throw new TypeError(`NVRTC options must be strings, got ${String(o)}`);
    if (/^(-arch|--gpu-architecture)(=|$)/.test(o)) throw new TypeError(`give the architecture as compile({ arch }), not as the option ${JSON.stringify(o)}`);
  }
  return [`--gpu-architecture=${arch}`, ...options];
}

export interface CacheKeyParts {
  source: string;
  name: string;
  headers: Record<string, string>;
  /** All flags, the architecture included. */
  flags: readonly string[];
  nameExpressions: readonly string[];
  nvrtcVersion: string;
}

/** sha256 (hex) of everything that decides the compiled image. Header order does not matter. */
export function programCacheKey(p: CacheKeyParts): string {
  const headers = Object.keys(p.headers)
    .sort()
    .map((k) => [k, p.headers[k]!]);
  return createHash('sha256')
    .update(JSON.stringify({ v: 1, source: p.source, name: p.name, headers, flags: p.flags, names: p.nameExpressions, nvrtc: p.nvrtcVersion }))
    .digest('hex');
}

/** What the cache holds per key. */
export interface ProgramCacheEntry {
  image: Uint8Array;
  kind: ProgramImageKind;
  log: string;
  /** Name expression → lowered (mangled) name. */
  loweredNames: Record<string, string>;
}

/** Where compiled programs are kept on disk: $TSCUDA_CACHE_DIR, else ~/.cache/tscuda/nvrtc. */
export function cacheDirectory(): string {
  const dir = process.env.TSCUDA_CACHE_DIR;
  return dir ? dir : join(homedir(), '.cache', 'tscuda', 'nvrtc');
}

const MEMORY_ENTRIES = 256;
const memoryCache = new Map<string, ProgramCacheEntry>();

/** Forgets the compiled programs held in memory (the disk cache stays): the next compile reads the disk. */
export function clearProgramMemoryCache(): void {
  memoryCache.clear();
}

function remember(key: string, entry: ProgramCacheEntry): void {
  memoryCache.delete(key);
  memoryCache.set(key, entry);
  if (memoryCache.size > MEMORY_ENTRIES) memoryCache.delete(memoryCache.keys().next().value!);
}

interface Sidecar {
  format: 1;
  kind: ProgramImageKind;
  bytes: number;
  sha256: string;
  log: string;
  loweredNames: Record<string, string>;
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * Reads `<key>.bin` and its JSON sidecar `<key>.json` from `dir`. Anything missing, unreadable,
 * malformed, of the wrong size or hash, or lacking a lowered name asked for, is no entry: the
 * caller compiles again and overwrites it.
 */
export function readCacheEntry(dir: string, key: string, nameExpressions: readonly string[] = []): ProgramCacheEntry | undefined {
  try {
    const meta = JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as Partial<Sidecar>;
    if (meta.format !== 1 || (meta.kind !== 'cubin' && meta.kind !== 'ptx') || typeof meta.log !== 'string' || typeof meta.sha256 !== 'string') return undefined;
    const names = meta.loweredNames;
    if (typeof names !== 'object' || names === null) return undefined;
    for (const n of nameExpressions) if (typeof names[n] !== 'string' || names[n] === '') return undefined;
    const image = readFileSync(join(dir, `${key}.bin`));
    if (image.byteLength === 0 || image.byteLength !== meta.bytes || sha256(image) !== meta.sha256) return undefined;
    return { image: new Uint8Array(image.buffer, image.byteOffset, image.byteLength), kind: meta.kind, log: meta.log, loweredNames: { ...names } };
  } catch {
    return undefined;
  }
}

/** Writes an entry atomically (temporary file + rename, image before sidecar). Failing to write only costs a recompile. */
export function writeCacheEntry(dir: string, key: string, entry: ProgramCacheEntry): boolean {
  const tmp = join(dir, `.${key}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    const sidecar: Sidecar = { format: 1, kind: entry.kind, bytes: entry.image.byteLength, sha256: sha256(entry.image), log: entry.log, loweredNames: entry.loweredNames };
    writeFileSync(tmp, entry.image);
    renameSync(tmp, join(dir, `${key}.bin`));
    writeFileSync(tmp, JSON.stringify(sidecar));
    renameSync(tmp, join(dir, `${key}.json`));
    return true;
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      /* nothing was written */
    }
    return false;
  }
}

/** The result of Program.compile: a cubin or PTX image, NVRTC's log and the lowered names. */
export class CompiledProgram {
  readonly loweredNames: ReadonlyMap<string, string>;

  constructor(
    /** The cubin (ELF), or the PTX text NUL-terminated as NVRTC returns it. Shared with the cache: do not modify. */
    readonly image: Uint8Array,
    readonly kind: ProgramImageKind,
    /** NVRTC's log (warnings), possibly empty. */
    readonly log: string,
    loweredNames: ReadonlyMap<string, string> | Record<string, string>,
    /** True when the image came from the memory or disk cache rather than from NVRTC. */
    readonly fromCache: boolean,
    readonly label: string,
    /** The architecture compiled for ('sm_90', 'compute_90'). */
    readonly arch: string = '',
    /** The cache key (sha256 hex): `<cacheDirectory()>/<key>.bin` and `.json` on disk. */
    readonly cacheKey: string = '',
    readonly device?: Device,
  ) {
    this.loweredNames = loweredNames instanceof Map ? loweredNames : new Map(Object.entries(loweredNames));
  }

  /** Loads the image as a Module, in `context` (default: the compile's device's primary context). */
  load(context?: Context): Module {
    const ctx = context ?? this.device?.context;
    return Module.load({ data: this.image, label: this.label, ...(ctx ? { context: ctx } : {}) });
  }

  /** The lowered (mangled) name of a name expression given at compile time, for `module.kernel(...)`. */
  lowered(nameExpression: string): string {
    const name = this.loweredNames.get(nameExpression);
    if (name === undefined) throw new Error(`"${nameExpression}" was not among the name expressions compiled into ${this.label} (${[...this.loweredNames.keys()].join(', ') || 'none'})`);
    return name;
  }
}

/**
 * CUDA C++ compiled at run time with NVRTC. Compiles are cached in memory and on disk (see
 * `cacheDirectory()`), keyed by source, headers, options, architecture, name expressions and the
 * NVRTC version.
 *
 * ```ts
 * const compiled = new Program({ source, name: 'saxpy.cu' }).compile();
 * const kernel = compiled.load().kernel('saxpy', ['i32', 'f32', 'ptr', 'ptr']);
 * ```
 */
export class Program {
  readonly source: string;
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly label: string;

  constructor(descriptor: ProgramDescriptor) {
    if (typeof descriptor?.source !== 'string' || descriptor.source.trim() === '') throw new TypeError('Program needs CUDA source text');
    const headers = descriptor.headers ?? {};
    for (const [k, v] of Object.entries(headers)) if (typeof v !== 'string') throw new TypeError(`header "${k}" must be source text, got ${typeof v}`);
    this.source = descriptor.source;
    this.name = descriptor.name ?? 'program.cu';
    this.headers = { ...headers };
    this.label = descriptor.label ?? this.name;
  }

  /** Compiles (or finds in the cache) for `arch`. Throws CompileError with NVRTC's log when the source is rejected. */
  compile(options: CompileOptions = {}): CompiledProgram {
    const device = options.device;
    const arch = options.arch ?? defaultArch((device ?? Device.get(0)).arch, nvrtcSupportedArchs());
    const { kind } = parseArch(arch);
    const flags = compileFlags(arch, options.options);
    const names = [...(options.nameExpressions ?? [])];
    for (const n of names) if (typeof n !== 'string' || n.trim() === '') throw new TypeError(`name expressions must be non-empty strings, got ${JSON.stringify(n)}`);
    const key = programCacheKey({ source: this.source, name: this.name, headers: this.headers, flags, nameExpressions: names, nvrtcVersion: nvrtcVersion() });
    const make = (e: ProgramCacheEntry, fromCache: boolean): CompiledProgram => new CompiledProgram(e.image, e.kind, e.log, e.loweredNames, fromCache, this.label, arch, key, device);
    const useCache = options.cache ?? true;
    if (useCache) {
      const hit = memoryCache.get(key) ?? readCacheEntry(cacheDirectory(), key, names);
      if (hit && hit.kind === kind) {
        remember(key, hit);
        return make(hit, true);
      }
    }
    const entry = this.#compile(flags, names, kind);
    if (useCache) {
      remember(key, entry);
      writeCacheEntry(cacheDirectory(), key, entry);
    }
    return make(entry, false);
  }

  #compile(flags: string[], names: string[], kind: ProgramImageKind): ProgramCacheEntry {
    const api = nvrtc();
    const cell: [nvrtcProgram | null] = [null];
    const includeNames = Object.keys(this.headers);
    const headerSources = includeNames.map((n) => this.headers[n]!);
    const during = `program "${this.label}"`;
    check(
      api.nvrtcCreateProgram(cell, this.source, this.name, includeNames.length, includeNames.length ? headerSources : null, includeNames.length ? includeNames : null),
      'nvrtcCreateProgram',
      during,
    );
    const prog = cell[0];
    if (prog === null || prog === undefined) throw new Error(`nvrtcCreateProgram returned no program for ${during}`);
    try {
      for (const n of names) check(api.nvrtcAddNameExpression(prog, n), 'nvrtcAddNameExpression', `${during}, name expression ${n}`);
      const status = api.nvrtcCompileProgram(prog, flags.length, flags);
      const log = this.#log(prog);
      if (status !== 0) {
        const name = statusName('nvrtc', status);
        throw new CompileError(this.name, log || `(NVRTC gave no log: ${String(api.nvrtcGetErrorString(status as never))})`, name, flags);
      }
      const size: [number | bigint | null] = [0];
      const sizeCall = kind === 'cubin' ? 'nvrtcGetCUBINSize' : 'nvrtcGetPTXSize';
      check(kind === 'cubin' ? api.nvrtcGetCUBINSize(prog, size) : api.nvrtcGetPTXSize(prog, size), sizeCall, during);
      const bytes = Number(size[0] ?? 0);
      if (!(bytes > 0)) throw new Error(`${sizeCall} reported an empty ${kind} for ${during} (${flags[0]})`);
      const image = new Uint8Array(bytes);
      check(kind === 'cubin' ? api.nvrtcGetCUBIN(prog, image) : api.nvrtcGetPTX(prog, image), kind === 'cubin' ? 'nvrtcGetCUBIN' : 'nvrtcGetPTX', during);
      const loweredNames: Record<string, string> = {};
      for (const n of names) {
        // The binding declares lowered_name as an in/out `const char **`: koffi passes the one-element
        // array as the pointer cell and, after the call, decodes the C string NVRTC stored there into
        // it (copied before nvrtcDestroyProgram frees it). No local binding is needed.
        const out: [string | null] = [null];
        check(api.nvrtcGetLoweredName(prog, n, out), 'nvrtcGetLoweredName', `${during}, name expression ${n}`);
        if (typeof out[0] !== 'string' || out[0] === '') throw new Error(`nvrtcGetLoweredName gave no name for ${n} in ${during}`);
        loweredNames[n] = out[0];
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
    const bytes = Number(size[0] ?? 0);
    if (bytes <= 1) return '';
    const buf = Buffer.alloc(bytes);
    if (api.nvrtcGetProgramLog(prog, buf) !== 0) return '';
    const end = buf.indexOf(0);
    return buf.toString('utf8', 0, end < 0 ? buf.length : end).trimEnd();
  }
}
