/**
 * `--device I` and `--devices L` of the GPU commands (demo, stft), read by the one placement
 * rule (runtime/placement-rules.ts): the spelling is checked here, before any GPU is touched; the
 * ordinals against the machine when the command runs (resolvePlacement), so a device the machine
 * lacks is refused with its count, never replaced by device 0.
 */
import { parseDeviceList, PlacementError, selectDevices } from '../runtime/placement-rules.js';
import { intOption, UsageError } from './options.js';

/** What a command's device options select: every device, or these ordinals. */
export type DeviceSelection = 'all' | number[];

/** The usage lines of the two options, for the commands' help texts. */
export const DEVICE_OPTIONS_USAGE = `  --devices L   GPUs to use: "all" (default) or ordinals like 0,1
  --device I    one GPU (the same as --devices I)`;

/** `--devices` and `--device` as one selection ('all' when neither is given); UsageError for both, or a bad spelling. */
export function deviceSelection(values: {
  device?: string | undefined;
  devices?: string | undefined;
}): DeviceSelection {
  if (values.device !== undefined && values.devices !== undefined)
    throw new UsageError('give --device or --devices, not both');
  if (values.device !== undefined) return [intOption('device', values.device, 0, 1023)!];
  if (values.devices === undefined) return 'all';
  try {
    const devices = parseDeviceList(values.devices, '--devices');
    // Repeats by the rule itself, before any GPU is touched (no count yet: the machine's is checked when the command runs).
    if (devices !== 'all') selectDevices({ devices }, Infinity, '--devices');
    return devices;
  } catch (e) {
    if (e instanceof PlacementError) throw new UsageError(e.message);
    throw e;
  }
}
