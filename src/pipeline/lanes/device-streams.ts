/**
 * The streams lanes run on: the copy-in and copy-out streams the lanes of one device share
 * (CopyStreams says why) and each lane's compute stream, held by one StreamPool (orchestration),
 * named for what they do and disposed together with the pool, after the lanes.
 */
import type { Context } from '../../runtime/context.js';
import type { Stream } from '../../runtime/stream.js';
import { StreamPool } from '../../orchestration/stream-pool.js';

/**
 * The copy streams of a lane, which the lanes of one device share: every lane's host-to-device
 * copies queue on one, its device-to-host copies on the other, each in submission order. Joined to
 * the lanes' compute streams by events, the copy engines of both directions stay busy back to back
 * while the lanes compute (a lane alone on one stream copies in, computes and copies out in turn,
 * and the lanes then fall into step: measured 10.8 vs 11.7 Gsamples/s of the job engine,
 * bench/probe/engine-stages.ts). One stream may serve as both, and as the compute stream too: a
 * serial lane.
 */
export interface CopyStreams {
  readonly copyIn: Stream;
  readonly copyOut: Stream;
}

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
 * track an event per piece of work beside the lane's own slot events, on a path that runs
 * thousands of times a second.
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
