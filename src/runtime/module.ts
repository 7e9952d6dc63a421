import { readFileSync } from 'node:fs';
import type { CUlibrary } from '../ffi/generated/types.js';
import { check, driverApi, initDriver, outValue } from './cuda.js';
import type { Context } from './context.js';
import { resolveContext, type Placement } from './defaults.js';
import { Kernel, type KernelParamType } from './kernel.js';
import { Resource } from './resource.js';

export interface ModuleDescriptor extends Placement {
  /** A fatbin, cubin or PTX file. */
  path?: string;
  /** The image itself (PTX as text is NUL-terminated here). */
  data?: Uint8Array | string;
  label?: string;
}

/** Loaded device code (cuLibraryLoadData: context-independent, loaded into each context on use). */
export class Module extends Resource {
  readonly handle: CUlibrary;
  readonly context: Context;
  readonly #kernels = new Map<string, Kernel>();

  private constructor(handle: CUlibrary, context: Context, label: string) {
    super('Module', label);
    this.handle = handle;
    this.context = context;
    this.track(() => driverApi().cuLibraryUnload(handle));
  }

  static load(descriptor: ModuleDescriptor): Module {
    initDriver();
    const { path, data } = descriptor;
    if ((path === undefined) === (data === undefined)) throw new TypeError('Module.load needs exactly one of `path` or `data`');
    let image: Uint8Array;
    if (path !== undefined) {
      try {
        image = readFileSync(path);
      } catch (e) {
        throw new Error(`cannot read module image ${path}: ${(e as Error).message}`);
      }
    } else image = typeof data === 'string' ? Buffer.from(data + '\0') : data!;
    if (image.byteLength === 0) throw new RangeError(`module image ${path ?? ''} is empty`);
    if (looksLikePtx(image) && image[image.byteLength - 1] !== 0) image = Buffer.concat([image, Buffer.from([0])]);
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const label = descriptor.label ?? path ?? 'module';
    const cell: [CUlibrary | null] = [null];
    check(driverApi().cuLibraryLoadData(cell, image, null, null, 0, null, null, 0), 'cuLibraryLoadData', `loading "${label}"`);
    return new Module(outValue(cell, 'cuLibraryLoadData'), context, label);
  }

  /**
   * The kernel `name` (an `extern "C"` or lowered name). `params` gives its parameter types, so
   * scalar arguments are encoded right; the driver's parameter layout is checked against it.
   */
  kernel<const P extends readonly KernelParamType[]>(name: string, params: P): Kernel<P> {
    this.assertAlive();
    if (typeof name !== 'string' || name === '') throw new TypeError(`kernel name must be a non-empty string, got ${String(name)}`);
    if (!Array.isArray(params)) throw new TypeError(`kernel "${name}": params must be an array of parameter types ('ptr', 'i32', 'f32', ...)`);
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
    const count: [number | null] = [0];
    check(driverApi().cuLibraryGetKernelCount(count, this.handle), 'cuLibraryGetKernelCount');
    const n = outValue(count, 'cuLibraryGetKernelCount');
    const handles = new BigUint64Array(n);
    check(driverApi().cuLibraryEnumerateKernels(handles, n, this.handle), 'cuLibraryEnumerateKernels');
    return Array.from(handles, (h) => {
      const name: [string | null] = [null];
      check(driverApi().cuKernelGetName(name as never, h as never), 'cuKernelGetName');
      return String(name[0]);
    });
  }

  protected releaseNative(): void {
    for (const k of this.#kernels.values()) k.dispose();
    check(driverApi().cuLibraryUnload(this.handle), 'cuLibraryUnload', this.label);
  }
}

function looksLikePtx(image: Uint8Array): boolean {
  const head = Buffer.from(image.buffer, image.byteOffset, Math.min(image.byteLength, 256)).toString('latin1');
  return /\.version\s+\d|\.target\s+sm_/.test(head);
}
