import { cu } from '../../ffi/checked.js';
import koffi from 'koffi';
import { toAddress } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { type DType, dtypeInfo, type HostArray, hostElements } from './dtype.js';
import { checkDType } from './dtype-check.js';
import { HostPages } from './host-pages.js';
import { givePinned, takePinned } from './pinned-cache.js';
import { forgetFinishedStreams } from './stream-uses.js';
import { processLost } from '../../ffi/sticky.js';
import { checkLabel, describeValue, Resource } from '../resource.js';
import type { Stream } from '../stream.js';
import { positiveInteger } from '../value-checks.js';

/** Streams that enqueued copies from or into a host buffer (`recordUse`): its memory goes back only after them. */
interface HostUses {
  streams: Set<Stream> | undefined;
}

/**
 * Runs `release` (free or unregister the pages) once every stream that used the memory is past
 * that use: at once when none did (or the context is lost), else when each one's completion
 * event, recorded now, has completed (the poller; nothing blocks). A failure then is a process
 * warning, never swallowed.
 */
function afterUses(uses: HostUses, context: Context, release: () => void): void {
  const streams = uses.streams;
  uses.streams = undefined;
  const run = (): void => {
    if (!context.disposed && !context.stickyError) context.makeCurrent();
    release();
  };
  if (!streams || streams.size === 0 || context.stickyError) return run();
  const waits = [...streams].map((s) => {
    if (!s.disposed) return s.done();
    const retired = s.retiredEvent;
    return retired === undefined ? Promise.resolve() : context.completion.track(retired as unknown as bigint, retired);
  });
  void Promise.allSettled(waits).then(() => {
    try {
      run();
    } catch (e) {
      if (!processLost())
        process.emitWarning(
          `tscuda: releasing host memory after its last copy failed: ${e instanceof Error ? e.message : String(e)}`,
          { code: 'TSCUDA_RELEASE_FAILED' },
        );
    }
  });
}

/** cuMemHostAlloc flags (CU_MEMHOSTALLOC_*; macros, so not in the generated enums). */
const PORTABLE = 0x01;
const DEVICEMAP = 0x02;
const WRITECOMBINED = 0x04;
/** cuMemHostRegister flags (CU_MEMHOSTREGISTER_*). */
const REGISTER_PORTABLE = 0x01;
const REGISTER_DEVICEMAP = 0x02;

/** Options of `HostBuffer.alloc` and `HostBuffer.register` (which takes no `writeCombined`): the context it is pinned for (Placement; default device 0), the cuMemHostAlloc flags, and a label. */
export interface HostBufferDescriptor extends Placement {
  /** Pinned for every context, not only the allocating one. */
  portable?: boolean | undefined;
  /** Mapped into the device address space (`devicePointer`). */
  mapped?: boolean | undefined;
  /** Write-combined: fast host writes and H2D copies, very slow host reads. */
  writeCombined?: boolean | undefined;
  label?: string | undefined;
}

/**
 * Page-locked host memory whose contents are a zero-copy TypedArray (`array`).
 *
 * The array never outlives its memory: the pages are freed once the HostBuffer is disposed (or
 * collected) and every array read from `array` has been collected. An array kept after dispose()
 * stays a valid window onto pages that nothing else is given; dispose() frees at once when
 * `array` was never read, else when the last array is collected.
 */
export class HostBuffer<T extends DType = DType> extends Resource {
  readonly isHostBuffer = true;
  readonly dtype: T;
  readonly length: number;
  readonly byteLength: number;
  /** Host address, as a number. */
  readonly address: number;
  readonly context: Context;
  /** The array handed out (a registered buffer's is the caller's own array). */
  #array: HostArray<T> | undefined;
  /** Pinned pages of an allocated buffer, freed when this buffer and its arrays are gone; undefined when registered. */
  readonly #pages: HostPages | undefined;
  readonly registered: boolean;
  readonly #mapped: boolean;
  readonly #uses: HostUses = { streams: undefined };

  private constructor(
    dtype: T,
    length: number,
    address: number,
    array: HostArray<T> | undefined,
    context: Context,
    registered: boolean,
    mapped: boolean,
    label: string | undefined,
    allocFlags = 0,
  ) {
    super(registered ? 'HostBuffer (registered)' : 'HostBuffer', label, 'HostBuffer');
    this.dtype = dtype;
    this.length = length;
    this.byteLength = length * dtypeInfo(dtype).bytes;
    this.address = address;
    this.#array = array;
    this.context = context;
    this.registered = registered;
    this.#mapped = mapped;
    const uses = this.#uses;
    if (registered) {
      this.#pages = undefined;
      this.track(() => afterUses(uses, context, () => cu().cuMemHostUnregister(address, label)));
    } else {
      // Back to the pinned cache (pinned-cache.ts), not cuMemFreeHost: that waits for the device, and this may run from the garbage collector.
      const bytes = this.byteLength;
      const pages = new HostPages(address, bytes, () => givePinned(context, address, bytes, allocFlags));
      this.#pages = pages;
      this.track(() => afterUses(uses, context, () => pages.drop()));
    }
  }

