/**
 * A device buffer with pinned host staging of the same size, so that copies between them are
 * truly asynchronous: the one staged pair TripleBuffer and the step runner share, and the one a
 * BufferCache grows (the batch dispatchers' staging). The engine's lanes take the two halves from
 * their BufferCache separately: a job's pinned array lent by the engine is its own staging, so a
 * device buffer has pinned staging only for some jobs.
 */
import type { Context } from '../context.js';
import { resolveContext, type Placement } from '../defaults.js';
import { Resource } from '../resource.js';
import type { Stream } from '../stream.js';
import { DeviceBuffer } from './device-buffer.js';
import { type DType, type HostArray } from './dtype.js';
import { HostBuffer } from './host-buffer.js';
import { positiveInteger } from '../value-checks.js';

/** How a StagedBuffer is made. */
export interface StagedBufferDescriptor extends Placement {
  /** Names both halves: "<label> (host)" and "<label>". */
  label?: string | undefined;
}

/** Options of upload() / download(). */
export interface StagedCopyOptions {
  /** Elements from the start of both halves; default: all. */
  length?: number | undefined;
}

/**
 * Pinned host memory (`host`, its TypedArray `array`) and device memory (`device`) of the same
 * dtype and length. upload() / download() enqueue the copy between them on a stream and return
 * at once; the host side must not be touched until that work has completed.
 */
export class StagedBuffer<T extends DType = DType> extends Resource {
  readonly dtype: T;
  readonly length: number;
  readonly context: Context;
  readonly host: HostBuffer<T>;
  readonly device: DeviceBuffer<T>;

  private constructor(
    dtype: T,
    length: number,
    context: Context,
    host: HostBuffer<T>,
    device: DeviceBuffer<T>,
    label: string | undefined,
  ) {
    super('StagedBuffer', label);
    this.dtype = dtype;
    this.length = length;
    this.context = context;
    this.host = host;
    this.device = device;
  }

  /** Allocates both halves (neither is left behind if the second allocation fails). */
  static alloc<T extends DType>(dtype: T, length: number, descriptor: StagedBufferDescriptor = {}): StagedBuffer<T> {
    positiveInteger(length, 'StagedBuffer length');
    const context = resolveContext(descriptor);
    const label = descriptor.label;
    const host = HostBuffer.alloc(dtype, length, {
      context,
      ...(label === undefined ? {} : { label: `${label} (host)` }),
    });
    let device: DeviceBuffer<T>;
    try {
      device = DeviceBuffer.alloc(dtype, length, { context, ...(label === undefined ? {} : { label }) });
    } catch (e) {
      host.dispose();
      throw e;
    }
    return new StagedBuffer(dtype, length, context, host, device, label);
  }

  /** The pinned host side as a TypedArray. */
  get array(): HostArray<T> {
    this.assertAlive();
    return this.host.array;
  }

  /** Bytes of each half. */
  get byteLength(): number {
    return this.device.byteLength;
  }

  /** Host -> device on `stream` (asynchronous). */
  upload(stream: Stream, options: StagedCopyOptions = {}): void {
    this.assertAlive();
    this.device.write(this.host, options.length === undefined ? { stream } : { stream, length: options.length });
  }

  /** Device -> host on `stream` (asynchronous): read `array` once that work has completed. */
  download(stream: Stream, options: StagedCopyOptions = {}): void {
    this.assertAlive();
    this.device.read(this.host, options.length === undefined ? { stream } : { stream, length: options.length });
  }

  protected releaseNative(): void {
    this.device.dispose();
    this.host.dispose();
  }
}
