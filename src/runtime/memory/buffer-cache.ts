/**
 * Reusable memory by purpose: device buffers, pinned host buffers and staged pairs kept from one
 * use to the next and grown (never shrunk) when a bigger use comes, all freed with the cache.
 * Allocating per use costs a driver call (pinned memory: about 1 ms per 10–100 MB) and a pinned
 * free waits for the whole device; a cache of what the last use needed makes a steady stream of
 * similar work allocate nothing. The engine's lanes keep their buffers here (one cache per lane),
 * the pipeline's batch dispatchers their staging.
 *
 * Who may touch a buffer when is the caller's rule, in two forms:
 * - a buffer without a slot belongs to the cache's stream: allocated and freed stream-ordered on
 *   it, used only there, so work of several uses shares it in stream order and a replaced one is
 *   freed behind the work that used it;
 * - a buffer with a slot (one slot per use in flight) is allocated at once, usable from any
 *   stream; the caller asks for a slot's buffer again only once that slot's previous use has
 *   completed, since a bigger request frees the old buffer at once.
 */
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { expectResource, Resource } from '../resource.js';
import { Stream } from '../stream.js';
import { DeviceBuffer } from './device-buffer.js';
import type { DType } from './dtype.js';
import { HostBuffer } from './host-buffer.js';
import { StagedBuffer } from './staged-buffer.js';

/** Growth beyond what was asked, so that slowly growing requests do not reallocate every time. */
export const DEFAULT_BUFFER_GROWTH = 1.25;

/** How a BufferCache is made. `device` / `context`: where its memory lives (default: the stream's context, else device 0). */
export interface BufferCacheDescriptor extends Placement {
  /** The stream that device buffers without a slot are allocated, used and freed on (stream-ordered). Without it, every device buffer needs a slot. */
  stream?: Stream | undefined;
  /** A buffer that must grow grows to at least this many times its old length (default DEFAULT_BUFFER_GROWTH, at least 1). */
  growth?: number | undefined;
  /** Names every buffer: "<label> <purpose>[ slot <n>]", "<label> pinned <purpose>". */
  label?: string | undefined;
}

/** Options of BufferCache.device(). */
export interface CachedDeviceOptions {
  /** The use in flight the buffer belongs to (see the file's comment); without it, the buffer is the stream's. */
  slot: number;
}

/** Device, pinned and staged buffers by purpose (and slot), grown on demand and freed together. */
export class BufferCache extends Resource {
  /** Where every buffer of the cache lives. */
  readonly context: Context;
  readonly #device = new Map<string, DeviceBuffer<DType>>();
  readonly #host = new Map<string, HostBuffer<DType>>();
  readonly #staged = new Map<string, StagedBuffer<DType>>();
  readonly #stream: Stream | undefined;
  readonly #growth: number;
  #deviceBytes = 0;
  #hostBytes = 0;
  #generation = 0;
  #allocationRefused: string | undefined;

  constructor(descriptor: BufferCacheDescriptor = {}) {
    super('BufferCache', descriptor.label);
    const growth = descriptor.growth ?? DEFAULT_BUFFER_GROWTH;
    if (typeof growth !== 'number' || !(growth >= 1) || !Number.isFinite(growth))
      throw new RangeError(
        `BufferCache "${this.label}": growth must be a finite number of at least 1, got ${String(growth)}`,
      );
    const stream =
      descriptor.stream === undefined
        ? undefined
        : expectResource(descriptor.stream, Stream, `BufferCache "${this.label}" stream`);
    // The stream's context, where `device` / `context` name no other (resolveContext refuses a mismatch).
    this.context = resolveContext(descriptor, stream);
    this.#stream = stream;
    this.#growth = growth;
  }

  /** Device bytes held now (device buffers and the device halves of staged pairs). */
  get deviceBytes(): number {
    return this.#deviceBytes;
  }

  /** Pinned host bytes held now (host buffers and the host halves of staged pairs). */
  get hostBytes(): number {
    return this.#hostBytes;
  }

