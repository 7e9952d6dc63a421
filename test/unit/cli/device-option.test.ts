/**
 * `--devices` / `--device`, the one device option of every GPU command (src/cli/device-option.ts):
 * its parse and its one default (every GPU), and that each command takes it, defaults to it and
 * says it in the same words in its help. CUDA-free: nothing here asks the machine.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/commands/index.js';
import { parseDemoOptions } from '../../../src/cli/commands/demo.js';
import { parseFilterOptions } from '../../../src/cli/commands/filter-plan.js';
import { parseServeArgs } from '../../../src/cli/commands/serve-options.js';
import { parseStftOptions } from '../../../src/cli/commands/stft-plan.js';
import { parseWorkerArgs } from '../../../src/cli/commands/worker.js';
import {
  DEFAULT_DEVICES,
  DEVICES_HELP,
  deviceOptionsUsage,
  deviceSelection,
  MAX_DEVICE_ORDINAL,
  type DeviceSelection,
} from '../../../src/cli/device-option.js';
import { UsageError } from '../../../src/cli/options.js';

describe('deviceSelection', () => {
  it('defaults to every GPU when neither option is given', () => {
    expect(DEFAULT_DEVICES).toBe('all');
    expect(deviceSelection({})).toBe('all');
    expect(deviceSelection({ device: undefined, devices: undefined })).toBe('all');
  });

  it('reads a list, "all", and one device', () => {
    expect(deviceSelection({ devices: '0,1' })).toEqual([0, 1]);
    expect(deviceSelection({ devices: ' 2 , 0 ' })).toEqual([2, 0]);
    expect(deviceSelection({ devices: 'all' })).toBe('all');
    expect(deviceSelection({ device: '3' })).toEqual([3]);
    expect(deviceSelection({ device: String(MAX_DEVICE_ORDINAL) })).toEqual([MAX_DEVICE_ORDINAL]);
    expect(deviceSelection({ devices: String(MAX_DEVICE_ORDINAL) })).toEqual([MAX_DEVICE_ORDINAL]);
  });

  it('refuses both options, a bad spelling, a repeat and an ordinal above the bound, as bad usage naming the option', () => {
    const cases: [Parameters<typeof deviceSelection>[0], RegExp][] = [
      [{ device: '0', devices: '1' }, /give --device or --devices, not both/],
      [{ devices: '0,x' }, /--devices must be "all" or device ordinals like 0,1; got "0,x"/],
      [{ devices: '' }, /--devices must be "all"/],
      [{ devices: '-1' }, /--devices must be "all"/],
      [{ devices: '1,0,1' }, /--devices: device 1 is listed twice/],
      [
        { devices: `0,${MAX_DEVICE_ORDINAL + 1}` },
        new RegExp(`--devices: ordinal ${MAX_DEVICE_ORDINAL + 1} is above ${MAX_DEVICE_ORDINAL}`),
      ],
      [{ device: String(MAX_DEVICE_ORDINAL + 1) }, new RegExp(`--device must be between 0 and ${MAX_DEVICE_ORDINAL}`)],
      [{ device: 'all' }, /--device must be a whole number/],
    ];
    for (const [values, message] of cases) {
      expect(() => deviceSelection(values), JSON.stringify(values)).toThrow(UsageError);
      expect(() => deviceSelection(values), JSON.stringify(values)).toThrow(message);
    }
  });

  it('writes its usage lines at the command column, the use lines after --devices', () => {
    expect(deviceOptionsUsage(16).split('\n')).toEqual([
      `  --devices L   ${DEVICES_HELP}`,
      '  --device I    one GPU (the same as --devices I)',
    ]);
    expect(deviceOptionsUsage(14, 'spread', 'over them').split('\n')).toEqual([
      `  --devices L ${DEVICES_HELP}`,
      '              spread',
      '              over them',
      '  --device I  one GPU (the same as --devices I)',
    ]);
  });
});

/** Every GPU command, with what it selects for a command line of device options. */
const GPU_COMMANDS: Record<string, (deviceArgs: string[]) => Promise<DeviceSelection>> = {
  demo: async (a) => parseDemoOptions(a).devices,
  stft: async (a) => {
    const o = parseStftOptions(['signal.wav', ...a]);
    if (o === 'help') throw new Error('help');
    return o.devices;
  },
  filter: async (a) => {
    const o = parseFilterOptions(['signal.wav', '--lowpass', '10', ...a]);
    if (o === 'help') throw new Error('help');
    return o.devices;
  },
  worker: async (a) => {
    const o = parseWorkerArgs(['--redis', 'redis://127.0.0.1:6379', ...a]);
    if (o.help) throw new Error('help');
    return o.devices;
  },
  serve: async (a) => {
    // --workers given: the default worker count would count the machine's GPUs.
    const o = await parseServeArgs(['--workers', '1', ...a]);
    if (o.help) throw new Error('help');
    if (o.config.devices === undefined) throw new Error('serve left its devices out');
    return o.config.devices;
  },
};

describe('every GPU command', () => {
  it('is every command whose help names --devices', () => {
    const named = COMMANDS.filter((c) => c.usage.includes('--devices')).map((c) => c.name);
    expect(named.sort()).toEqual(Object.keys(GPU_COMMANDS).sort());
  });

  it('says the same about --devices and --device in its help', () => {
    const said = (usage: string, flag: string): string | undefined =>
      usage
        .split('\n')
        .find((line) => line.trimStart().startsWith(`${flag} `))
        ?.trim()
        .replace(/\s+/g, ' ');
    for (const command of COMMANDS.filter((c) => c.name in GPU_COMMANDS)) {
      expect(said(command.usage, '--devices L'), command.name).toBe(`--devices L ${DEVICES_HELP}`);
      expect(said(command.usage, '--device I'), command.name).toBe('--device I one GPU (the same as --devices I)');
    }
  });

  it('defaults to every GPU, and reads --devices and --device alike', async () => {
    for (const [name, select] of Object.entries(GPU_COMMANDS)) {
      expect(await select([]), name).toBe('all');
      expect(await select(['--devices', '1,0']), name).toEqual([1, 0]);
      expect(await select(['--device', '1']), name).toEqual([1]);
      expect(await select(['--devices', 'all']), name).toBe('all');
      await expect(select(['--devices', '0,0']), name).rejects.toThrow(/--devices: device 0 is listed twice/);
    }
  });
});