  /**
   * Notes that `stream` has a copy from or into this memory enqueued, so freeing (or
   * unregistering) it waits for that stream. tscuda calls it for its own asynchronous copies.
   */
  recordUse(stream: Stream): void {
    const used = (this.#uses.streams ??= new Set());
    if (used.size >= 16 && !used.has(stream)) forgetFinishedStreams(used);
    used.add(stream);
  }

  /**
   * Allocates pinned memory: pages of the same size given back earlier are reused (pinned-cache.ts),
   * else cuMemHostAlloc, which blocks for about 1 ms per 10–100 MB while the OS pins the pages.
   * Disposed or collected pages go back to that cache, not to the OS: `trimPinnedCache()` frees them.
   */
  static alloc<T extends DType>(dtype: T, length: number, descriptor: HostBufferDescriptor = {}): HostBuffer<T> {
    checkDType(dtype, 'HostBuffer.alloc');
    positiveInteger(length, 'HostBuffer length');
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`HostBuffer.alloc takes a descriptor object, got ${describeValue(descriptor)}`);
    checkLabel(descriptor.label, 'HostBuffer.alloc');
    const info = dtypeInfo(dtype);
    const bytes = length * info.bytes;
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const flags =
      (descriptor.portable ? PORTABLE : 0) |
      (descriptor.mapped ? DEVICEMAP : 0) |
      (descriptor.writeCombined ? WRITECOMBINED : 0);
    let address = takePinned(context, bytes, flags);
    if (address === undefined) {
      address = toAddress(
        cu().cuMemHostAlloc(
          bytes,
          flags,
          `pinning ${bytes} bytes${descriptor.label ? ` for "${descriptor.label}"` : ''}`,
        ),
      );
    }
    return new HostBuffer(
      dtype,
      length,
      address,
      undefined,
      context,
      false,
      !!descriptor.mapped,
      descriptor.label,
      flags,
    );
  }

  /**
   * Pins memory the caller already has (cuMemHostRegister), so copies from it run at pinned speed.
   * The array must stay reachable while registered; dispose() unregisters it.
   */
  static register<T extends DType>(
    dtype: T,
    array: HostArray<T>,
    descriptor: Omit<HostBufferDescriptor, 'writeCombined'> = {},
  ): HostBuffer<T> {
    checkDType(dtype, 'HostBuffer.register');
    if (!ArrayBuffer.isView(array) || array instanceof DataView)
      throw new TypeError(`HostBuffer.register: expected a TypedArray, got ${describeValue(array)}`);
    if (typeof descriptor !== 'object' || descriptor === null)
      throw new TypeError(`HostBuffer.register takes a descriptor object, got ${describeValue(descriptor)}`);
    checkLabel(descriptor.label, 'HostBuffer.register');
    const length = hostElements(dtype, array, 'HostBuffer.register');
    positiveInteger(length, 'registered array length');
    const context = resolveContext(descriptor);
    context.makeCurrent();
    const flags = (descriptor.portable ? REGISTER_PORTABLE : 0) | (descriptor.mapped ? REGISTER_DEVICEMAP : 0);
    cu().cuMemHostRegister(array, array.byteLength, flags, descriptor.label);
    const address = toAddress(koffi.address(array) as bigint | number);
    const buffer = new HostBuffer(dtype, length, address, array, context, true, !!descriptor.mapped, descriptor.label);
    return buffer;
  }

  /**
   * The memory itself, viewed as the dtype's TypedArray (no copy; the same array each time). It
   * keeps the pages alive: kept past dispose() (or past this buffer becoming unreachable) it still
   * views pinned memory that nothing else is given, freed when the array is collected.
   */
  get array(): HostArray<T> {
    this.assertAlive();
    if (this.#array) return this.#array;
    return (this.#array = new (dtypeInfo(this.dtype).array)(this.#pages!.buffer()) as HostArray<T>);
  }

  /** The device address of mapped memory (`mapped: true`). */
  get devicePointer(): number {
    this.checkUsable();
    if (!this.#mapped) throw new Error(`host buffer "${this.label}" is not mapped; allocate it with mapped: true`);
    return toAddress(cu().cuMemHostGetDevicePointer(this.address, 0));
  }

  /** Throws DisposedError naming this buffer if it was disposed: what copies and kernels call before using its pages (DeviceBuffer's twin also checks a stream). */
  checkUsable(): void {
    this.assertAlive();
  }

  /**
   * Unregisters, or drops this buffer's hold on its pages (freed once no array views them), after
   * the asynchronous copies enqueued with it have completed.
   */
  protected releaseNative(): void {
    this.#array = undefined;
    const address = this.address;
    const label = this.label;
    const pages = this.#pages;
    afterUses(this.#uses, this.context, pages ? () => pages.drop() : () => cu().cuMemHostUnregister(address, label));
  }
}
