/** The host side of a DeviceBuffer copy: a HostBuffer (pinned) or a TypedArray (pageable), checked and addressed. */
import { describeValue, Resource } from '../resource.js';
import { dtypeInfo, type DType, type HostArray } from './dtype.js';
import type { HostBuffer } from './host-buffer.js';

/** What a copy reads from or writes into on the host. */
export type HostSide<T extends DType> = HostArray<T> | HostBuffer<T>;

/** A fresh host array of `length` elements of `dtype` (what read() returns without a target). */
export function newHostArray(dtype: DType, length: number): ArrayBufferView {
  const info = dtypeInfo(dtype);
  return new info.array(length * info.components);
}

/**
 * Checks the host side of a copy: a HostBuffer or a TypedArray; anything else (a plain object with an
 * `address`) is a TypeError. The message (naming `what` and the buffer) is built only when it fails, never per copy.
 */
export function checkHostSide(x: unknown, what: string, buffer: { readonly label: string } | undefined): void {
  if (isHostBuffer(x)) return;
  if (ArrayBuffer.isView(x) && !(x instanceof DataView)) return;
  throw new TypeError(
    `${what}${buffer ? ` "${buffer.label}"` : ''}: expected a HostBuffer or a TypedArray, got ${describeValue(x)}`,
  );
}

/**
 * True for a real HostBuffer (a brand check: a plain object with `isHostBuffer: true` is not one).
 * The family brand, not `instanceof`: ~1 ns against ~15 ns per copy (bench/probe/ffi-overhead.ts over the stub driver).
 */
export function isHostBuffer<T extends DType>(x: unknown): x is HostBuffer<T> {
  return Resource.isResourceOf(x, 'HostBuffer');
}

/** `host` is usable and holds `device`'s dtype. */
export function checkSameDtype<T extends DType>(
  device: { readonly dtype: T; readonly label: string },
  host: HostBuffer<DType>,
): HostBuffer<T> {
  host.checkUsable();
  if (host.dtype !== device.dtype)
    throw new TypeError(`"${device.label}" holds ${device.dtype} but host buffer "${host.label}" holds ${host.dtype}`);
  return host as HostBuffer<T>;
}

/** A pageable TypedArray passed in place (koffi hands its memory to the call). */
export function hostPointer(array: ArrayBufferView, byteOffset: number, bytes: number): ArrayBufferView {
  return byteOffset === 0 && bytes === array.byteLength
    ? array
    : new Uint8Array(array.buffer, array.byteOffset + byteOffset, bytes);
}
