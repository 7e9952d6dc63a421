/**
 * The streams of one device of an engine, held by one StreamPool (orchestration): the copy-in and
 * copy-out streams its lanes share (CopyStreams says why) and each lane's compute stream, named
 * for what they do and disposed together with the pool, after the lanes.
 */
import type { Context } from '../runtime/context.js';
import type { Stream } from '../runtime/stream.js';
import { StreamPool } from '../orchestration/stream-pool.js';
import type { CopyStreams } from './lane-resources.js';

/** One device's streams: the pool that owns them, as the lanes use them. */
export interface DeviceStreams {
  readonly pool: StreamPool;
  /** The copy-in/copy-out pairs; lane `l` copies through pair `l % copies.length`. */
  readonly copies: readonly CopyStreams[];
  /** The lanes' compute streams, in the order of `laneLabels`. */
  readonly lanes: readonly Stream[];
}

/**
 * A StreamPool on `context` of `copyPairs` copy-in and copy-out streams and one compute stream per entry of
 * `laneLabels` (labelled so), at the Stream default priority ('low', as streams the lanes made
 * themselves had). The lanes enqueue on them directly: the pool's run()/submit() would record and
 * track an event per job beside the lane's own slot events, on a path that runs thousands of
 * times a second.
 */
export function deviceStreams(
  context: Context,
  name: string,
  laneLabels: readonly string[],
  copyPairs = 1,
): DeviceStreams {
  const pairs = Array.from({ length: copyPairs }, (_, i) => (copyPairs === 1 ? '' : ` ${i}`));
  const pool = new StreamPool({
    context,
    label: `${name} streams`,
    streams: [
      ...pairs.flatMap((tag) => [
        { purpose: 'ConfigUpload' as const, priority: 'low' as const, label: `${name} copies in${tag}` },
        { purpose: 'TelemetryDownload' as const, priority: 'low' as const, label: `${name} copies out${tag}` },
      ]),
      ...laneLabels.map((label) => ({ purpose: 'KernelExecution' as const, priority: 'low' as const, label })),
    ],
  });
  const streams = pool.streams;
  const copies = pairs.map((_, i) => ({ copyIn: streams[2 * i]!, copyOut: streams[2 * i + 1]! }));
  return { pool, copies, lanes: streams.slice(2 * copyPairs) };
}
