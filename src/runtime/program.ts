/**
 * CUDA C++ compiled at run time with NVRTC: the Program (its source and headers, the compile
 * itself, synchronous or on a worker thread, through the memory and disk cache). What a compile
 * is told lives in program-options.ts, what it produces in compiled-program.ts.
 */
import { bestEffort, nvrtcChecked } from '../ffi/checked.js';
import { CudaError, statusName } from '../ffi/errors.js';
import type { nvrtcProgram } from '../ffi/generated/types.js';
import { CompiledProgram, CompileError } from './compiled-program.js';
import { defaultDevice } from './defaults.js';
import type { Kernel, KernelParamType } from './kernel.js';
import { withToolkitInclude } from './cuda-include.js';
import type { Module } from './module.js';
import { Resource, describeValue } from './resource.js';
import { compileOnWorker } from './nvrtc-worker.js';
import {
  cacheDirectory,
  memoryCache,
  programCacheKey,
  readCacheEntry,
  remember,
  writeCacheEntry,
  type ProgramCacheEntry,
  type ProgramImageKind,
} from './program-cache.js';
import {
  checkCompileOptions,
  compileFlags,
  defaultArch,
  nvrtcSupportedArchs,
  nvrtcVersion,
  parseArch,
  type CompileOptions,
  type ProgramDescriptor,
} from './program-options.js';

export type { ProgramImageKind };
export { CompiledProgram, CompileError } from './compiled-program.js';
export {
  checkCompileOptions,
  compileFlags,
  defaultArch,
  nvrtcSupportedArchs,
  nvrtcVersion,
  parseArch,
  type CompileOptions,
  type ProgramDescriptor,
} from './program-options.js';

