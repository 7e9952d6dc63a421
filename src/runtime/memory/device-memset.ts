/** DeviceBuffer.memset(): every 8-, 16- or 32-bit word of a buffer set to one value, on a stream or synchronously. */
import { statusError } from '../../ffi/checked.js';
import type { CUstream } from '../../ffi/generated/types.js';
import { driverApi, finishLegacyStream } from '../cuda.js';
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
  const api = driverApi();
  let status =
    width === 8
      ? s
        ? api.cuMemsetD8Async(buffer.address, value, n, s)
        : api.cuMemsetD8(buffer.address, value, n)
      : width === 16
        ? s
          ? api.cuMemsetD16Async(buffer.address, value, n, s)
          : api.cuMemsetD16(buffer.address, value, n)
        : s
          ? api.cuMemsetD32Async(buffer.address, value, n, s)
          : api.cuMemsetD32(buffer.address, value, n);
  if (status === 0 && !s) status = finishLegacyStream();
  if (status !== 0)
    throw statusError(
      'driver',
      status,
      width === 8 ? 'cuMemsetD8' : width === 16 ? 'cuMemsetD16' : 'cuMemsetD32',
      `memset of "${buffer.label}"`,
    );
  if (options.stream) buffer.recordUse(options.stream);
}
