/** How a DevicePool picks a device for the next piece of work: pure, so the rules are testable without a GPU. */

/**
 * RoundRobin: devices in turn. LeastLoaded: the fewest submissions not yet completed (ties in
 * round-robin order). FreeMemory: the most free device memory (cuMemGetInfo; ties by load).
 */
export type DevicePlacement = 'RoundRobin' | 'LeastLoaded' | 'FreeMemory';

/** Every placement, for option checks. */
export const DEVICE_PLACEMENTS: readonly DevicePlacement[] = ['RoundRobin', 'LeastLoaded', 'FreeMemory'];

/** What placement knows of one device of the pool. */
export interface DeviceLoad {
  /** Position in the pool's device list. */
  index: number;
  /** Submissions through the device's StreamPool not yet completed. */
  outstanding: number;
  /** Free device memory in bytes (only FreeMemory reads it). */
  freeBytes: number;
}

/** Throws a TypeError naming the placements unless `placement` is one. */
export function checkPlacement(placement: unknown, what: string): asserts placement is DevicePlacement {
  if (typeof placement !== 'string' || !(DEVICE_PLACEMENTS as readonly string[]).includes(placement)) {
    throw new TypeError(`${what}: unknown placement ${JSON.stringify(placement)}; expected one of ${DEVICE_PLACEMENTS.join(', ')}`);
  }
}

/** The index (into `loads`) of the device the next piece of work goes to; `tick` counts placements so far. */
export function chooseDevice(placement: DevicePlacement, loads: readonly DeviceLoad[], tick: number): number {
  const n = loads.length;
  if (n === 0) throw new RangeError('no devices to choose from');
  const start = ((tick % n) + n) % n;
  if (placement === 'RoundRobin') return loads[start]!.index;
  let best = loads[start]!;
  for (let k = 1; k < n; k++) {
    const c = loads[(start + k) % n]!;
    if (placement === 'LeastLoaded') {
      if (c.outstanding < best.outstanding) best = c;
    } else if (c.freeBytes > best.freeBytes || (c.freeBytes === best.freeBytes && c.outstanding < best.outstanding)) best = c;
  }
  return best.index;
}

/** Resolves a pool's `devices` option to ordinals: 'all' is every device; numbers are checked against `count`. */
export function resolveDeviceList(devices: 'all' | readonly number[] | undefined, count: number, what: string): number[] {
  if (devices === undefined || devices === 'all') {
    if (count < 1) throw new RangeError(`${what}: no CUDA device is visible`);
    return Array.from({ length: count }, (_, i) => i);
  }
  if (!Array.isArray(devices) || devices.length === 0) throw new TypeError(`${what}: devices must be 'all' or a non-empty array of ordinals`);
  const seen = new Set<number>();
  for (const d of devices) {
    if (!Number.isInteger(d) || d < 0 || d >= count) throw new RangeError(`${what}: device ${String(d)} does not exist (this machine has ${count} CUDA device(s))`);
    if (seen.has(d)) throw new RangeError(`${what}: device ${d} is listed twice`);
    seen.add(d);
  }
  return [...devices];
}
