/**
 * The signal layer's immutable device tables of one context (windows, band ranges, wavelet banks),
 * built once and kept for later calls, within a bound on their bytes: a server that sees many
 * series lengths would otherwise keep a window of every length it ever saw. Past the bound the
 * table used longest ago is freed (cuMemFree, which waits for the work using it) and built again
 * when it is next needed; the owner hears of each free, so graphs captured with the table's
 * address are captured again.
 */
import type { Context } from '../runtime/context.js';
import { Event } from '../runtime/event.js';
import { leastRecentlyUsed, type Used } from '../runtime/least-recent.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import type { Stream } from '../runtime/stream.js';

/** Bytes of tables a context keeps by default (per context). */
export const DEFAULT_MAX_TABLE_BYTES = 256 * 2 ** 20;

/**
 * Tables handed out this recently are never freed to make room: a call may take a few tables
 * (a wavelet bank and its band indices) before it enqueues the kernel that reads them.
 */
const KEEP_RECENT = 8;

interface Entry extends Used {
  readonly buffer: DeviceBuffer<DType>;
  /** The stream its build was enqueued on, and an event after it (until the build is known done). */
  readonly stream: Stream;
  event: Event | undefined;
}

/** One context's tables (see the file's comment). */
export class TableCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  #clock = 0;
  /** Tables freed to stay within maxBytes. */
  evictions = 0;

  /** `onFreed` runs whenever a table handed out before goes away (its address may be in a captured graph). */
  constructor(
    readonly context: Context,
    readonly maxBytes: number,
    private readonly onFreed: () => void,
  ) {}

  /** Bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Tables held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The table under `key` when `stream` may use it with nothing to wait for (built on `stream`, or its build long finished). */
  ready<T extends DType>(key: string, stream: Stream): DeviceBuffer<T> | undefined {
    const have = this.#entries.get(key);
    if (!have || have.buffer.disposed || (have.event !== undefined && have.stream !== stream)) return undefined;
    have.used = ++this.#clock;
    return have.buffer as DeviceBuffer<T>;
  }

  /**
   * The table under `key`: `make` allocates it and `build` enqueues its filling on `stream`, once.
   * Later users on other streams wait for that work (cuStreamWaitEvent on an event recorded after
   * it; a user on a context's default stream waits the same way, in that stream's order).
   */
  built<T extends DType>(
    key: string,
    stream: Stream,
    make: () => DeviceBuffer<T>,
    build: (buffer: DeviceBuffer<T>) => void,
  ): DeviceBuffer<T> {
    const ready = this.ready<T>(key, stream);
    if (ready) return ready;
    const have = this.#entries.get(key);
    if (have && !have.buffer.disposed) {
      if (have.event && have.stream !== stream) {
        if (have.event.query()) {
          // Built long ago: nobody needs to wait any more.
          have.event.dispose();
          have.event = undefined;
        } else stream.waitEvent(have.event);
      }
      have.used = ++this.#clock;
      return have.buffer as DeviceBuffer<T>;
    }
    if (have) {
      // Disposed from outside: rebuilt at a new address.
      this.#forget(key, have);
      this.onFreed();
    }
    const buffer = make();
    build(buffer);
    // Recorded on the default stream too: a build enqueued there (a GPU-filled table) is not ordered before work on other streams.
    const event = new Event({ context: this.context, label: `built ${key.slice(0, 40)}` });
    event.record(stream);
    this.#entries.set(key, { buffer: buffer as DeviceBuffer<DType>, stream, event, used: ++this.#clock });
    this.#bytes += buffer.byteLength;
    this.#trim();
    return buffer;
  }

  /** Frees tables used longest ago until the rest fit in maxBytes (the last KEEP_RECENT handed out stay). */
  #trim(): void {
    while (this.#bytes > this.maxBytes) {
      const oldestKey = leastRecentlyUsed(this.#entries, this.#clock - KEEP_RECENT + 1);
      if (oldestKey === undefined) return;
      const entry = this.#entries.get(oldestKey)!;
      this.#forget(oldestKey, entry);
      entry.event?.dispose();
      entry.buffer.dispose();
      this.evictions++;
      this.onFreed();
    }
  }

  #forget(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.buffer.byteLength;
  }

  /** Frees every table. No work using them may be in flight. */
  clear(): void {
    for (const entry of this.#entries.values()) {
      entry.buffer.dispose();
      entry.event?.dispose();
    }
    this.#entries.clear();
    this.#bytes = 0;
  }
}
