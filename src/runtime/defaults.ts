/**
 * Where work goes when a call does not say: the one place that resolves a device or context
 * option (docs/design.md: "default device/context resolved in one function").
 */
import { Context } from './context.js';
import { PlacementError, selectDevices, type PlacementFallback } from './placement-rules.js';
import { describeValue, expectResource } from './resource.js';
import type { Device } from './types.js';

/**
 * What this file needs of the Device class: device.ts registers it when it loads. device.ts
 * cannot be imported here: its factories (`device.createStream()`, ...) import Stream and the
 * other classes, which import this file. Every program loads device.ts before it places work:
 * each entry point imports it, and tools/layers.ts checks that every program of the repository
 * that reaches this file also loads device.ts.
 */
export interface DeviceClass {
  /** `Device.get(ordinal)`. */
  get(ordinal: number): Device;
  /** `value instanceof Device`. */
  is(value: unknown): value is Device;
  /** `Device.count()`: how many devices the machine has (0 without a driver). */
  count(): number;
  /** Why the machine has no device (`Device.available()`'s reason: no driver, too old, none visible), or undefined when it has one. */
  unavailableReason(): string | undefined;
}

let deviceClass: DeviceClass | undefined;

/** Called once by device.ts as it loads. */
export function registerDeviceClass(c: DeviceClass): void {
  deviceClass = c;
}

function devices(): DeviceClass {
  if (deviceClass === undefined)
    throw new Error(
      'tscuda: src/runtime/device.ts was never loaded, so no device can be resolved; import tscuda through an entry point (tscuda, tscuda/runtime, ...)',
    );
  return deviceClass;
}

/** True for a Device (a brand check through the registered class). */
export function isDevice(value: unknown): value is Device {
  return devices().is(value);
}

/**
 * The placement option every API that allocates or enqueues takes. `device` is the one name to
 * use (a Device or its ordinal); `context` is accepted too, as earlier releases spelled it.
 */
export interface Placement {
  /** The device to place work on (a Device or its ordinal); default device 0. */
  device?: Device | number | undefined;
  /** The context to place work in; same as `device: context.device` (its primary context). */
  context?: Context | undefined;
}

/** The device used when a call names none: ordinal 0. */
export function defaultDevice(): Device {
  return devices().get(0);
}

/**
 * The context a call's options select: `context`, else `device`'s primary context, else device 0's.
 * A stream or pool that carries its own context places the work (callers pass it as `owner`); a
 * `device` or `context` naming another device beside it is refused (PlacementError).
 */
export function resolveContext(options: Placement | undefined, owner?: { readonly context: Context }): Context {
  if (owner) {
    // The stream's (or pool's) device places the work; a device or context naming another one is refused, never overridden silently.
    if (
      options !== undefined &&
      (options.device !== undefined || options.context !== undefined) &&
      resolveContext({ device: options.device, context: options.context }).device !== owner.context.device
    )
      throw new PlacementError(
        `placement: the device given is not the device of ${owner.context.label}, where the stream or pool given lives; give one of them`,
      );
    return owner.context;
  }
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError(`placement options must be an object { device?, context? }, got ${describeValue(options)}`);
  if (options?.context !== undefined) {
    const context = expectResource(options.context, Context, 'context');
    // One placement rule (placement-rules.ts): a device and a context naming different devices are refused, not ranked.
    const device: unknown = options.device;
    const ordinal = isDevice(device) ? device.ordinal : device;
    if (ordinal !== undefined && ordinal !== context.device.ordinal)
      throw new PlacementError(
        `placement: device ${describeValue(ordinal)} and context (${context.label}) name different devices; give one of them`,
      );
    return context;
  }
  const device = options?.device;
  if (device === undefined) return defaultDevice().context;
  if (typeof device === 'number') return devices().get(device).context;
  if (!devices().is(device)) throw new TypeError(`device must be a Device or an ordinal, got ${describeValue(device)}`);
  return device.context;
}

/** The placement of APIs that may span several devices: Placement's `device` or `context`, or `devices` (a list, or 'all'). */
export interface DevicesPlacement extends Placement {
  /** Several devices: 'all', or Devices / ordinals, each once. */
  devices?: 'all' | readonly (Device | number)[] | undefined;
}

/**
 * The devices a placement selects: the one function every API that takes a device resolves its
 * option with (JobEngine, DevicePool, the CLI's --device / --devices; the server's workers).
 * The rules are placement-rules.ts's: one of `device`, `devices`, `context`; ordinals checked
 * against the machine (the error names how many devices it has); a device listed twice refused;
 * nothing given means device 0 (`fallback: 'first'`) or every device (`fallback: 'all'`).
 * `what` names the caller in errors.
 */
export function resolvePlacement(
  options: DevicesPlacement | undefined,
  what: string,
  fallback: PlacementFallback = 'first',
): Device[] {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError(
      `${what}: placement options must be an object { device?, devices?, context? }, got ${describeValue(options)}`,
    );
  const o = options ?? {};
  const ordinal = (d: unknown, field: string): number => {
    if (isDevice(d)) return d.ordinal;
    if (typeof d === 'number') return d;
    throw new TypeError(`${what}: ${field} must be a Device or an ordinal, got ${describeValue(d)}`);
  };
  const list = o.devices;
  const count = devices().count();
  const ordinals = selectDevices(
    {
      device: o.device === undefined ? undefined : ordinal(o.device, 'device'),
      context:
        o.context === undefined ? undefined : expectResource(o.context, Context, `${what}: context`).device.ordinal,
      devices:
        list === undefined || list === 'all'
          ? list
          : Array.isArray(list)
            ? list.map((d: unknown, i) => ordinal(d, `devices[${i}]`))
            : (list as never),
    },
    count,
    what,
    fallback,
    count === 0 ? devices().unavailableReason() : undefined,
  );
  return ordinals.map((i) => devices().get(i));
}
