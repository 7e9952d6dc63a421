/**
 * A lane's reusable memory: device buffers and pinned host buffers by purpose, grown (never
 * shrunk) when a bigger job arrives, freed with the lane. Intermediate device buffers are shared
 * by the jobs in flight on the lane: they run on its stream in order, and a replaced buffer is
 * freed stream-ordered behind the work that used it. What the copy streams touch (inputs,
 * results, pinned staging) is kept per slot (one per job in flight), and a slot's buffers are
 * replaced only once its previous job has completed.
 */
import type { Context } from '../runtime/context.js';
import { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { DType } from '../runtime/memory/dtype.js';
import { HostBuffer } from '../runtime/memory/host-buffer.js';
import type { Stream } from '../runtime/stream.js';

/** Grows by this factor beyond what was asked, so slowly growing jobs do not reallocate every time. */
const GROWTH = 1.25;

/** Device and pinned buffers of one lane, by purpose. */
export class LaneBuffers {
  readonly #device = new Map<string, DeviceBuffer<DType>>();
  readonly #host = new Map<string, HostBuffer<DType>>();
  readonly #context: Context;
  readonly #stream: Stream;
  readonly #label: string;
  /** Bytes allocated now (device, pinned). */
  deviceBytes = 0;
  hostBytes = 0;

  constructor(context: Context, stream: Stream, label: string) {
    this.#context = context;
    this.#stream = stream;
    this.#label = label;
  }

  /**
   * A device buffer of `dtype` viewed to exactly `length` elements, reused across jobs. Without a
   * slot it is the lane's, allocated stream-ordered on the lane's stream and used only there. With
   * `slot`, one per job in flight, allocated at once (usable from any stream: the copy streams read
   * and write it) and replaced only once its slot's previous job has completed.
   */
  device<T extends DType>(purpose: string, dtype: T, length: number, options?: { slot: number }): DeviceBuffer<T> {
    const slot = options?.slot;
    const key = slot === undefined ? `${purpose}:${dtype}` : `${purpose}:${dtype}:slot ${slot}`;
    let b = this.#device.get(key) as DeviceBuffer<T> | undefined;
    if (!b || b.length < length) {
      const size = b ? Math.max(length, Math.ceil(b.length * GROWTH)) : length;
      if (b) {
        this.deviceBytes -= b.byteLength;
        b.dispose();
      }
      const label = `${this.#label} ${purpose}${slot === undefined ? '' : ` slot ${slot}`}`;
      b = slot === undefined ? DeviceBuffer.alloc(dtype, size, { stream: this.#stream, label }) : DeviceBuffer.alloc(dtype, size, { context: this.#context, label });
      this.deviceBytes += b.byteLength;
      this.#device.set(key, b as DeviceBuffer<DType>);
    }
    return b.length === length ? b : b.view(0, length);
  }

  /**
   * A pinned host buffer of at least `length` elements, reused across jobs. `slot` keeps one per
   * job in flight on the lane: the host reads a finished job's staging while the next job's copies
   * into its own slot's staging may already run.
   */
  host<T extends DType>(purpose: string, dtype: T, length: number, slot = 0): HostBuffer<T> {
    const key = `${purpose}:${dtype}:${slot}`;
    let b = this.#host.get(key) as HostBuffer<T> | undefined;
    if (!b || b.length < length) {
      const size = b ? Math.max(length, Math.ceil(b.length * GROWTH)) : length;
      if (b) {
        this.hostBytes -= b.byteLength;
        b.dispose();
      }
      b = HostBuffer.alloc(dtype, size, { context: this.#context, label: `${this.#label} pinned ${purpose}` });
      this.hostBytes += b.byteLength;
      this.#host.set(key, b as HostBuffer<DType>);
    }
    return b;
  }

  dispose(): void {
    let first: unknown;
    for (const b of [...this.#device.values(), ...this.#host.values()]) {
      try {
        if (!b.disposed) b.dispose();
      } catch (e) {
        first ??= e;
      }
    }
    this.#device.clear();
    this.#host.clear();
    this.deviceBytes = 0;
    this.hostBytes = 0;
    if (first !== undefined) throw first;
  }
}
