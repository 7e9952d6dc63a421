import { checkStatus, CudaError, nvrtc, statusName } from '../ffi/index.js';
import { nvrtcResult } from '../ffi/generated/types.js';
import type { nvrtcProgram } from '../ffi/generated/types.js';
import { Context } from './context.js';
import { Device } from './device.js';
import { defaultDevice } from './defaults.js';
import type { Kernel, KernelParamType } from './kernel.js';
import { withToolkitInclude } from './cuda-include.js';
import { Module } from './module.js';
import { describeValue, expectResource, Resource } from './resource.js';
import { compileOnWorker } from './nvrtc-worker.js';
import { cacheDirectory, memoryCache, programCacheKey, readCacheEntry, remember, writeCacheEntry, type ProgramCacheEntry } from './program-cache.js';

/** What `new Program()` compiles: CUDA C++ source with its file name and in-memory headers, and a label. Nothing is compiled until `compile()`, `compileAsync()` or `kernel()`. */
export interface ProgramDescriptor {
  /** CUDA C++ source text. */
  source: string;
  /** The file name NVRTC uses in its messages and for `__FILE__` (default 'program.cu'). */
  name?: string | undefined;
  /** Headers the source may `#include "..."`, by include name: `{ 'util.cuh': '...' }`. */
  headers?: Record<string, string> | undefined;
  label?: string | undefined;
}

/** Options of `compile()`, `compileAsync()` and `kernel()`: NVRTC flags, target architecture and device, names to lower, and whether to use the cache. Compiles with equal options share a cache entry. */
export interface CompileOptions {
  /** NVRTC options, e.g. ['-std=c++17', '--use_fast_math', '-DN=4']. The architecture goes in `arch`, not here. */
  options?: string[] | undefined;
  /**
   * 'sm_90' compiles to a cubin for that GPU; 'compute_90' to PTX (the driver JIT-compiles it at
   * load, also for newer GPUs). Default: the device's own sm_XY, or, when this NVRTC is older than
   * the device, PTX for the newest architecture it supports.
   */
  arch?: string | undefined;
  /** The device whose architecture is the default, and whose context `load()` uses (default device 0). */
  device?: Device | undefined;
  /** C++ names to lower (templates, overloads, namespaced kernels): 'scale<float>'. Look them up with `lowered()`. */
  nameExpressions?: string[] | undefined;
  /** Use the memory and disk cache (default true). */
  cache?: boolean | undefined;
}

/** What a compile produced: 'cubin' (machine code for one `sm_XY`) or 'ptx' (for a `compute_XY` target, JIT-compiled by the driver when loaded). */
export type ProgramImageKind = 'cubin' | 'ptx';

/** A compile's resolved options (Program#plan). */
interface CompilePlan {
  flags: string[];
  names: string[];
  kind: ProgramImageKind;
  hit: CompiledProgram | undefined;
  store: (entry: ProgramCacheEntry) => CompiledProgram;
}

/**
 * NVRTC rejected the program: a CudaError of the nvrtc library (status NVRTC_ERROR_COMPILATION,
 * NVRTC_ERROR_INVALID_OPTION, ...) whose message carries NVRTC's whole log; so does `.log`.
 */
export class CompileError extends CudaError {
  override readonly name: string = 'CompileError';
  /** The program's file name (`name` of the descriptor). */
  readonly programName: string;
  /** NVRTC's whole compilation log. */
  readonly log: string;
  /** The flags the compile was given, architecture first. */
  readonly options: readonly string[];

  constructor(programName: string, log: string, status: string = 'NVRTC_ERROR_COMPILATION', options: readonly string[] = []) {
    super('nvrtc', nvrtcResult[status as keyof typeof nvrtcResult] ?? nvrtcResult.NVRTC_ERROR_COMPILATION, 'nvrtcCompileProgram', {
      description: `NVRTC could not compile ${programName}${options.length ? ` (${options.join(' ')})` : ''}:\n${log}`,
    });
    this.programName = programName;
    this.log = log;
    this.options = options;
  }
}

const check = (status: number, call: string, during: string): void => checkStatus('nvrtc', status, call, during);

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
  if (typeof arch !== 'string') throw new TypeError(`arch must be a string like 'sm_90' or 'compute_90', got ${describeValue(arch)}`);
  parseArch(arch);
  if (!Array.isArray(options)) throw new TypeError(`compile options must be an array of NVRTC flags, got ${describeValue(options)}`);
  for (const o of options) {
    if (typeof o !== 'string') throw new TypeError(`NVRTC options must be strings, got ${String(o)}`);
    if (o.includes('\0')) throw new TypeError(`NVRTC option ${JSON.stringify(o)} contains a NUL character`);
    if (/^(-arch|--gpu-architecture)(=|$)/.test(o)) throw new TypeError(`give the architecture as compile({ arch }), not as the option ${JSON.stringify(o)}`);
  }
  return [`--gpu-architecture=${arch}`, ...options];
}

