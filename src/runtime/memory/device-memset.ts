/** DeviceBuffer.memset(): every 8-, 16- or 32-bit word of a buffer set to one value, on a stream or synchronously. */
import { cu } from '../../ffi/checked.js';
import type { CUstream } from '../../ffi/generated/types.js';
import { finishLegacyStream } from '../cuda.js';
import type { Stream } from '../stream.js';
import type { DeviceBuffer } from '../types.js';
import { dtypeInfo } from './dtype.js';

/** What memset() is told: the stream to enqueue on (default: synchronous) and the word width in bits (default: the element size). */
export interface MemsetOptions {
  stream?: Stream | undefined;
  width?: 8 | 16 | 32 | undefined;
}

/**
 * Sets every word of `buffer` to `value` (see DeviceBuffer.memset); checks the width, the value
 * and that the buffer is a whole number of words before the driver is called.
 */
export function memsetDevice(buffer: DeviceBuffer, value: number, options: MemsetOptions): void {
  buffer.checkUsable(options?.stream);
  const bytes = dtypeInfo(buffer.dtype).bytes;
  const width = options.width ?? (bytes === 1 ? 8 : bytes === 2 ? 16 : 32);
  if (width !== 8 && width !== 16 && width !== 32)
    throw new RangeError(`memset width must be 8, 16 or 32 bits, got ${width}`);
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** width)
    throw new RangeError(`memset value ${value} does not fit in ${width} bits`);
  if ((buffer.byteLength * 8) % width !== 0)
    throw new RangeError(`"${buffer.label}" (${buffer.byteLength} bytes) is not a whole number of ${width}-bit words`);
  const n = (buffer.byteLength * 8) / width;
  const s: CUstream | null = options.stream ? options.stream.use() : null;
  if (!options.stream) buffer.context.makeCurrent();
  const api = cu();
  if (width === 8) {
    if (s) api.cuMemsetD8Async(buffer.address, value, n, s, memsetDuring, buffer);
    else api.cuMemsetD8(buffer.address, value, n, memsetDuring, buffer);
  } else if (width === 16) {
    if (s) api.cuMemsetD16Async(buffer.address, value, n, s, memsetDuring, buffer);
    else api.cuMemsetD16(buffer.address, value, n, memsetDuring, buffer);
  } else if (s) api.cuMemsetD32Async(buffer.address, value, n, s, memsetDuring, buffer);
  else api.cuMemsetD32(buffer.address, value, n, memsetDuring, buffer);
  if (!s) finishLegacyStream(memsetDuring, buffer);
  if (options.stream) buffer.recordUse(options.stream);
}

/** What a failed memset was doing, built only when it fails (src/ffi/checked-call.ts). */
const memsetDuring = (buffer: DeviceBuffer): string => `memset of "${buffer.label}"`;
