/**
 * `tscuda serve`'s options into the server (CUDA-free): --devices through the one placement rule
 * (spelling and repeats at parse time; worker i on devices[i % n]; --workers 0 keeps the whole
 * list for one engine), the limits with a flag each (--json-limit, --body-timeout), --timeout
 * bounded by the timeout rule, and the one serverOptions() both serving paths build from.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../../src/cli/commands/serve-options.js';
import { createServer } from '../../../src/server/create-server.js';
import { DEFAULT_LIMITS } from '../../../src/server/options.js';
import type { WorkerConfig } from '../../../src/server/supervision/protocol.js';
import { PROCESS_INFO_ENV, serverLimits, serverOptions } from '../../../src/server/supervision/server-options.js';
import { spreadDevices, workerDevice } from '../../../src/server/supervision/worker-devices.js';
import { Device } from '../../../src/runtime/device.js';
import { buildPartsOrNone } from '../../../src/server/supervision/gpu-parts.js';
import { FakeEngine } from './fake-engine.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const MAIN = join(ROOT, 'src/cli/main.ts');

async function config(args: string[]): Promise<WorkerConfig> {
  const p = await parseServeArgs(args);
  if (p.help) throw new Error('help');
  return p.config;
}

describe('serve --devices', () => {
  it('is spelled by the placement rule: a list, or all; default every GPU, as every command', async () => {
    expect((await config([])).devices).toBe('all');
    expect((await config(['--device', '1'])).devices).toEqual([1]);
    expect((await config(['--devices', '0,1'])).devices).toEqual([0, 1]);
    expect((await config(['--devices', '1, 0'])).devices).toEqual([1, 0]);
    expect((await config(['--devices', 'all'])).devices).toBe('all');
  });

  it('refuses a bad spelling and a device listed twice, naming --devices', async () => {
    await expect(parseServeArgs(['--devices', '0,x'])).rejects.toThrow(/--devices must be "all" or device ordinals/);
    await expect(parseServeArgs(['--devices', '-1'])).rejects.toThrow(/--devices/);
    await expect(parseServeArgs(['--devices', ''])).rejects.toThrow(/--devices/);
    await expect(parseServeArgs(['--devices', '1,0,1'])).rejects.toThrow(/--devices: device 1 is listed twice/);
    await expect(parseServeArgs(['--devices', '0,99999999999999999999'])).rejects.toThrow(
      /--devices: ordinal 100000000000000000000 is above 1023/,
    );
  });

  it('workers spread round robin: worker i on devices[i % n]', () => {
    const devices = spreadDevices([2, 0], 0);
    expect([0, 1, 2, 3, 4].map((i) => workerDevice(devices, i))).toEqual([2, 0, 2, 0, 2]);
    expect(spreadDevices('all', 3)).toEqual([0, 1, 2]);
    // No device visible: one slot named 0, whose worker serves without an engine and says why.
    expect(spreadDevices('all', 0)).toEqual([0]);
    expect(() => workerDevice([], 0)).toThrow(/empty/);
  });

  it('a repeated device is bad usage: one line, exit 2, before anything starts', async () => {
    const r = await execa('node', ['--import', 'tsx', MAIN, 'serve', '--workers', '0', '--devices', '0,0'], {
      cwd: ROOT,
      reject: false,
      timeout: 30_000,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--devices: device 0 is listed twice/);
  }, 40_000);
});

describe('serve limits', () => {
  it('--json-limit and --body-timeout set the limits that had no flag', async () => {
    const c = await config(['--json-limit', '4', '--body-timeout', '2500']);
    expect(c.jsonBodyLimitBytes).toBe(4 * 2 ** 20);
    expect(c.bodyTimeoutMs).toBe(2500);
    const d = await config([]);
    expect(d.jsonBodyLimitBytes).toBe(DEFAULT_LIMITS.jsonBodyLimitBytes);
    expect(d.bodyTimeoutMs).toBe(DEFAULT_LIMITS.bodyTimeoutMs);
    // JSON keeps its own small default under a binary limit of any size.
    expect((await config(['--body-limit', '8'])).jsonBodyLimitBytes).toBe(2 ** 20);
  });

  it('refuses a JSON limit above 256 MiB or above --body-limit, and a body timeout of 0', async () => {
    await expect(parseServeArgs(['--json-limit', '257'])).rejects.toThrow(/--json-limit must be at most 256/);
    await expect(parseServeArgs(['--json-limit', '32', '--body-limit', '16'])).rejects.toThrow(
      /--json-limit must be at most --body-limit \(16 MiB\)/,
    );
    await expect(parseServeArgs(['--json-limit', '0'])).rejects.toThrow(/--json-limit must be an integer >= 1/);
    await expect(parseServeArgs(['--body-timeout', '0'])).rejects.toThrow(/--body-timeout must be an integer >= 1/);
  });

  it('--timeout is 1..2^31-1 ms (the most a Node timer holds)', async () => {
    expect((await config(['--timeout', '2147483647'])).defaultTimeoutMs).toBe(2 ** 31 - 1);
    await expect(parseServeArgs(['--timeout', '2147483648'])).rejects.toThrow(
      /--timeout must be at most 2147483647 \(the most a Node timer holds\)/,
    );
    await expect(parseServeArgs(['--timeout', '0'])).rejects.toThrow(/--timeout must be an integer >= 1/);
    await expect(parseServeArgs(['--body-timeout', '99999999999'])).rejects.toThrow(
      /--body-timeout must be at most 2147483647/,
    );
  });
});

describe('serverOptions(config)', () => {
  const base: WorkerConfig = { port: 0, host: '127.0.0.1' };

  it('maps every limit of the configuration, and only those given', () => {
    expect(serverLimits(base)).toEqual({});
    const all: WorkerConfig = {
      ...base,
      maxPending: 7,
      maxEventLoopDelayMs: 11,
      maxTurnMs: 13,
      defaultTimeoutMs: 1700,
      bodyLimitBytes: 19 * 2 ** 20,
      jsonBodyLimitBytes: 3 * 2 ** 20,
      bodyTimeoutMs: 2300,
    };
    expect(serverLimits(all)).toEqual({
      maxPending: 7,
      maxEventLoopDelayMs: 11,
      maxTurnMs: 13,
      defaultTimeoutMs: 1700,
      bodyLimitBytes: 19 * 2 ** 20,
      jsonBodyLimitBytes: 3 * 2 ** 20,
      bodyTimeoutMs: 2300,
    });
  });

  it('the server built from the parsed flags runs with them (/v1/info limits), owns its engine, and shows the parts info', async () => {
    const c = await config([
      '--json-limit',
      '3',
      '--body-limit',
      '19',
      '--body-timeout',
      '2300',
      '--timeout',
      '1700',
      '--max-pending',
      '7',
      '--log',
    ]);
    const engine = new FakeEngine();
    const options = serverOptions(c, { engine, info: () => ({ devices: [{ ordinal: 0 }] }) });
    expect(options).toMatchObject({ engine, ownsEngine: true, logger: true });
    const server = createServer({ ...options, logger: false });
    try {
      const info = (await server.app.inject({ method: 'GET', url: '/v1/info' })).json() as {
        limits: Record<string, number>;
        devices: unknown;
      };
      expect(info.limits).toMatchObject({
        jsonBodyLimitBytes: 3 * 2 ** 20,
        bodyLimitBytes: 19 * 2 ** 20,
        bodyTimeoutMs: 2300,
        defaultTimeoutMs: 1700,
        maxPending: 7,
      });
      expect(info.devices).toEqual([{ ordinal: 0 }]);
    } finally {
      await server.close();
    }
    // ownsEngine: closing the server closed the engine.
    expect(() => engine.submit({ data: new Float32Array(64), flags: ['stft'] })).toThrow();
  });

  it('a server without an engine says why', () => {
    const options = serverOptions(base, { engine: null, unavailableReason: 'no usable CUDA device: test' });
    expect(options).toMatchObject({ engine: null, unavailableReason: 'no usable CUDA device: test', logger: false });
  });

  it('process details in /v1/info only with TSCUDA_SERVE_PROCESS_INFO=1', () => {
    expect(serverOptions(base, { engine: null }, {}).exposeProcessInfo).toBe(false);
    expect(serverOptions(base, { engine: null }, { [PROCESS_INFO_ENV]: 'yes' }).exposeProcessInfo).toBe(false);
    expect(serverOptions(base, { engine: null }, { [PROCESS_INFO_ENV]: '1' }).exposeProcessInfo).toBe(true);
  });
});

describe('a serve process on a machine without a GPU', () => {
  // On a GPU host this would build a real engine: the GPU suite covers that (test/gpu/server).
  it.skipIf(Device.count() > 0)(
    'builds no engine and says why, for any --devices (the placement rule refusing "no device visible" is not a failed start)',
    async () => {
      for (const devices of [[0], [0, 1], 'all'] as const) {
        const parts = await buildPartsOrNone({
          port: 0,
          host: '127.0.0.1',
          devices: devices === 'all' ? devices : [...devices],
        });
        expect(parts.engine).toBeNull();
        expect(parts.unavailableReason).toMatch(/^no usable CUDA device: /);
      }
    },
  );
});
