/**
 * What a compile is told and how it is checked and resolved before NVRTC sees it: the descriptor
 * and compile options, the architecture (`sm_90` / `compute_90`, the device's own by default) and
 * the flags, and the NVRTC version and architectures that take part in every cache key. Pure but
 * for the two NVRTC queries, so most of it is unit-tested without a GPU.
 */
import { nvrtcChecked } from '../ffi/checked.js';
import { Device } from './device.js';
import type { ProgramImageKind } from './program-cache.js';
import { describeValue } from './resource.js';

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

let version: string | undefined;
/** The NVRTC version, 'major.minor' (e.g. '13.0'); part of every cache key. */
export function nvrtcVersion(): string {
  if (version !== undefined) return version;
  const major: [number | null] = [0];
  const minor: [number | null] = [0];
  nvrtcChecked().nvrtcVersion(major, minor, 'reading the NVRTC version');
  return (version = `${major[0]}.${minor[0]}`);
}

let supported: number[] | undefined;
/** The real architectures this NVRTC compiles for, ascending: [75, 80, 86, 87, 89, 90, ...]. Empty when it cannot say. */
export function nvrtcSupportedArchs(): number[] {
  if (supported) return supported;
  const api = nvrtcChecked();
  try {
    const count = new Int32Array(1);
    api.nvrtcGetNumSupportedArchs(count);
    if (count[0]! <= 0) return (supported = []);
    const archs = new Int32Array(count[0]!);
    api.nvrtcGetSupportedArchs(archs);
    return (supported = Array.from(archs));
  } catch {
    return (supported = []); // an NVRTC without the query, or one that fails it: trust the device's arch
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
  if (below.length === 0)
    throw new RangeError(
      `NVRTC supports ${supportedArchs.map((a) => `sm_${a}`).join(', ')}, none of which runs on this ${deviceArch} device`,
    );
  return `compute_${Math.max(...below)}`;
}

/** The NVRTC flags of a compile: the architecture first, then the caller's options (which must not set it again). */
export function compileFlags(arch: string, options: readonly string[] = []): string[] {
  if (typeof arch !== 'string')
    throw new TypeError(`arch must be a string like 'sm_90' or 'compute_90', got ${describeValue(arch)}`);
  parseArch(arch);
  if (!Array.isArray(options))
    throw new TypeError(`compile options must be an array of NVRTC flags, got ${describeValue(options)}`);
  for (const o of options) {
    if (typeof o !== 'string') throw new TypeError(`NVRTC options must be strings, got ${String(o)}`);
    if (o.includes('\0')) throw new TypeError(`NVRTC option ${JSON.stringify(o)} contains a NUL character`);
    if (/^(-arch|--gpu-architecture)(=|$)/.test(o))
      throw new TypeError(`give the architecture as compile({ arch }), not as the option ${JSON.stringify(o)}`);
  }
  return [`--gpu-architecture=${arch}`, ...options];
}

/**
 * Checks a compile's options before anything reaches NVRTC: an object; `arch` a string; `device` a
 * Device; `options` and `nameExpressions` arrays of strings; `cache` a boolean.
 */
export function checkCompileOptions(options: unknown): asserts options is CompileOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`compile options must be an object, got ${describeValue(options)}`);
  const o = options as Record<string, unknown>;
  if (o.arch !== undefined && typeof o.arch !== 'string')
    throw new TypeError(`compile arch must be a string like 'sm_90', got ${describeValue(o.arch)}`);
  if (o.device !== undefined && !(o.device instanceof Device))
    throw new TypeError(`compile device must be a Device, got ${describeValue(o.device)}`);
  if (o.options !== undefined && !Array.isArray(o.options))
    throw new TypeError(`compile options.options must be an array of NVRTC flags, got ${describeValue(o.options)}`);
  if (o.nameExpressions !== undefined && !Array.isArray(o.nameExpressions))
    throw new TypeError(`compile nameExpressions must be an array of strings, got ${describeValue(o.nameExpressions)}`);
  if (o.cache !== undefined && typeof o.cache !== 'boolean')
    throw new TypeError(`compile cache must be a boolean, got ${describeValue(o.cache)}`);
}