/** A compile's resolved options (Program#plan). */
interface CompilePlan {
  flags: string[];
  names: string[];
  kind: ProgramImageKind;
  hit: CompiledProgram | undefined;
  store: (entry: ProgramCacheEntry) => CompiledProgram;
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
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`Program takes a descriptor { source, name?, headers? }, got ${describeValue(descriptor)}`);
    if (descriptor.name !== undefined && (typeof descriptor.name !== 'string' || descriptor.name === ''))
      throw new TypeError(`Program name must be a non-empty string, got ${describeValue(descriptor.name)}`);
    super('Program', descriptor.label ?? descriptor.name ?? 'program.cu');
    if (typeof descriptor.source !== 'string' || descriptor.source.trim() === '')
      throw new TypeError('Program needs CUDA source text');
    const headers = descriptor.headers ?? {};
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
      throw new TypeError(`Program headers must be an object { 'name.cuh': 'source' }, got ${describeValue(headers)}`);
    for (const [k, v] of Object.entries(headers))
      if (typeof v !== 'string') throw new TypeError(`header "${k}" must be source text, got ${typeof v}`);
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
      this.#start(plan, (prog) => compileHere(prog, plan.flags)),
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
      destroyProgram(prog);
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
    const flags = withToolkitInclude(compileFlags(arch, options.options), [
      this.source,
      ...Object.values(this.headers),
    ]);
    const names = [...(options.nameExpressions ?? [])];
    for (const n of names)
      if (typeof n !== 'string' || n.trim() === '')
        throw new TypeError(`name expressions must be non-empty strings, got ${JSON.stringify(n)}`);
    const key = programCacheKey({
      source: this.source,
      name: this.name,
      headers: this.headers,
      flags,
      nameExpressions: names,
      nvrtcVersion: nvrtcVersion(),
    });
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
    const api = nvrtcChecked();
    const cell: [nvrtcProgram | null] = [null];
    const includeNames = Object.keys(this.headers);
    const headerSources = includeNames.map((n) => this.headers[n]!);
    const during = `program "${this.label}"`;
    api.nvrtcCreateProgram(
      cell,
      this.source,
      this.name,
      includeNames.length,
      includeNames.length ? headerSources : null,
      includeNames.length ? includeNames : null,
      during,
    );
    const prog = cell[0];
    if (prog === null || prog === undefined) throw new Error(`nvrtcCreateProgram returned no program for ${during}`);
    try {
      for (const n of plan.names) api.nvrtcAddNameExpression(prog, n, `${during}, name expression ${n}`);
    } catch (e) {
      destroyProgram(prog);
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
      destroyProgram(prog);
      throw e;
    }
  }

  /** After the compile step: the log, the image and the lowered names; destroys the program in every case. */
  #finish(plan: CompilePlan, compiled: { prog: nvrtcProgram; status: number }): ProgramCacheEntry {
    const api = nvrtcChecked();
    const { prog, status } = compiled;
    const { flags, names, kind } = plan;
    const during = `program "${this.label}"`;
    try {
      const log = this.#log(prog);
      if (status !== 0) {
        const name = statusName('nvrtc', status);
        throw new CompileError(
          this.name,
          log || `(NVRTC gave no log: ${String(api.nvrtcGetErrorString(status as never))})`,
          name,
          flags,
        );
      }
      const size: [number | bigint | null] = [0];
      const sizeCall = kind === 'cubin' ? 'nvrtcGetCUBINSize' : 'nvrtcGetPTXSize';
      if (kind === 'cubin') api.nvrtcGetCUBINSize(prog, size, during);
      else api.nvrtcGetPTXSize(prog, size, during);
      const bytes = Number(size[0] ?? 0);
      if (!(bytes > 0)) throw new Error(`${sizeCall} reported an empty ${kind} for ${during} (${flags[0]})`);
      const image = new Uint8Array(bytes);
      if (kind === 'cubin') api.nvrtcGetCUBIN(prog, image, during);
      else api.nvrtcGetPTX(prog, image, during);
      const loweredNames: Record<string, string> = {};
      for (const n of names) {
        // The binding declares lowered_name as an in/out `const char **`: koffi passes the one-element
        // array as the pointer cell and, after the call, decodes the C string NVRTC stored there into
        // it (copied before nvrtcDestroyProgram frees it). No local binding is needed.
        const out: [string | null] = [null];
        api.nvrtcGetLoweredName(prog, n, out, `${during}, name expression ${n}`);
        if (typeof out[0] !== 'string' || out[0] === '')
          throw new Error(`nvrtcGetLoweredName gave no name for ${n} in ${during}`);
        loweredNames[n] = out[0];
      }
      return { image, kind, log, loweredNames };
    } finally {
      destroyProgram(prog);
    }
  }

  /** NVRTC's log of the program, or '' when it has none or cannot give it (a courtesy: the compile's status says what happened). */
  #log(prog: nvrtcProgram): string {
    const api = nvrtcChecked();
    const size: [number | bigint | null] = [0];
    return bestEffort(() => {
      api.nvrtcGetProgramLogSize(prog, size);
      const bytes = Number(size[0] ?? 0);
      if (bytes <= 1) return '';
      const buf = Buffer.alloc(bytes);
      api.nvrtcGetProgramLog(prog, buf);
      const end = buf.indexOf(0);
      return buf.toString('utf8', 0, end < 0 ? buf.length : end).trimEnd();
    }, '');
  }
}

/**
 * nvrtcCompileProgram on this thread: its nvrtcResult, which #finish turns into a CompileError
 * with NVRTC's log (a program NVRTC rejects is an answer, the same one the compile thread sends).
 */
function compileHere(prog: nvrtcProgram, flags: readonly string[]): number {
  try {
    nvrtcChecked().nvrtcCompileProgram(prog, flags.length, flags);
    return 0;
  } catch (e) {
    if (e instanceof CudaError && e.library === 'nvrtc') return e.code;
    throw e;
  }
}

/** Destroys a program however its compile went; a failure to destroy it is dropped, so the caller sees the compile's own result or error. */
function destroyProgram(prog: nvrtcProgram): void {
  bestEffort(() => nvrtcChecked().nvrtcDestroyProgram([prog]), undefined);
}
