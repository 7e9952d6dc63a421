/**
 * The lane's side of the non-finite rule (finite-samples.ts): each chunk's input is searched on the
 * GPU as it arrives (signal/non-finite.ts, on the lane's stream, inside the compute graph where
 * there is one), and the index cell comes back with the chunk's results, in the same copies, into
 * the slot's pinned memory: no sync and no round trip of its own. The engine core turns an index
 * into the job's JobValidationError.
 */
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { HostBuffer } from '../runtime/memory/host-buffer.js';
import { ALL_FINITE, canBeNonFinite } from '../signal/non-finite.js';
import type { CopyBack } from '../pipeline/lanes/copy-back.js';
import type { LaneResources } from './lane-resources.js';
import type { NormalizedJob } from './validate.js';

/** The slot's device index cell of a chunk of `job`, or undefined when its samples cannot be non-finite (i16). */
export function nonFiniteCell(lane: LaneResources, job: NormalizedJob, slot: number): DeviceBuffer<'u64'> | undefined {
  return canBeNonFinite(job.dtype) ? lane.buffers.device('non-finite', 'u64', 1, { slot }) : undefined;
}

/** The slot's pinned cell the index comes back into. */
export function nonFiniteHost(lane: LaneResources, slot: number): HostBuffer<'u64'> {
  return lane.buffers.host('non-finite', 'u64', 1, slot);
}

/** The index a completed search left in `host`: undefined when every sample was finite. */
export function nonFiniteIndex(host: HostBuffer<'u64'>): number | undefined {
  const v = host.array[0]!;
  return v === ALL_FINITE ? undefined : Number(v);
}

/**
 * Adds the copy back of `cell` to a whole-series chunk's copies (on the copy-out stream, behind the
 * compute); returns the pinned cell it lands in, for nonFiniteIndex() once the chunk's work has completed.
 */
export function fetchNonFinite(
  lane: LaneResources,
  back: CopyBack,
  slot: number,
  cell: DeviceBuffer<'u64'>,
): HostBuffer<'u64'> {
  const host = nonFiniteHost(lane, slot);
  back.custom(() => cell.read(host, { stream: lane.copies.copyOut, length: 1 }), 8);
  return host;
}
