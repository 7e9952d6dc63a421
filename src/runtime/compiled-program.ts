/**
 * What a compile produces: the image (cubin or PTX) with NVRTC's log and the lowered names, which
 * loads as a Module; and the error of a compile NVRTC rejected.
 */
import { CudaError } from '../ffi/index.js';
import { nvrtcResult } from '../ffi/generated/types.js';
import { Context } from './context.js';
import type { Device } from './device.js';
import { Module } from './module.js';
import type { ProgramImageKind } from './program-cache.js';
import { describeValue, expectResource } from './resource.js';

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

  constructor(
    programName: string,
    log: string,
    status: string = 'NVRTC_ERROR_COMPILATION',
    options: readonly string[] = [],
  ) {
    super(
      'nvrtc',
      nvrtcResult[status as keyof typeof nvrtcResult] ?? nvrtcResult.NVRTC_ERROR_COMPILATION,
      'nvrtcCompileProgram',
      {
        description: `NVRTC could not compile ${programName}${options.length ? ` (${options.join(' ')})` : ''}:\n${log}`,
      },
    );
    this.programName = programName;
    this.log = log;
    this.options = options;
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

  /** Loads the image as a Module, in `context` (default: the compile's device's primary context). Blocks like Module.load: about 1 ms for a cubin, longer for PTX the driver JIT-compiles. */
  load(context?: Context): Module {
    if (context !== undefined) expectResource(context, Context, `${this.label} load(context)`);
    const ctx = context ?? this.device?.context;
    return Module.load({ data: this.image, label: this.label, ...(ctx ? { context: ctx } : {}) });
  }

  /** The lowered (mangled) name of a name expression given at compile time, for `module.kernel(...)`. */
  lowered(nameExpression: string): string {
    if (typeof nameExpression !== 'string')
      throw new TypeError(`lowered(nameExpression) takes a string, got ${describeValue(nameExpression)}`);
    const name = this.loweredNames.get(nameExpression);
    if (name === undefined)
      throw new Error(
        `"${nameExpression}" was not among the name expressions compiled into ${this.label} (${[...this.loweredNames.keys()].join(', ') || 'none'})`,
      );
    return name;
  }
}