/**
 * Checks a compile's options before anything reaches NVRTC: an object; `arch` a string; `device` a
 * Device; `options` and `nameExpressions` arrays of strings; `cache` a boolean.
 */
export function checkCompileOptions(options: unknown): asserts options is CompileOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`compile options must be an object, got ${describeValue(options)}`);
  const o = options as Record<string, unknown>;
  if (o.arch !== undefined && typeof o.arch !== 'string') throw new TypeError(`compile arch must be a string like 'sm_90', got ${describeValue(o.arch)}`);
  if (o.device !== undefined && !(o.device instanceof Device)) throw new TypeError(`compile device must be a Device, got ${describeValue(o.device)}`);
  if (o.options !== undefined && !Array.isArray(o.options)) throw new TypeError(`compile options.options must be an array of NVRTC flags, got ${describeValue(o.options)}`);
  if (o.nameExpressions !== undefined && !Array.isArray(o.nameExpressions))
    throw new TypeError(`compile nameExpressions must be an array of strings, got ${describeValue(o.nameExpressions)}`);
  if (o.cache !== undefined && typeof o.cache !== 'boolean') throw new TypeError(`compile cache must be a boolean, got ${describeValue(o.cache)}`);
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

  /** Loads the image as a Module, in `context` (default: the compile's device's primary context). Blocks like Module.load: about 1 ms for a cubin, longer for PTX the driver JIT-compiles. */
  load(context?: Context): Module {
    if (context !== undefined) expectResource(context, Context, `${this.label} load(context)`);
    const ctx = context ?? this.device?.context;
    return Module.load({ data: this.image, label: this.label, ...(ctx ? { context: ctx } : {}) });
  }

  /** The lowered (mangled) name of a name expression given at compile time, for `module.kernel(...)`. */
  lowered(nameExpression: string): string {
    if (typeof nameExpression !== 'string') throw new TypeError(`lowered(nameExpression) takes a string, got ${describeValue(nameExpression)}`);
    const name = this.loweredNames.get(nameExpression);
    if (name === undefined)
      throw new Error(`"${nameExpression}" was not among the name expressions compiled into ${this.label} (${[...this.loweredNames.keys()].join(', ') || 'none'})`);
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
export class Program extends Resource {
  readonly source: string;
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Modules loaded by kernel(), by device and compile options; dispose() unloads them. */
  readonly #modules = new Map<string, Module>();

  constructor(descriptor: ProgramDescriptor) {
    if (typeof descriptor !== 'object' || descriptor === null) throw new TypeError(`Program takes a descriptor { source, name?, headers? }, got ${describeValue(descriptor)}`);
    if (descriptor.name !== undefined && (typeof descriptor.name !== 'string' || descriptor.name === ''))
      throw new TypeError(`Program name must be a non-empty string, got ${describeValue(descriptor.name)}`);
    super('Program', descriptor.label ?? descriptor.name ?? 'program.cu');
    if (typeof descriptor.source !== 'string' || descriptor.source.trim() === '') throw new TypeError('Program needs CUDA source text');
    const headers = descriptor.headers ?? {};
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
      throw new TypeError(`Program headers must be an object { 'name.cuh': 'source' }, got ${describeValue(headers)}`);
    for (const [k, v] of Object.entries(headers)) if (typeof v !== 'string') throw new TypeError(`header "${k}" must be source text, got ${typeof v}`);
    this.source = descriptor.source;
    this.name = descriptor.name ?? 'program.cu';
    this.headers = { ...headers };
  }

  /** Unloads the modules kernel() loaded (their kernels are disposed with them). */
  protected releaseNative(): void {
    let first: unknown;
    for (const m of this.#modules.values()) {
      try {
        m.dispose();
      } catch (e) {
        first ??= e;
      }
    }
    this.#modules.clear();
    if (first !== undefined) throw first;
  }

  /**
   * The kernel `name` of this program, compiled (cached), loaded into the device's context (once per
   * context and compile options) and typed by its parameter list: with
   * `program.kernel('saxpy', ['i32', 'f32', 'ptr', 'ptr'])`, `launch(cfg, n, a, x, y)` type-checks
   * and swapped arguments are a tsc error. The first call blocks for the compile (see compile()).
   */
  kernel<const P extends readonly KernelParamType[]>(name: string, params: P, options: CompileOptions = {}): Kernel<P> {
    this.assertAlive();
    checkCompileOptions(options);
    const device = options.device ?? defaultDevice();
    const { device: _device, ...rest } = options;
    const key = `${device.ordinal}|${JSON.stringify(rest)}`;
    let module = this.#modules.get(key);
    if (!module || module.disposed) {
      module = this.compile({ ...rest, device }).load(device.context);
      this.#modules.set(key, module);
    }
    return module.kernel(name, params);
  }

  /**
   * Compiles (or finds in the cache) for `arch`. Throws CompileError with NVRTC's log when the
   * source is rejected. **Blocks the event loop** for the whole NVRTC compile (0.1–2 s for a
   * typical kernel, more with large headers); servers use `compileAsync()`.
   */
  compile(options: CompileOptions = {}): CompiledProgram {
    this.assertAlive();
    const plan = this.#plan(options);
    if (plan.hit) return plan.hit;
    const entry = this.#finish(
      plan,
      this.#start(plan, (prog) => nvrtc().nvrtcCompileProgram(prog, plan.flags.length, plan.flags)),
    );
    return plan.store(entry);
  }

  /**
   * The same as compile(), with NVRTC's compile running on a worker thread (src/runtime/nvrtc-worker.ts):
   * the event loop stays free meanwhile. Cache hits resolve without a thread hop.
   */
  async compileAsync(options: CompileOptions = {}): Promise<CompiledProgram> {
    this.assertAlive();
    const plan = this.#plan(options);
    if (plan.hit) return plan.hit;
    const prog = this.#create(plan);
    let status: number;
    try {
      status = await compileOnWorker(prog, plan.flags);
    } catch (e) {
      nvrtc().nvrtcDestroyProgram([prog]);
      throw e;
    }
    return plan.store(this.#finish(plan, { prog, status }));
  }

  /** Resolves the options: architecture, flags, names, cache key; a cache hit when there is one. */
  #plan(options: CompileOptions): CompilePlan {
    checkCompileOptions(options);
    const device = options.device;
    const arch = options.arch ?? defaultArch((device ?? defaultDevice()).arch, nvrtcSupportedArchs());
    const { kind } = parseArch(arch);
    const flags = withToolkitInclude(compileFlags(arch, options.options), [this.source, ...Object.values(this.headers)]);
    const names = [...(options.nameExpressions ?? [])];
    for (const n of names) if (typeof n !== 'string' || n.trim() === '') throw new TypeError(`name expressions must be non-empty strings, got ${JSON.stringify(n)}`);
    const key = programCacheKey({ source: this.source, name: this.name, headers: this.headers, flags, nameExpressions: names, nvrtcVersion: nvrtcVersion() });
    const make = (e: ProgramCacheEntry, fromCache: boolean): CompiledProgram =>
      new CompiledProgram(e.image, e.kind, e.log, e.loweredNames, fromCache, this.label, arch, key, device);
    const useCache = options.cache ?? true;
    let hit: CompiledProgram | undefined;
    if (useCache) {
      const cached = memoryCache.get(key) ?? readCacheEntry(cacheDirectory(), key, names);
      if (cached && cached.kind === kind) {
        remember(key, cached);
        hit = make(cached, true);
      }
    }
    const store = (entry: ProgramCacheEntry): CompiledProgram => {
      if (useCache) {
        remember(key, entry);
        writeCacheEntry(cacheDirectory(), key, entry);
      }
      return make(entry, false);
    };
    return { flags, names, kind, hit, store };
  }

  /** nvrtcCreateProgram with the headers and name expressions added. */
  #create(plan: CompilePlan): nvrtcProgram {
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
      for (const n of plan.names) check(api.nvrtcAddNameExpression(prog, n), 'nvrtcAddNameExpression', `${during}, name expression ${n}`);
    } catch (e) {
      api.nvrtcDestroyProgram([prog]);
      throw e;
    }
    return prog;
  }

  /** Creates the program and runs the compile step synchronously. */
  #start(plan: CompilePlan, compile: (prog: nvrtcProgram) => number): { prog: nvrtcProgram; status: number } {
    const prog = this.#create(plan);
    try {
      return { prog, status: compile(prog) };
    } catch (e) {
      nvrtc().nvrtcDestroyProgram([prog]);
      throw e;
    }
  }

  /** After the compile step: the log, the image and the lowered names; destroys the program in every case. */
  #finish(plan: CompilePlan, compiled: { prog: nvrtcProgram; status: number }): ProgramCacheEntry {
    const api = nvrtc();
    const { prog, status } = compiled;
    const { flags, names, kind } = plan;
    const during = `program "${this.label}"`;
    try {
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
