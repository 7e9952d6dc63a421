/** DeviceBuffer.memset(): every 8-, 16- or 32-bit word of a buffer set to one value, on a stream or synchronously. */
import { cu } from '../../ffi/checked.js';
import type { CUstream } from '../../ffi/generated/types.js';
import { finishLegacyStream } from '../cuda.js';
import type { Stream } from '../stream.js';
import type { DeviceBuffer } from '../types.js';
import { dtypeInfo } from './dtype.js';

/** What memset() is told: the stream to enqueue on (default: the context's default stream, where it is synchronous) and the word width in bits (default: the element size). */
export interface MemsetOptions {
  stream?: Stream | undefined;
  width?: 8 | 16 | 32 | undefined;
}

/**
 * Sets every word of `buffer` to `value` on `stream` (see DeviceBuffer.memset: on the context's
 * default stream the call returns once it is done); checks the width (default: the element size),
 * the value and that the buffer is a whole number of words before the driver is called.
 */
export function memsetDevice(buffer: DeviceBuffer, value: number, stream: Stream, width: MemsetOptions['width']): void {
  buffer.checkUsable(stream);
  const bytes = dtypeInfo(buffer.dtype).bytes;
  const w = width ?? (bytes === 1 ? 8 : bytes === 2 ? 16 : 32);
  if (w !== 8 && w !== 16 && w !== 32) throw new RangeError(`memset width must be 8, 16 or 32 bits, got ${w}`);
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** w)
    throw new RangeError(`memset value ${value} does not fit in ${w} bits`);
  if ((buffer.byteLength * 8) % w !== 0)
    throw new RangeError(`"${buffer.label}" (${buffer.byteLength} bytes) is not a whole number of ${w}-bit words`);
  const n = (buffer.byteLength * 8) / w;
  const s: CUstream | null = stream.use();
  const synchronous = stream.isDefault;
  const api = cu();
  if (w === 8) {
    if (synchronous) api.cuMemsetD8(buffer.address, value, n, memsetDuring, buffer);
    else api.cuMemsetD8Async(buffer.address, value, n, s, memsetDuring, buffer);
  } else if (w === 16) {
    if (synchronous) api.cuMemsetD16(buffer.address, value, n, memsetDuring, buffer);
    else api.cuMemsetD16Async(buffer.address, value, n, s, memsetDuring, buffer);
  } else if (synchronous) api.cuMemsetD32(buffer.address, value, n, memsetDuring, buffer);
  else api.cuMemsetD32Async(buffer.address, value, n, s, memsetDuring, buffer);
  if (synchronous) finishLegacyStream(memsetDuring, buffer);
  else buffer.recordUse(stream);
}

/** What a failed memset was doing, built only when it fails (src/ffi/checked-call.ts). */
const memsetDuring = (buffer: DeviceBuffer): string => `memset of "${buffer.label}"`;
