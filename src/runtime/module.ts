import { cu } from '../ffi/checked.js';
import { readFileSync } from 'node:fs';
import type { CUlibrary } from '../ffi/generated/types.js';
import { initDriver } from './cuda.js';
import type { Context } from './context.js';
import { resolveContext, type Placement } from './defaults.js';
import { Kernel, type KernelParamType } from './kernel.js';
import { checkLabel, describeValue, Resource } from './resource.js';

/** What `Module.load` loads: exactly one of `path` or `data`, where it lives (Placement: `device` or `context`; default device 0) and a label (default: the path). */
export interface ModuleDescriptor extends Placement {
  /** A fatbin, cubin or PTX file. */
  path?: string | undefined;
  /** The image itself (PTX as text is NUL-terminated here). */
  data?: Uint8Array | string | undefined;
  label?: string | undefined;
}

/**
 * Loaded device code (cuLibraryLoadData: context-independent, loaded into each context on use).
 *
 * Blocking: `Module.load` reads the file and loads the image on the calling thread: about a
 * millisecond for a cubin or fatbin with a cubin for this GPU; a PTX image (or a fatbin with
 * only PTX for it) is JIT-compiled by the driver first, 10 ms to seconds. Load once, at startup.
 */
export class Module extends Resource {
  readonly handle: CUlibrary;
  readonly context: Context;
  readonly #kernels = new Map<string, Kernel>();

  private constructor(handle: CUlibrary, context: Context, label: string) {
    super('Module', label);
    this.handle = handle;
    this.context = context;
    this.track(() => cu().cuLibraryUnload(handle));
  }

  /** Reads and loads a cubin, fatbin or PTX image (the kind is sniffed from its first bytes) on the calling thread; throws TypeError for an image of no known kind or a bad descriptor, CudaError when the driver refuses it (e.g. no code for this GPU). */
  static load(descriptor: ModuleDescriptor): Module {
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(
        `Module.load takes a descriptor object { path } or { data }, got ${describeValue(descriptor)}`,
      );
    initDriver();
    const { path, data } = descriptor;
    if ((path === undefined) === (data === undefined))
      throw new TypeError('Module.load needs exactly one of `path` or `data`');
    if (path !== undefined && typeof path !== 'string')
      throw new TypeError(`Module.load path must be a string, got ${describeValue(path)}`);
    checkLabel(descriptor.label, 'Module.load');
    if (data !== undefined && typeof data !== 'string' && !(data instanceof Uint8Array))
      throw new TypeError(
        `Module.load data must be a Uint8Array (cubin, fatbin) or a string (PTX), got ${describeValue(data)}`,
      );
    let image: Uint8Array;
    if (path !== undefined) {
      try {
        image = readFileSync(path);
      } catch (e) {
        throw new Error(`cannot read module image ${path}: ${(e as Error).message}`);
      }
    } else image = typeof data === 'string' ? Buffer.from(data + '\0') : data!;
    if (image.byteLength === 0) throw new RangeError(`module image ${path ?? ''} is empty`);
    const kind = imageKind(image);
    if (kind === undefined) {
      const head = Array.from(image.subarray(0, 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
      throw new TypeError(
        `module image ${descriptor.label ?? path ?? '(data)'} is not a cubin (ELF), fatbin or PTX: it starts with bytes ${head}`,
      );
    }
    if (kind === 'ptx' && image[image.byteLength - 1] !== 0) image = Buffer.concat([image, Buffer.from([0])]);
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const label = descriptor.label ?? path ?? 'module';
    const handle = cu().cuLibraryLoadData(image, null, null, 0, null, null, 0, `loading "${label}"`);
    return new Module(handle, context, label);
  }

  /**
   * The kernel `name` (an `extern "C"` or lowered name). `params` gives its parameter types, so
   * scalar arguments are encoded right; the driver's parameter layout is checked against it.
   */
  kernel<const P extends readonly KernelParamType[]>(name: string, params: P): Kernel<P> {
    this.assertAlive();
    if (typeof name !== 'string' || name === '' || name.includes('\0'))
      throw new TypeError(`kernel name must be a non-empty string, got ${describeValue(name)}`);
    if (!Array.isArray(params))
      throw new TypeError(`kernel "${name}": params must be an array of parameter types ('ptr', 'i32', 'f32', ...)`);
    const key = `${name}(${params.join(',')})`;
    let k = this.#kernels.get(key) as Kernel<P> | undefined;
    if (!k || k.disposed) {
      k = Kernel.fromLibrary(this, name, params);
      this.#kernels.set(key, k as unknown as Kernel);
    }
    return k;
  }

  /** Names of the kernels in the module. */
  kernelNames(): string[] {
    this.assertAlive();
    const n = cu().cuLibraryGetKernelCount(this.handle);
    const handles = new BigUint64Array(n);
    cu().cuLibraryEnumerateKernels(handles, n, this.handle);
    return Array.from(handles, (h) => String(cu().cuKernelGetName(h as never)));
  }

  protected releaseNative(): void {
    for (const k of this.#kernels.values()) k.dispose();
    cu().cuLibraryUnload(this.handle, this.label);
  }
}

/** What an image is, by its first bytes: a cubin (ELF), a fatbin (or a fatbin wrapper), PTX text; undefined for anything else. */
export function imageKind(image: Uint8Array): 'cubin' | 'fatbin' | 'ptx' | undefined {
  const b = image;
  if (b.byteLength >= 4 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) return 'cubin';
  // 0xBA55ED50 (fatbin) and 0x466243B1 (its C wrapper), little-endian.
  if (b.byteLength >= 4 && b[0] === 0x50 && b[1] === 0xed && b[2] === 0x55 && b[3] === 0xba) return 'fatbin';
  if (b.byteLength >= 4 && b[0] === 0xb1 && b[1] === 0x43 && b[2] === 0x62 && b[3] === 0x46) return 'fatbin';
  return looksLikePtx(image) ? 'ptx' : undefined;
}

function looksLikePtx(image: Uint8Array): boolean {
  // PTX from nvcc or NVRTC opens with comment lines, then `.version` and `.target` directives.
  const head = Buffer.from(image.buffer, image.byteOffset, Math.min(image.byteLength, 16384)).toString('latin1');
  return /(^|\n)\s*\.version\s+\d/.test(head) && /\.target\s+(sm|compute)_\d/.test(head);
}

/** The class's instance type under the name types.ts gives it (see there: why). */
type ModuleInstance = Module;
declare module './types.js' {
  interface Module extends ModuleInstance {}
}
