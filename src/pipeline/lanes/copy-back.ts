/**
 * How a lane's results come back to the host, and how a lent input goes out: an array the lane's
 * owner lent (pinned memory, `lane.pinned`; the job engine's `hostBuffer()`) of the device
 * buffer's type is copied into straight by the DMA engine; any other goes through the slot's
 * pinned staging (the lane's BufferCache) and a host copy once the slot's work has completed
 * (runtime/memory/host-copy.ts, off the event loop for large arrays).
 */
import type { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { dtypeInfo, type DType } from '../../runtime/memory/dtype.js';
import type { HostBuffer } from '../../runtime/memory/host-buffer.js';
import { copyHostArray } from '../../runtime/memory/host-copy.js';
import type { LaneView, PinnedArrays } from './lane-view.js';

/** Any host array a lane copies between (results, inputs, staging). */
export type HostSide = Float32Array | Float64Array | Int16Array | Uint16Array;

/**
 * A pinned buffer's array as the lane copies it: f16 memory as raw bits (a Uint16Array, also where
 * the runtime's f16 array is a Float16Array), so copies between it and a caller's arrays move bits.
 */
export function rawArray(host: HostBuffer<DType>): HostSide {
  const a = host.array as unknown as HostSide;
  return host.dtype === 'f16' && !(a instanceof Uint16Array) ? new Uint16Array(a.buffer, a.byteOffset, a.length) : a;
}

/**
 * The pinned buffer behind `array` when the lane's owner lent it (`pinned`) holding `dtype`, and
 * the element offset of `array` in it.
 */
export function pinnedView(
  pinned: PinnedArrays,
  array: HostSide,
  dtype: DType,
): { host: HostBuffer<DType>; offset: number } | undefined {
  const host = pinned.get(array.buffer);
  // The array's own element size too: a float64 view of float32 pinned memory is not that memory's layout.
  if (!host || host.disposed || host.dtype !== dtype || array.BYTES_PER_ELEMENT !== dtypeInfo(dtype).bytes)
    return undefined;
  return { host, offset: array.byteOffset / array.BYTES_PER_ELEMENT };
}

/**
 * One slot's copies back: gathered while its compute is enqueued, enqueued together on the
 * copy-out stream once the compute is all enqueued (`enqueue()`), and the host's share run once the
 * slot's finished event has completed (`finish()`).
 */
export class CopyBack {
  /** Bytes the copies move device -> host. */
  bytes = 0;
  readonly #copies: (() => void)[] = [];
  readonly #after: (() => void | Promise<void>)[] = [];
  readonly #lane: LaneView;
  readonly #slot: number;

  /** The copies back of the work in `slot` of `lane`. */
  constructor(lane: LaneView, slot: number) {
    this.#lane = lane;
    this.#slot = slot;
  }

  /** `length` elements of `src` into `target` from `targetOffset`; `purpose` names the slot's staging when `target` is not lent. */
  fetch(src: DeviceBuffer<DType>, target: HostSide, targetOffset: number, length: number, purpose: string): void {
    const copyOut = this.#lane.copies.copyOut;
    const direct = pinnedView(this.#lane.pinned, target, src.dtype);
    if (direct)
      this.#copies.push(() =>
        src.read(direct.host, { stream: copyOut, otherOffset: direct.offset + targetOffset, length }),
      );
    else {
      const pin = this.#lane.buffers.host(purpose, src.dtype, length, this.#slot);
      this.#copies.push(() => src.read(pin, { stream: copyOut, length }));
      this.#after.push(() => copyHostArray(target, rawArray(pin).subarray(0, length), targetOffset));
    }
    this.bytes += length * dtypeInfo(src.dtype).bytes;
  }

  /**
   * Band-major blocks ([band][row][t] on the device: `nb` x `rows` runs of `n` values, the job
   * engine's band waves) into a row-major array ([row][band][t], rows from `rowStart`): run by run
   * straight into a lent array, else through the slot's staging `purpose`, reordered on the host.
   * Positional: no layout object per piece of work.
   */
  fetchBandMajor(
    src: DeviceBuffer<DType>,
    target: HostSide,
    nb: number,
    rows: number,
    n: number,
    rowStart: number,
    purpose: string,
  ): void {
    const copyOut = this.#lane.copies.copyOut;
    const total = nb * rows * n;
    const direct = pinnedView(this.#lane.pinned, target, src.dtype);
    if (direct) {
      this.#copies.push(() => {
        for (let q = 0; q < nb; q++)
          for (let r = 0; r < rows; r++)
            src.read(direct.host, {
              stream: copyOut,
              offset: (q * rows + r) * n,
              otherOffset: direct.offset + ((rowStart + r) * nb + q) * n,
              length: n,
            });
      });
    } else {
      const pin = this.#lane.buffers.host(purpose, src.dtype, total, this.#slot);
      this.#copies.push(() => src.read(pin, { stream: copyOut, length: total }));
      this.#after.push(() => {
        const from = rawArray(pin) as typeof target;
        for (let q = 0; q < nb; q++)
          for (let r = 0; r < rows; r++)
            target.set(from.subarray((q * rows + r) * n, (q * rows + r + 1) * n), ((rowStart + r) * nb + q) * n);
      });
    }
    this.bytes += total * dtypeInfo(src.dtype).bytes;
  }

  /** A copy of the caller's own (enqueued on the copy-out stream with the others), and the host work, if any, that reads it once the slot's work completed. */
  custom(copy: () => void, bytes: number, after?: () => void): void {
    this.#copies.push(copy);
    if (after !== undefined) this.#after.push(after);
    this.bytes += bytes;
  }

  /** Enqueues every copy gathered, in order, on the copy-out stream (which the caller made wait for the compute). */
  enqueue(): void {
    for (const copy of this.#copies) copy();
  }

  /** The host's share, once the slot's finished event has completed: settles when every result array is filled. */
  finish(): Promise<unknown> {
    return Promise.all(this.#after.map((fn) => fn()));
  }
}
