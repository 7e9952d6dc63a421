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
  readonly copies: CopyStreams;
  /** The lanes' compute streams, in the order of `laneLabels`. */
  readonly lanes: readonly Stream[];
}

/**
 * A StreamPool on `context` of a copy-in, a copy-out and one compute stream per entry of
 * `laneLabels` (labelled so), at the Stream default priority ('low', as streams the lanes made
 * themselves had). The lanes enqueue on them directly: the pool's run()/submit() would record and
 * track an event per job beside the lane's own slot events, on a path that runs thousands of
 * times a second.
 */
export function deviceStreams(context: Context, name: string, laneLabels: readonly string[]): DeviceStreams {
  const pool = new StreamPool({
    context,
    label: `${name} streams`,
    streams: [
      { purpose: 'ConfigUpload', priority: 'low', label: `${name} copies in` },
      { purpose: 'TelemetryDownload', priority: 'low', label: `${name} copies out` },
      ...laneLabels.map((label) => ({ purpose: 'KernelExecution' as const, priority: 'low' as const, label })),
    ],
  });
  const [copyIn, copyOut, ...lanes] = pool.streams;
  return { pool, copies: { copyIn: copyIn!, copyOut: copyOut! }, lanes };
}
