/**
 * The one placement rule (docs/several-gpus.md), CUDA-free so it is unit tested: every API that
 * takes a device (JobEngine, DevicePool, the CLI's --device/--devices, the server's workers)
 * resolves `device` | `devices` | `context` to device ordinals here, with the same errors.
 *
 * - `devices` comes alone; `device` and `context` together must name the same device (code that
 *   forwards a context beside a caller's `device` stays valid); any other pair is refused.
 * - `devices: 'all'` is every device; a list is non-empty, each ordinal once, each one present.
 * - An ordinal the machine does not have is refused, naming how many it has: never a silent
 *   fallback to device 0.
 * - Nothing given: `fallback` says what the API means by default ('first': device 0, 'all').
 */
import { typeName } from './article.js';

/** A placement with devices named by ordinal (placement.ts turns Devices and Contexts into ordinals). */
export interface OrdinalPlacement {
  device?: number | undefined;
  devices?: 'all' | readonly number[] | undefined;
  /** The ordinal of the device of a given context. */
  context?: number | undefined;
}

/** What an API means when a call names no device: device 0 ('first') or every device ('all'). */
export type PlacementFallback = 'first' | 'all';

/** A placement that names no device, a device that does not exist, a device twice, or two of device/devices/context. */
export class PlacementError extends RangeError {
  override readonly name = 'PlacementError';
}

/** `value` as a device ordinal by its shape alone (any machine would refuse it otherwise). */
function ordinalShape(value: unknown, field: string, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new PlacementError(`${what}: ${field} must be a non-negative integer device ordinal, got ${describe(value)}`);
  return value;
}

function checkOrdinal(value: number, field: string, count: number, what: string): number {
  if (value >= count)
    throw new PlacementError(
      `${what}: device ${value} does not exist (${field}; this machine has ${count} CUDA device${count === 1 ? '' : 's'}${count > 0 ? `: 0..${count - 1}` : ''})`,
    );
  return value;
}

/**
 * The ordinals a placement selects on a machine with `count` devices, in the order given.
 * `what` names the API in errors ("JobEngine", "tscuda demo --devices"). `noDeviceReason` says why
 * the machine has none when `count` is 0 (no driver, a driver too old): the error names that cause,
 * which a user can act on, rather than only "no device".
 */
export function selectDevices(
  placement: OrdinalPlacement,
  count: number,
  what: string,
  fallback: PlacementFallback = 'first',
  noDeviceReason?: string,
): number[] {
  if (typeof placement !== 'object' || placement === null)
    throw new TypeError(
      `${what}: placement must be an object { device?, devices?, context? }, got ${describe(placement)}`,
    );
  const given = (['device', 'devices', 'context'] as const).filter((k) => placement[k] !== undefined);
  const agreeing = given.length === 2 && placement.devices === undefined && placement.device === placement.context;
  if (given.length > 1 && !agreeing)
    throw new PlacementError(
      `${what}: give one of device, devices and context, not ${given.join(' and ')}${placement.devices === undefined ? ' naming different devices' : ''}`,
    );
  // The placement's own shape first: a mistake in it is named on any machine, with a GPU or without.
  const devices = placement.devices;
  const single =
    placement.device !== undefined
      ? ordinalShape(placement.device, 'device', what)
      : placement.context !== undefined
        ? ordinalShape(placement.context, 'context device', what)
        : undefined;
  let listed: number[] | undefined;
  if (single === undefined && devices !== undefined && devices !== 'all') {
    if (!Array.isArray(devices) || devices.length === 0)
      throw new TypeError(
        `${what}: devices must be 'all' or a non-empty array of device ordinals, got ${describe(devices)}`,
      );
    const seen = new Set<number>();
    listed = devices.map((d: unknown, i) => {
      const ordinal = ordinalShape(d, `devices[${i}]`, what);
      if (seen.has(ordinal)) throw new PlacementError(`${what}: device ${ordinal} is listed twice in devices`);
      seen.add(ordinal);
      return ordinal;
    });
  }
  if (count < 1)
    throw new PlacementError(
      `${what}: no CUDA device is visible${noDeviceReason === undefined ? '' : `: ${noDeviceReason}`}`,
    );
  if (single !== undefined)
    return [checkOrdinal(single, placement.device !== undefined ? 'device' : 'context device', count, what)];
  if (listed !== undefined) return listed.map((ordinal, i) => checkOrdinal(ordinal, `devices[${i}]`, count, what));
  return devices === 'all' || fallback === 'all' ? Array.from({ length: count }, (_, i) => i) : [0];
}

/**
 * A command-line device list: "all", or ordinals separated by commas ("0", "0,1"). The ordinals
 * are checked against the machine by selectDevices; here only the spelling is.
 */
export function parseDeviceList(text: string, flag: string): 'all' | number[] {
  const t = text.trim();
  if (t === 'all') return 'all';
  if (!/^\d+(\s*,\s*\d+)*$/.test(t))
    throw new PlacementError(`${flag} must be "all" or device ordinals like 0,1; got ${JSON.stringify(text)}`);
  return t.split(',').map((s) => Number(s.trim()));
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map((x) => describe(x)).join(', ')}]`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'object') return typeName(v);
  return String(v);
}
