import { cu } from '../../ffi/checked.js';
import { CUmemorytype } from '../../ffi/generated/types.js';
import { toAddress } from '../cuda.js';
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { DeviceBuffer } from './device-buffer.js';
import { type DType, dtypeInfo } from './dtype.js';
import { HostBuffer } from './host-buffer.js';
import { checkDType } from './dtype-check.js';
import { checkLabel, describeValue, expectResource } from '../resource.js';
import { resolveStream, Stream } from '../stream.js';
import { positiveInteger } from '../value-checks.js';

/** A device buffer whose rows are `pitchBytes` apart (cuMemAllocPitch), for 2D data. */
export interface PitchedBuffer<T extends DType> {
  buffer: DeviceBuffer<T>;
  pitchBytes: number;
  width: number;
  height: number;
}

/** Allocates `height` rows of `width` elements, each row aligned (cuMemAllocPitch; may synchronize the device, like cuMemAlloc). */
export function allocPitched<T extends DType>(
  dtype: T,
  width: number,
  height: number,
  descriptor: Placement & { label?: string | undefined } = {},
): PitchedBuffer<T> {
  checkDType(dtype, 'allocPitched');
  if (typeof descriptor !== 'object' || descriptor === null)
    throw new TypeError(`allocPitched takes a descriptor object, got ${describeValue(descriptor)}`);
  checkLabel(descriptor.label, 'allocPitched');
  positiveInteger(width, 'pitched width');
  positiveInteger(height, 'pitched height');
  const bytes = dtypeInfo(dtype).bytes;
  const context = resolveContext(descriptor);
  context.makeCurrent();
  const { dptr, pPitch } = cu().cuMemAllocPitch(
    width * bytes,
    height,
    Math.min(16, Math.max(4, bytes)),
    descriptor.label,
  );
  const pitchBytes = Number(pPitch);
  const address = toAddress(dptr);
  const free = (): void => cu().cuMemFree(address);
  const buffer = DeviceBuffer.wrap(dtype, Math.floor((pitchBytes * height) / bytes), address, {
    context,
    label: descriptor.label ?? 'pitched',
    free,
  });
  return { buffer, pitchBytes, width, height };
}

/** What `copy2D` copies: `height` rows of `widthBytes` from `src` to `dst`, host or device memory either side, each side's rows `...PitchBytes` apart (at least `widthBytes`; a PitchedBuffer's `pitchBytes`). */
export interface Copy2D {
  src: DeviceBuffer<DType> | HostBuffer<DType>;
  srcPitchBytes: number;
  dst: DeviceBuffer<DType> | HostBuffer<DType>;
  dstPitchBytes: number;
  widthBytes: number;
  height: number;
  /** Async on this stream; without it on the context's default stream (of `src`, else `dst`), where it is synchronous. */
  stream?: Stream | undefined;
}

/** Copies a `widthBytes` × `height` rectangle between pitched host or device memory (cuMemcpy2D). */
export function copy2D(copy: Copy2D): void {
  if (typeof copy !== 'object' || copy === null)
    throw new TypeError(`copy2D takes a descriptor object, got ${describeValue(copy)}`);
  const { src, dst, srcPitchBytes, dstPitchBytes, widthBytes, height } = copy;
  for (const [side, buf] of [
    ['src', src],
    ['dst', dst],
  ] as const) {
    if (buf instanceof HostBuffer) buf.checkUsable();
    else if (buf instanceof DeviceBuffer) buf.checkUsable();
    else throw new TypeError(`copy2D ${side} must be a DeviceBuffer or a HostBuffer, got ${describeValue(buf)}`);
  }
  if (copy.stream !== undefined) {
    expectResource(copy.stream, Stream, 'copy2D stream');
    for (const buf of [src, dst])
      if (buf instanceof DeviceBuffer && buf.context !== copy.stream.context)
        throw new Error(
          `copy2D: buffer "${buf.label}" belongs to ${buf.context.label}, not to ${copy.stream.context.label} of stream "${copy.stream.label}"`,
        );
  }
  const stream = resolveStream((src instanceof DeviceBuffer ? src : dst).context, copy.stream);
  positiveInteger(widthBytes, 'copy2D widthBytes');
  positiveInteger(height, 'copy2D height');
  for (const [side, pitch, buf] of [
    ['source', srcPitchBytes, src],
    ['destination', dstPitchBytes, dst],
  ] as const) {
    if (!Number.isInteger(pitch) || pitch < widthBytes)
      throw new RangeError(`copy2D: ${side} pitch ${pitch} is smaller than the row width ${widthBytes}`);
    const needed = pitch * (height - 1) + widthBytes;
    if (needed > buf.byteLength)
      throw new RangeError(`copy2D: ${side} "${buf.label}" holds ${buf.byteLength} bytes, the copy needs ${needed}`);
  }
  const side = (b: DeviceBuffer<DType> | HostBuffer<DType>): { type: number; host: number; device: number } =>
    b instanceof HostBuffer
      ? { type: CUmemorytype.CU_MEMORYTYPE_HOST, host: b.address, device: 0 }
      : { type: CUmemorytype.CU_MEMORYTYPE_DEVICE, host: 0, device: b.address };
  const s = side(src);
  const d = side(dst);
  const params = {
    srcXInBytes: 0,
    srcY: 0,
    srcMemoryType: s.type,
    srcHost: s.host,
    srcDevice: s.device,
    srcArray: null,
    srcPitch: srcPitchBytes,
    dstXInBytes: 0,
    dstY: 0,
    dstMemoryType: d.type,
    dstHost: d.host,
    dstDevice: d.device,
    dstArray: null,
    dstPitch: dstPitchBytes,
    WidthInBytes: widthBytes,
    Height: height,
  };
  if (s.type === d.type && s.type === CUmemorytype.CU_MEMORYTYPE_DEVICE) {
    const srcEnd = s.device + srcPitchBytes * (height - 1) + widthBytes;
    const dstEnd = d.device + dstPitchBytes * (height - 1) + widthBytes;
    if (s.device < dstEnd && d.device < srcEnd)
      throw new RangeError(
        `copy2D: the source "${src.label}" and destination "${dst.label}" ranges overlap; cuMemcpy2D has no memmove semantics`,
      );
  }
  if (stream.isDefault) {
    stream.use();
    cu().cuMemcpy2D(params as never);
  } else {
    cu().cuMemcpy2DAsync(params as never, stream.use());
    for (const buf of [src, dst]) buf.recordUse(stream);
  }
}
