/**
 * The host<->GPU copy bound of the devices a command runs on, measured now: pinned H2D and D2H
 * on each device alone and on all of them at once, one direction at a time and both directions
 * at once. The at-once figures are the bound of a job mix spread over several GPUs (two GPUs
 * behind one PCIe switch or one CPU socket share a link and get less than twice one; GPUs on
 * links of their own get twice). A job that copies in and out at the same time is bound by the
 * both-directions figure (a PCIe link is full duplex, but the host's memory and root complex
 * carry both directions of every GPU). `tscuda demo` and the several-GPU bench
 * (bench/tscuda/multi-gpu.ts) report their throughput against these.
 */
import type { Device } from '../../runtime/device.js';
import { Event } from '../../runtime/event.js';
import { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { HostBuffer } from '../../runtime/memory/host-buffer.js';
import { Stream } from '../../runtime/stream.js';

/** GB/s: each way alone, and each way while both directions copy at once (`both`, the mean of the two directions). */
export interface CopyRates {
  h2d: number;
  d2h: number;
  both: number;
}

/** What measureLinks found: each device alone, and all of them copying at once (summed). */
export interface LinkBounds {
  perDevice: (CopyRates & { device: number })[];
  together: CopyRates;
}

type Direction = 'h2d' | 'd2h';

/** One direction of one device: its own stream, pinned buffer, device buffer and timing events. */
interface Path {
  direction: Direction;
  stream: Stream;
  host: HostBuffer<'u8'>;
  dev: DeviceBuffer<'u8'>;
  t0: Event;
  t1: Event;
}

interface Rig {
  device: Device;
  paths: Record<Direction, Path>;
}

const REPS = 5;

/** The median of the samples after the first (untimed warm-up) repetition. */
function median(xs: number[]): number {
  const s = xs.slice(1).sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function makePath(device: Device, direction: Direction, bytes: number): Path {
  const label = `link bound ${direction} ${device.ordinal}`;
  const stream = new Stream({ device, label });
  const made: { dispose(): void }[] = [stream];
  try {
    const host = HostBuffer.alloc('u8', bytes, { device, label: `${label} host` });
    made.push(host);
    host.array.fill(7);
    const dev = DeviceBuffer.alloc('u8', bytes, { stream, label: `${label} device` });
    made.push(dev);
    const t0 = new Event({ device, timing: true, label: `${label} t0` });
    made.push(t0);
    const t1 = new Event({ device, timing: true, label: `${label} t1` });
    return { direction, stream, host, dev, t0, t1 };
  } catch (e) {
    for (const x of made.reverse()) x.dispose();
    throw e;
  }
}

/**
 * Pinned copies of `bytes` (default 64 MiB) per device and direction, REPS times: alone (device
 * by device, one direction, then both directions on two streams at once) and together (every
 * device's copies enqueued before any is waited for; the rate is all bytes over the longest
 * copy's span, from its events). Blocks the thread for well under a second per device
 * (synchronous event waits): for commands and benchmarks, not servers.
 */
export function measureLinks(devices: readonly Device[], bytes = 64 * 2 ** 20): LinkBounds {
  const rigs: Rig[] = [];
  try {
    for (const device of devices) {
      const h2d = makePath(device, 'h2d', bytes);
      try {
        rigs.push({ device, paths: { h2d, d2h: makePath(device, 'd2h', bytes) } });
      } catch (e) {
        for (const x of [h2d.t1, h2d.t0, h2d.dev, h2d.host, h2d.stream]) x.dispose();
        throw e;
      }
    }
    /** GB/s of all `paths` copying at once: their bytes over the longest span (per direction when `perDirection`). */
    const rate = (paths: readonly Path[], perDirection: number): number => {
      const xs: number[] = [];
      for (let i = 0; i < REPS; i++) {
        for (const p of paths) {
          p.t0.record(p.stream);
          if (p.direction === 'h2d') p.dev.write(p.host, { stream: p.stream });
          else p.dev.read(p.host, { stream: p.stream });
          p.t1.record(p.stream);
        }
        let longest = 0;
        for (const p of paths) {
          p.t1.synchronize();
          longest = Math.max(longest, Event.elapsedMs(p.t0, p.t1));
        }
        xs.push((paths.length * bytes) / perDirection / 1e9 / (longest / 1e3));
      }
      return median(xs);
    };
    const all = (direction: Direction): Path[] => rigs.map((r) => r.paths[direction]);
    const perDevice = rigs.map((r) => ({
      device: r.device.ordinal,
      h2d: rate([r.paths.h2d], 1),
      d2h: rate([r.paths.d2h], 1),
      both: rate([r.paths.h2d, r.paths.d2h], 2),
    }));
    const together: CopyRates =
      rigs.length === 1
        ? { h2d: perDevice[0]!.h2d, d2h: perDevice[0]!.d2h, both: perDevice[0]!.both }
        : { h2d: rate(all('h2d'), 1), d2h: rate(all('d2h'), 1), both: rate([...all('h2d'), ...all('d2h')], 2) };
    return { perDevice, together };
  } finally {
    for (const r of rigs)
      for (const p of [r.paths.h2d, r.paths.d2h]) {
        p.stream.synchronize();
        for (const x of [p.t1, p.t0, p.dev, p.host, p.stream]) x.dispose();
      }
  }
}