  /**
   * A device buffer of `dtype` viewed to exactly `length` elements, reused across uses. Without a
   * slot it is the stream's (stream-ordered); with `slot` it is allocated at once and is that
   * slot's (see the file's comment).
   */
  device<T extends DType>(purpose: string, dtype: T, length: number, options?: CachedDeviceOptions): DeviceBuffer<T> {
    this.assertAlive();
    const slot = options?.slot;
    const key = slot === undefined ? `${purpose}:${dtype}` : `${purpose}:${dtype}:slot ${slot}`;
    let b = this.#device.get(key) as DeviceBuffer<T> | undefined;
    if (!b || b.length < length) {
      if (this.#allocationRefused !== undefined)
        throw new Error(
          `BufferCache "${this.label}": device buffer "${purpose}" would be allocated while ${this.#allocationRefused}`,
        );
      const size = b ? this.#grown(b.length, length) : length;
      if (b) {
        this.#deviceBytes -= b.byteLength;
        b.dispose();
        this.#generation++;
      }
      const label = `${this.label} ${purpose}${slot === undefined ? '' : ` slot ${slot}`}`;
      if (slot === undefined) {
        const stream = this.#stream;
        if (stream === undefined)
          throw new TypeError(
            `BufferCache "${this.label}": device buffer "${purpose}" needs a slot (the cache has no stream)`,
          );
        b = DeviceBuffer.alloc(dtype, size, { stream, label });
      } else b = DeviceBuffer.alloc(dtype, size, { context: this.context, label });
      this.#deviceBytes += b.byteLength;
      this.#device.set(key, b as DeviceBuffer<DType>);
    }
    return b.length === length ? b : b.view(0, length);
  }

  /**
   * A pinned host buffer of at least `length` elements, reused across uses; `slot` keeps one per
   * use in flight (the host reads a finished use's buffer while the next use's copies into its
   * own slot's buffer may already run).
   */
  host<T extends DType>(purpose: string, dtype: T, length: number, slot = 0): HostBuffer<T> {
    this.assertAlive();
    const key = `${purpose}:${dtype}:${slot}`;
    let b = this.#host.get(key) as HostBuffer<T> | undefined;
    if (!b || b.length < length) {
      const size = b ? this.#grown(b.length, length) : length;
      if (b) {
        this.#hostBytes -= b.byteLength;
        b.dispose();
      }
      b = HostBuffer.alloc(dtype, size, { context: this.context, label: `${this.label} pinned ${purpose}` });
      this.#hostBytes += b.byteLength;
      this.#host.set(key, b as HostBuffer<DType>);
    }
    return b;
  }

  /**
   * A staged pair (a device buffer and its pinned staging of the same length) of at least `length`
   * elements, one per `slot`, allocated at once like a slot's device buffer: copy a prefix with
   * `upload(stream, { length })` / `download(stream, { length })`.
   */
  staged<T extends DType>(purpose: string, dtype: T, length: number, slot = 0): StagedBuffer<T> {
    this.assertAlive();
    const key = `${purpose}:${dtype}:${slot}`;
    let b = this.#staged.get(key) as StagedBuffer<T> | undefined;
    if (!b || b.length < length) {
      const size = b ? this.#grown(b.length, length) : length;
      if (b) {
        this.#deviceBytes -= b.byteLength;
        this.#hostBytes -= b.byteLength;
        b.dispose();
        this.#generation++;
      }
      b = StagedBuffer.alloc(dtype, size, { context: this.context, label: `${this.label} ${purpose} slot ${slot}` });
      this.#deviceBytes += b.byteLength;
      this.#hostBytes += b.byteLength;
      this.#staged.set(key, b as StagedBuffer<DType>);
    }
    return b;
  }

  /**
   * Counts the device buffers replaced by bigger ones (their memory freed): work that holds raw
   * addresses of this cache's buffers (a captured CUDA graph) is stale once it changes.
   */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Runs `fn` with device allocations refused (a device() call that would allocate throws an Error
   * naming `while`): for work captured into a CUDA graph, where an allocation on the cache's stream
   * would become the graph's own memory.
   */
  withoutAllocation<T>(fn: () => T, during: string): T {
    const before = this.#allocationRefused;
    this.#allocationRefused = during;
    try {
      return fn();
    } finally {
      this.#allocationRefused = before;
    }
  }

  #grown(had: number, wanted: number): number {
    return Math.max(wanted, Math.ceil(had * this.#growth));
  }

  /** Frees every buffer it holds (each stream's buffers stream-ordered, behind the work that used them); the first failure is thrown once all were tried. */
  protected releaseNative(): void {
    let first: unknown;
    for (const b of [...this.#device.values(), ...this.#host.values(), ...this.#staged.values()]) {
      try {
        if (!b.disposed) b.dispose();
      } catch (e) {
        first ??= e;
      }
    }
    this.#device.clear();
    this.#host.clear();
    this.#staged.clear();
    this.#deviceBytes = 0;
    this.#hostBytes = 0;
    if (first !== undefined) throw first;
  }
}
