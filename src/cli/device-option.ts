/**
 * `--devices L` and `--device I`, the one device option of every GPU command (demo, stft, filter,
 * worker, serve): parsed here once into a DeviceSelection, with one default for all of them,
 * every visible GPU. The spelling is checked here, before any GPU is touched; the ordinals against
 * the machine by the one placement rule (runtime/placement-rules.ts, through resolvePlacement or
 * the engine) when the command runs, so a device the machine lacks is refused with its count,
 * never replaced by another.
 */
import { parseDeviceList, PlacementError, selectDevices } from '../runtime/placement-rules.js';
import { intOption, UsageError } from './options.js';

/** What a command's device options select: every device, or these ordinals. */
export type DeviceSelection = 'all' | number[];

/** The selection of a command given neither option: every GPU the machine shows (CUDA_VISIBLE_DEVICES applies). */
export const DEFAULT_DEVICES: DeviceSelection = 'all';

/** The largest ordinal either option may name, checked at parse time (whether it exists is the machine's check). */
export const MAX_DEVICE_ORDINAL = 1023;

/** The two options as parseCommandLine takes them: spread into every GPU command's option table. */
export const DEVICE_FLAGS = {
  device: { type: 'string' },
  devices: { type: 'string' },
} as const;

/** What `--devices` says in every command's help, word for word (a unit test holds each command to it). */
export const DEVICES_HELP = 'GPUs to use: "all" (default: every visible GPU) or ordinals like 0,1';

/**
 * The usage lines of the two options, the same words in every command's help (DEVICES_HELP), the
 * descriptions starting at `column` (the command's own column). `use` lines, when given, follow
 * `--devices`: what the command does with the GPUs.
 */
export function deviceOptionsUsage(column: number, ...use: string[]): string {
  const line = (flag: string, text: string): string => `  ${flag.padEnd(column - 3)} ${text}`;
  return [
    line('--devices L', DEVICES_HELP),
    ...use.map((text) => `${' '.repeat(column)}${text}`),
    line('--device I', 'one GPU (the same as --devices I)'),
  ].join('\n');
}

/** `--devices` and `--device` as one selection (DEFAULT_DEVICES when neither is given); UsageError for both, or a bad spelling. */
export function deviceSelection(values: {
  device?: string | undefined;
  devices?: string | undefined;
}): DeviceSelection {
  if (values.device !== undefined && values.devices !== undefined)
    throw new UsageError('give --device or --devices, not both');
  if (values.device !== undefined) return [intOption('device', values.device, 0, MAX_DEVICE_ORDINAL)!];
  if (values.devices === undefined) return DEFAULT_DEVICES;
  try {
    const devices = parseDeviceList(values.devices, '--devices');
    if (devices === 'all') return devices;
    const high = devices.find((d) => d > MAX_DEVICE_ORDINAL);
    if (high !== undefined) throw new UsageError(`--devices: ordinal ${high} is above ${MAX_DEVICE_ORDINAL}`);
    // Repeats by the rule itself, before any GPU is touched (existence is checked when the command runs).
    selectDevices({ devices }, MAX_DEVICE_ORDINAL + 1, '--devices');
    return devices;
  } catch (e) {
    if (e instanceof PlacementError) throw new UsageError(e.message);
    throw e;
  }
}
