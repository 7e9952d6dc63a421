import { bestEffort, cu } from '../ffi/checked.js';
import koffi from 'koffi';
import { CUfunction_attribute as FA, type CUfunction } from '../ffi/generated/types.js';
import { hot } from './cuda.js';
import type { Context } from './context.js';
import {
  checkAddress,
  PARAM_BYTES,
  paramLayout,
  writeAddress,
  writeScalar,
  type KernelParamType,
} from './kernel-args.js';
import { DeviceBuffer } from './memory/device-buffer.js';
import type { DType } from './memory/dtype.js';
import type { Module } from './types.js';
import { describeValue, DisposedError, expectResource, isLive, Resource } from './resource.js';
import { resolveStream, Stream } from './stream.js';
import {
  dims,
  launchAttributes,
  parseDim3,
  type ExtendedLaunchConfig,
  type KernelArg,
  type KernelArgs,
  type LaunchConfig,
} from './kernel-launch.js';

import {
  activeBlocksPerMultiprocessor,
  kernelAttribute,
  kernelAttributes,
  occupancyLaunch,
  type KernelAttributes,
} from './kernel-occupancy.js';

export type { KernelParamType } from './kernel-args.js';
export type { Dim3, ExtendedLaunchConfig, KernelArg, KernelArgFor, KernelArgs, LaunchConfig } from './kernel-launch.js';
export type { KernelAttributes } from './kernel-occupancy.js';

/** A kernel with its own native parameter block: a launch writes arguments in place and makes one FFI call. */
export class Kernel<P extends readonly KernelParamType[] = readonly KernelParamType[]> extends Resource {
  readonly name: string;
  readonly module: Module;
  readonly context: Context;
  readonly function: CUfunction;
  readonly params: P;
  readonly #offsets: Int32Array;
  /** `kernel "k" argument i (type)` per parameter, made once: messages name the argument, launches build no strings. */
  readonly #argNames: readonly string[];
  readonly #view: DataView;
  /** void*[] pointing at each argument slot, passed as kernelParams. */
  readonly #paramArray: bigint;
  /** The buffers among the arguments last written, by index: a launch on a stream records its use of them. */
  readonly #bufferArgs: (DeviceBuffer<DType> | undefined)[] = [];
  readonly #block: bigint;
  readonly #limits: { maxThreads: number; maxBlock: readonly number[]; maxGrid: readonly number[]; maxShared: number };
  /** Dynamic shared memory a launch may ask for now (the kernel's attribute; raised by setMaxDynamicSharedMemory). */
  #dynamicSharedLimit: number;

