/**
 * How a DevicePool picks a device for the next piece of work: pure, so the rules are testable
 * without a GPU. The job engine picks lanes instead, by their load (engine/lane-choice.ts).
 */
import { selectDevices } from '../runtime/placement-rules.js';

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
    throw new TypeError(
      `${what}: unknown placement ${JSON.stringify(placement)}; expected one of ${DEVICE_PLACEMENTS.join(', ')}`,
    );
  }
}

/** The index (into `loads`) of the device the next piece of work goes to; `tick` counts placements so far. */
export function chooseDevice(placement: DevicePlacement, loads: readonly DeviceLoad[], tick: number): number {
  // Exported, so checked: an unknown placement was treated as FreeMemory, and a tick of NaN or
  // 0.5 crashed reading 'index' of undefined.
  checkPlacement(placement, 'chooseDevice');
  if (!Array.isArray(loads))
    throw new TypeError(`chooseDevice: loads must be an array, got ${loads === null ? 'null' : typeof loads}`);
  if (!Number.isSafeInteger(tick) || tick < 0)
    throw new RangeError(`chooseDevice: tick must be an integer >= 0, got ${tick}`);
  return pickDevice(placement, loads, tick);
}

/** chooseDevice without its checks, for a caller that made them once (DevicePool: the placement when set): every placement runs it. */
export function pickDevice(placement: DevicePlacement, loads: readonly DeviceLoad[], tick: number): number {
  const n = loads.length;
  if (n === 0) throw new RangeError('no devices to choose from');
  const start = ((tick % n) + n) % n;
  if (placement === 'RoundRobin') return loads[start]!.index;
  let best = loads[start]!;
  for (let k = 1; k < n; k++) {
    const c = loads[(start + k) % n]!;
    if (placement === 'LeastLoaded') {
      if (c.outstanding < best.outstanding) best = c;
    } else if (c.freeBytes > best.freeBytes || (c.freeBytes === best.freeBytes && c.outstanding < best.outstanding))
      best = c;
  }
  return best.index;
}

/**
 * Resolves a `devices` option to ordinals by the one placement rule (runtime/placement-rules.ts
 * selectDevices): 'all' (or nothing) is every device; numbers are checked against `count`.
 */
export function resolveDeviceList(
  devices: 'all' | readonly number[] | undefined,
  count: number,
  what: string,
): number[] {
  return selectDevices({ devices }, count, what, 'all');
}
