/**
 * The HBM bound of a row (pure, unit-tested): the bytes any implementation must move (the input
 * read once, the output written once) over the time measured, against the device's HBM bandwidth
 * measured in the same run (a device-to-device copy, bytes read and written: hbm.ts).
 */

/** What a row's time implies against HBM. */
export interface HbmBound {
  /** Bytes read + written, in GB (1e9). */
  gigabytes: number;
  /** Those bytes over the row's time, GB/s. */
  achievedGBps: number;
  /** The time those bytes take at the measured bandwidth, ms: no implementation can be faster. */
  boundMs: number;
  /** achieved / measured bandwidth = boundMs / ms, in (0, 1] for a sound measurement. */
  fraction: number;
}

/** The bound of moving `traffic` in `ms` on a device whose HBM moves `hbmGBps` (bytes read + written per second / 1e9). */
export function hbmBound(traffic: { read: number; written: number }, ms: number, hbmGBps: number): HbmBound {
  const bytes = traffic.read + traffic.written;
  if (!(Number.isFinite(bytes) && bytes > 0)) throw new RangeError(`hbmBound: traffic must be > 0 bytes, got ${bytes}`);
  if (!(Number.isFinite(ms) && ms > 0)) throw new RangeError(`hbmBound: time must be > 0 ms, got ${ms}`);
  if (!(Number.isFinite(hbmGBps) && hbmGBps > 0))
    throw new RangeError(`hbmBound: HBM bandwidth must be > 0 GB/s, got ${hbmGBps}`);
  const gigabytes = bytes / 1e9;
  const achievedGBps = gigabytes / (ms / 1e3);
  const boundMs = (gigabytes / hbmGBps) * 1e3;
  return { gigabytes, achievedGBps, boundMs, fraction: achievedGBps / hbmGBps };
}

const three = (v: number): string => Number(v.toPrecision(3)).toString();

/** The note a row's time metric carries: its bytes, its bound and its fraction of it. */
export function hbmNote(bound: HbmBound, hbmGBps: number): string {
  return (
    `HBM: ${three(bound.gigabytes * 1e3)} MB compulsory (input read once, output written once) in the median time is ` +
    `${three(bound.achievedGBps)} GB/s, ${three(bound.fraction)} of the ${three(hbmGBps)} GB/s a device-to-device copy ` +
    `measured in this run (bound ${three(bound.boundMs)} ms)`
  );
}
