/**
 * Where work goes when a call does not say: the one place that resolves a device or context
 * option (docs/design.md: "default device/context resolved in one function").
 */
import { Context } from './context.js';
import { Device } from './device.js';
import { describeValue, expectResource } from './resource.js';

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
  return Device.get(0);
}

/**
 * The context a call's options select: `context`, else `device`'s primary context, else device 0's.
 * A stream or pool that carries its own context wins over both (callers pass it as `owner`).
 */
export function resolveContext(options: Placement | undefined, owner?: { readonly context: Context }): Context {
  if (owner) return owner.context;
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError(`placement options must be an object { device?, context? }, got ${describeValue(options)}`);
  if (options?.context !== undefined) return expectResource(options.context, Context, 'context');
  const device = options?.device;
  if (device === undefined) return defaultDevice().context;
  if (typeof device === 'number') return Device.get(device).context;
  if (!(device instanceof Device)) throw new TypeError(`device must be a Device or an ordinal, got ${describeValue(device)}`);
  return device.context;
}
