/**
 * The host<->GPU copy bound of the devices a command runs on, measured now: pinned H2D and D2H
 * on each device alone and on all of them at once. The at-once figure is the bound of a job mix
 * spread over several GPUs (two GPUs behind one PCIe switch or one CPU socket share a link and
 * get less than twice one; GPUs on links of their own get twice). `tscuda demo` and the several-GPU
 * bench (bench/tscuda/multi-gpu.ts) report their throughput against it.
 */
import type { Device } from '../../runtime/device.js';
import { Event } from '../../runtime/event.js';
import { DeviceBuffer } from '../../runtime/memory/device-buffer.js';
import { HostBuffer } from '../../runtime/memory/host-buffer.js';
import { Stream } from '../../runtime/stream.js';

/** GB/s each way. */
export interface CopyRates {
  h2d: number;
  d2h: number;
}

/** What measureLinks found: each device alone, and all of them copying at once (summed). */
export interface LinkBounds {
  perDevice: (CopyRates & { device: number })[];
  together: CopyRates;
}

interface Rig {
  device: Device;
  stream: Stream;
  host: HostBuffer<'u8'>;
  dev: DeviceBuffer<'u8'>;
  t0: Event;
  t1: Event;
}

const REPS = 5;

/** The median of the samples after the first (untimed warm-up) repetition. */
function median(xs: number[]): number {
  const s = xs.slice(1).sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/**
 * Pinned copies of `bytes` (default 64 MiB) per device and direction, REPS times: alone (device
 * by device) and together (every device's copy enqueued before any is waited for; the rate is
 * all bytes over the longest device's span, from its events). Blocks the thread for well under a
 * second per device (synchronous event waits): for commands and benchmarks, not servers.
 */
export function measureLinks(devices: readonly Device[], bytes = 64 * 2 ** 20): LinkBounds {
  const rigs: Rig[] = [];
  try {
    for (const device of devices) {
      const stream = new Stream({ device, label: `link bound ${device.ordinal}` });
      const host = HostBuffer.alloc('u8', bytes, { device, label: `link bound host ${device.ordinal}` });
      host.array.fill(7);
      rigs.push({
        device,
        stream,
        host,
        dev: DeviceBuffer.alloc('u8', bytes, { stream, label: `link bound device ${device.ordinal}` }),
        t0: new Event({ device, timing: true, label: `link bound t0 ${device.ordinal}` }),
        t1: new Event({ device, timing: true, label: `link bound t1 ${device.ordinal}` }),
      });
    }
    const enqueue = (r: Rig, h2d: boolean): void => {
      r.t0.record(r.stream);
      if (h2d) r.dev.write(r.host, { stream: r.stream });
      else r.dev.read(r.host, { stream: r.stream });
      r.t1.record(r.stream);
    };
    const alone = (r: Rig, h2d: boolean): number => {
      const xs: number[] = [];
      for (let i = 0; i < REPS; i++) {
        enqueue(r, h2d);
        r.t1.synchronize();
        xs.push(bytes / 1e9 / (Event.elapsedMs(r.t0, r.t1) / 1e3));
      }
      return median(xs);
    };
    const together = (h2d: boolean): number => {
      const xs: number[] = [];
      for (let i = 0; i < REPS; i++) {
        for (const r of rigs) enqueue(r, h2d);
        let longest = 0;
        for (const r of rigs) {
          r.t1.synchronize();
          longest = Math.max(longest, Event.elapsedMs(r.t0, r.t1));
        }
        xs.push((rigs.length * bytes) / 1e9 / (longest / 1e3));
      }
      return median(xs);
    };
    const perDevice = rigs.map((r) => ({ device: r.device.ordinal, h2d: alone(r, true), d2h: alone(r, false) }));
    return { perDevice, together: rigs.length === 1 ? { h2d: perDevice[0]!.h2d, d2h: perDevice[0]!.d2h } : { h2d: together(true), d2h: together(false) } };
  } finally {
    for (const r of rigs) {
      r.stream.synchronize();
      for (const x of [r.t1, r.t0, r.dev, r.host, r.stream]) x.dispose();
    }
  }
}