  private constructor(module: Module, name: string, fn: CUfunction, params: P) {
    super('Kernel', name);
    this.name = name;
    this.module = module;
    this.context = module.context;
    this.function = fn;
    this.params = params;
    const { offsets, size } = paramLayout(params, name);
    this.#offsets = offsets;
    this.#argNames = params.map((p, i) => `kernel "${name}" argument ${i} (${p})`);
    const blockBytes = Math.max(8, size);
    this.#block = koffi.alloc('uint8', blockBytes) as bigint;
    this.#view = new DataView(koffi.view(this.#block, blockBytes));
    const slots = Math.max(1, params.length);
    this.#paramArray = koffi.alloc('void *', slots) as bigint;
    const array = new BigUint64Array(koffi.view(this.#paramArray, slots * 8));
    params.forEach((_, i) => (array[i] = this.#block + BigInt(offsets[i]!)));
    const props = this.context.device.properties;
    this.#limits = {
      maxThreads: kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
      maxBlock: props.maxBlockDim,
      maxGrid: props.maxGridDim,
      maxShared: props.maxSharedMemoryPerBlockOptinBytes,
    };
    this.#dynamicSharedLimit = kernelAttribute(fn, name, FA.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    const block = this.#block;
    const paramArray = this.#paramArray;
    this.track(() => {
      koffi.free(block);
      koffi.free(paramArray);
    });
    this.#checkLayout();
  }

  /** Looks up kernel `name` in a loaded module and wraps it; throws TypeError when `params` disagrees with the driver's parameter layout, CudaError when there is no such kernel. Use `module.kernel()`, which caches the result. */
  static fromLibrary<const P extends readonly KernelParamType[]>(module: Module, name: string, params: P): Kernel<P> {
    // By family name, not class: kernel.ts and module.ts would import each other. A look-alike module's handle would reach the driver.
    expectResource<Module>(module, 'Module', `Kernel.fromLibrary module (for kernel "${String(name)}")`);
    paramLayout(params, name);
    module.context.makeCurrent();
    const k = cu().cuLibraryGetKernel(module.handle, name, `kernel "${name}" in "${module.label}"`);
    const f = cu().cuKernelGetFunction(k, `kernel "${name}"`);
    return new Kernel(module, name, f, params);
  }

  /** The driver knows each parameter's offset and size: a signature that disagrees is caught here, not as corrupt arguments. */
  #checkLayout(): void {
    for (let i = 0; i <= this.params.length; i++) {
      // Past the last parameter (or where the driver cannot say) the driver answers with an error.
      const info = bestEffort(() => cu().cuFuncGetParamInfo(this.function, i), undefined);
      if (i === this.params.length) {
        if (info !== undefined)
          throw new TypeError(
            `kernel "${this.name}" takes more than the ${this.params.length} parameter(s) given: (${this.params.join(', ')})`,
          );
        return;
      }
      if (info === undefined) {
        if (i === 0 && this.params.length > 0) return; // driver without parameter introspection
        throw new TypeError(
          `kernel "${this.name}" takes ${i} parameter(s), not ${this.params.length}: (${this.params.join(', ')})`,
        );
      }
      const [size, offset] = [Number(info.paramSize), Number(info.paramOffset)];
      if (size !== PARAM_BYTES[this.params[i]!] || offset !== this.#offsets[i]) {
        throw new TypeError(
          `kernel "${this.name}" parameter ${i} is ${size} bytes at offset ${offset}, but was declared ${this.params[i]}`,
        );
      }
    }
  }

  get attributes(): KernelAttributes {
    this.#alive();
    return kernelAttributes(this.function, this.name);
  }

  /** Allows launches with up to `bytes` of dynamic shared memory (above the 48 KiB default; at most the device's opt-in limit less the kernel's static shared memory). */
  setMaxDynamicSharedMemory(bytes: number): void {
    this.#alive();
    const max =
      this.#limits.maxShared - kernelAttribute(this.function, this.name, FA.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 0 || bytes > max)
      throw new RangeError(
        `kernel "${this.name}": dynamic shared memory ${String(bytes)} is outside 0..${max} bytes (the device's opt-in limit less the kernel's static shared memory)`,
      );
    this.context.makeCurrent();
    cu().cuFuncSetAttribute(this.function, FA.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes, this.name);
    this.#dynamicSharedLimit = bytes;
  }

  /** Throws DisposedError naming this kernel, and its module when that is why. */
  #alive(): void {
    if (this.disposed)
      throw new DisposedError(
        `Kernel "${this.name}" was disposed${this.module.disposed ? ` (its module "${this.module.label}" was disposed)` : ''} and cannot be used`,
      );
  }

  /** Resident blocks per multiprocessor at this block size. */
  maxActiveBlocksPerMultiprocessor(blockSize: number, dynamicSharedBytes = 0): number {
    this.#alive();
    return activeBlocksPerMultiprocessor(this.function, this.name, this.#limits, blockSize, dynamicSharedBytes);
  }

  /** The block size that maximizes occupancy, and the smallest grid that fills the device with it. */
  suggestedLaunch(dynamicSharedBytes = 0, blockSizeLimit = 0): { minGridSize: number; blockSize: number } {
    this.#alive();
    return occupancyLaunch(this.function, this.name, this.#limits, dynamicSharedBytes, blockSizeLimit);
  }

  #writeArgs(args: readonly KernelArg[]): void {
    if (!Array.isArray(args)) throw new TypeError(`kernel "${this.name}": arguments must be an array`);
    if (args.length !== this.params.length)
      throw new TypeError(
        `kernel "${this.name}" takes ${this.params.length} argument(s) (${this.params.join(', ')}), got ${args.length}`,
      );
    for (let i = 0; i < args.length; i++) this.setArg(i, args[i]!);
  }

  /**
   * Writes argument `index` into the kernel's parameter block, where it stays until overwritten:
   * fixed-arity callers (the generated launchers) set each argument and then call
   * launchPrepared(), with no array built per launch.
   */
  setArg(index: number, a: KernelArg): void {
    // The parameter block is freed with the kernel (and with its module): never write after that.
    if (this.disposed) this.#alive();
    const params = this.params;
    if (!(Number.isInteger(index) && index >= 0 && index < params.length))
      throw new RangeError(`kernel "${this.name}" has no argument ${String(index)} (it takes ${params.length})`);
    const type = params[index]!;
    const off = this.#offsets[index]!;
    if (type !== 'ptr') {
      writeScalar(this.#view, off, type, a, this.#argNames[index]!);
      return;
    }
    let addr: number;
    if (a instanceof DeviceBuffer) {
      // Made with Object.create(DeviceBuffer.prototype): no private brand, no real address behind it.
      if (!Resource.isResource(a))
        throw new TypeError(
          `kernel "${this.name}" argument ${index} (ptr): expected a DeviceBuffer or a device address, got ${describeValue(a)}`,
        );
      try {
        a.checkUsable();
      } catch (e) {
        if (e instanceof DisposedError)
          throw new DisposedError(`kernel "${this.name}" argument ${index}: ${e.message}`);
        throw e;
      }
      if (a.context !== this.context)
        throw new TypeError(
          `kernel "${this.name}" argument ${index}: buffer "${a.label}" belongs to ${a.context.label}, the kernel to ${this.context.label}`,
        );
      addr = a.address;
      this.#bufferArgs[index] = a;
    } else if (typeof a === 'number') {
      // A raw address must be one: a fraction or NaN would otherwise become some other address.
      addr = checkAddress(a, this.#argNames[index]!, true);
      this.#bufferArgs[index] = undefined;
    } else {
      throw new TypeError(
        `kernel "${this.name}" argument ${index} (ptr): expected a DeviceBuffer or a device address, got ${describeValue(a)}`,
      );
    }
    writeAddress(this.#view, off, addr);
  }

  #prepare(config: LaunchConfig, args: readonly KernelArg[] | null): void {
    this.#alive();
    if (typeof config !== 'object' || config === null)
      throw new TypeError(
        `kernel "${this.name}": the launch config must be an object { grid, block, sharedMemBytes?, stream? }, got ${describeValue(config)}`,
      );
    parseDim3(config.block, 'block', this.#limits.maxBlock, this.name);
    bx = dims[0]!;
    by = dims[1]!;
    bz = dims[2]!;
    if (bx * by * bz > this.#limits.maxThreads)
      throw new RangeError(
        `kernel "${this.name}": block of ${bx * by * bz} threads exceeds its limit of ${this.#limits.maxThreads}`,
      );
    parseDim3(config.grid, 'grid', this.#limits.maxGrid, this.name);
    const shared = config.sharedMemBytes ?? 0;
    if (typeof shared !== 'number' || !Number.isInteger(shared) || shared < 0 || shared > this.#dynamicSharedLimit) {
      const more =
        shared > this.#dynamicSharedLimit && shared <= this.#limits.maxShared
          ? `; call setMaxDynamicSharedMemory(${shared}) first`
          : '';
      throw new RangeError(
        `kernel "${this.name}": dynamic shared memory ${String(shared)} is outside 0..${this.#dynamicSharedLimit} bytes${more}`,
      );
    }
    if (args) this.#writeArgs(args);
  }

  /** Launches on `config.stream` with these arguments. Validates dimensions and arguments first. */
  launch(config: LaunchConfig, ...args: KernelArgs<P>): void {
    this.#prepare(config, args);
    this.#launch(config, resolveStream(this.context, config.stream));
  }

  /** The native `void*[]` of argument slots (what cuLaunchKernel and graph kernel nodes take). */
  get parameterArray(): bigint {
    this.#alive();
    return this.#paramArray;
  }

  /** Writes all arguments (checked against the signature) without launching. */
  setArgs(...args: KernelArgs<P>): void {
    this.#alive();
    this.#writeArgs(args);
  }

  /** Launches with the arguments last written by setArg() (or the last launch): the allocation-free path. */
  launchPrepared(config: LaunchConfig): void {
    this.#prepare(config, null);
    this.#launch(config, resolveStream(this.context, config.stream));
  }

  #launch(config: LaunchConfig, stream: Stream): void {
    if (!isLive<Stream>(stream, 'Stream')) expectResource(stream, Stream, `kernel "${this.name}" launch stream`);
    if (stream.context !== this.context)
      throw new TypeError(`kernel "${this.name}" cannot launch on stream "${stream.label}" of another context`);
    const sh = stream.use();
    hot().launchKernel(
      this.function,
      dims[0]!,
      dims[1]!,
      dims[2]!,
      bx,
      by,
      bz,
      config.sharedMemBytes ?? 0,
      sh,
      this.#paramArray,
      null,
      launchDuring,
      this,
      stream,
    );
    this.#recordUses(stream);
  }

  /** The buffers among the arguments are used on `stream` now: their stream-ordered frees wait for it. */
  #recordUses(stream: Stream): void {
    const buffers = this.#bufferArgs;
    for (let i = 0; i < buffers.length; i++) buffers[i]?.recordUse(stream);
  }

  /** cuLaunchKernelEx: clusters (sm_90) and cooperative launches. */
  launchEx(config: ExtendedLaunchConfig, ...args: KernelArgs<P>): void {
    this.#prepare(config, args);
    const [gx, gy, gz] = [dims[0]!, dims[1]!, dims[2]!];
    const attrs = launchAttributes(config, this.name);
    // The type is known to koffi once the driver's bindings are loaded, not when this module is.
    const attrSize = koffi.sizeof('CUlaunchAttribute_st');
    const attrPtr = attrs.length ? (koffi.alloc('uint8', attrSize * attrs.length) as bigint) : null;
    try {
      attrs.forEach((a, i) =>
        koffi.encode(attrPtr!, i * attrSize, 'CUlaunchAttribute_st', {
          id: a.id,
          pad: new Uint8Array(4),
          value: a.value,
        }),
      );
      const resolved = resolveStream(this.context, config.stream);
      const stream = isLive<Stream>(resolved, 'Stream')
        ? resolved
        : expectResource(resolved, Stream, `kernel "${this.name}" launch stream`);
      if (stream.context !== this.context)
        throw new TypeError(`kernel "${this.name}" cannot launch on stream "${stream.label}" of another context`);
      const sh = stream.use();
      const launchConfig = {
        gridDimX: gx,
        gridDimY: gy,
        gridDimZ: gz,
        blockDimX: bx,
        blockDimY: by,
        blockDimZ: bz,
        sharedMemBytes: config.sharedMemBytes ?? 0,
        hStream: sh,
        attrs: attrPtr,
        numAttrs: attrs.length,
      };
      cu().cuLaunchKernelEx(launchConfig as never, this.function, this.#paramArray, null, kernelDuring, this);
      this.#recordUses(stream);
    } finally {
      if (attrPtr !== null) koffi.free(attrPtr);
    }
  }

  protected releaseNative(): void {
    koffi.free(this.#block);
    koffi.free(this.#paramArray);
  }
}

/** Block dimensions of the launch being prepared (dims is overwritten by the grid's). */
let bx = 1;
let by = 1;
let bz = 1;

// What a failed launch was doing, built only when it fails (src/ffi/checked-call.ts).
const kernelDuring = (kernel: { readonly name: string }): string => `kernel "${kernel.name}"`;
const launchDuring = (kernel: { readonly name: string }, stream: Stream): string =>
  `kernel "${kernel.name}" on stream "${stream.label}"`;
