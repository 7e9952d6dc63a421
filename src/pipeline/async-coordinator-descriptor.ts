/**
 * How an AsyncCoordinator is made: its streams (its own or the caller's), their priorities, its
 * profiler, and the check of all of it before the driver is asked for anything.
 */
import { Profiler } from '../orchestration/profiler.js';
import type { Placement } from '../runtime/defaults.js';
import { describeValue, expectResource } from '../runtime/resource.js';
import { checkPriority, Stream, type StreamPriority } from '../runtime/stream.js';
import { integerOption, knownKeys } from '../runtime/value-checks.js';

/** The three streams of an AsyncCoordinator (one stream may serve all three: a serial pipeline). */
export interface CoordinatorStreams {
  upload: Stream;
  compute: Stream;
  download: Stream;
}

/** How an AsyncCoordinator is made. */
export interface AsyncCoordinatorDescriptor extends Placement {
  /**
   * Streams to use instead of creating three; they stay the caller's. Passing one stream for
   * all three serializes every operation (a synchronous pipeline with the same API).
   */
  streams?: CoordinatorStreams | undefined;
  priorities?:
    | {
        upload?: StreamPriority | undefined;
        compute?: StreamPriority | undefined;
        download?: StreamPriority | undefined;
      }
    | undefined;
  /** Brackets every operation, so its timeline shows what overlapped. */
  profiler?: Profiler | undefined;
  /** Settled operations kept for status() / wait() (default 4096; see CoordinatorDescriptor). */
  retainSettled?: number | undefined;
  label?: string | undefined;
}

/** Every key of AsyncCoordinatorDescriptor (the Record makes a new one fail to compile until listed). */
const DESCRIPTOR_KEYS = Object.keys({
  device: true,
  context: true,
  streams: true,
  priorities: true,
  profiler: true,
  retainSettled: true,
  label: true,
} satisfies Record<keyof AsyncCoordinatorDescriptor, true>);

/** The keys of `priorities` and of `streams`. */
const ROLES = Object.keys({ upload: true, compute: true, download: true } satisfies Record<
  keyof CoordinatorStreams,
  true
>);

/**
 * The descriptor's options checked before the driver is asked for anything (a wrong one said "no
 * CUDA driver" without a GPU; with one, a bad retainSettled failed after the streams were made).
 */
export function checkDescriptor(descriptor: AsyncCoordinatorDescriptor, label: string): void {
  knownKeys(descriptor, DESCRIPTOR_KEYS, 'AsyncCoordinator descriptor');
  const { streams, priorities, profiler } = descriptor;
  if (streams !== undefined) {
    if (typeof streams !== 'object' || streams === null)
      throw new TypeError(
        `${label}: streams must be an object { upload, compute, download }, got ${describeValue(streams)}`,
      );
    for (const s of [streams.upload, streams.compute, streams.download])
      if (!(s instanceof Stream))
        throw new TypeError(`${label}: streams.upload, .compute and .download must be Streams`);
  }
  if (priorities !== undefined) {
    if (typeof priorities !== 'object' || priorities === null)
      throw new TypeError(
        `${label}: priorities must be an object { upload?, compute?, download? }, got ${describeValue(priorities)}`,
      );
    knownKeys(priorities, ROLES, `${label}: priorities`);
    for (const role of ROLES) {
      try {
        checkPriority(priorities[role as keyof typeof priorities]);
      } catch (e) {
        throw new TypeError(`${label}: priorities.${role}: ${(e as Error).message}`);
      }
    }
  }
  if (profiler !== undefined) expectResource(profiler, Profiler, `${label}: profiler`);
  integerOption(`${label}: retainSettled`, descriptor.retainSettled, 0, 0, Number.MAX_SAFE_INTEGER);
}

/** @deprecated the name before issue 9; use AsyncCoordinatorDescriptor. */
export type AsyncCoordinatorOptions = AsyncCoordinatorDescriptor;
