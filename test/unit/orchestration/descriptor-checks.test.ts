/**
 * Orchestration's descriptors and exported choosers refuse wrong values before the driver is
 * asked for anything (this suite runs without a GPU: a check made after the driver would
 * surface as "no CUDA device is visible" or CudaUnavailableError instead).
 */
import { describe, expect, it } from 'vitest';
import '../../../src/runtime/device.js'; // registers the Device class placements resolve with (tools/layers.ts: device-load)
import { DevicePool } from '../../../src/orchestration/device-pool.js';
import { chooseDevice, type DeviceLoad } from '../../../src/orchestration/device-placement.js';
import { Profiler } from '../../../src/orchestration/profiler.js';
import { StreamPool } from '../../../src/orchestration/stream-pool.js';
import { chooseStream, type StreamLoad } from '../../../src/orchestration/strategy.js';

const TIMEOUT = { timeout: 5_000 };

describe('DevicePool names a bad option before looking for devices', () => {
  it('an unknown strategy', TIMEOUT, () => {
    expect(() => new DevicePool({ strategy: 'Bogus' as never })).toThrow(
      new TypeError('device pool: strategy must be one of RoundRobin, LoadBalanced, Priority, Workload; got "Bogus"'),
    );
  });

  it.each([
    [
      'an unknown priority',
      [{ priority: 'urgent' }],
      'device pool: streams[0].priority must be one of high, normal, low; got "urgent"',
    ],
    [
      'an unknown purpose',
      [{ purpose: 'x' }],
      'device pool: streams[0].purpose must be one of ConfigUpload, KernelExecution, TelemetryDownload, P2PTransfer, AuxCompute; got "x"',
    ],
    ['a null entry', [null], 'device pool: streams[0] must be an object { priority?, purpose?, stream?, label? }'],
    ['a string', 'x', 'device pool: streams must be an array of stream specs { priority?, purpose?, ... }, got string'],
    ['no streams', [], 'device pool: a StreamPool needs at least one stream'],
  ])('streams: %s', TIMEOUT, (_, streams, message) => {
    expect(() => new DevicePool({ streams: streams as never })).toThrow(message);
  });

  it('an unknown key, with the known ones', TIMEOUT, () => {
    expect(() => new DevicePool({ placment: 'RoundRobin' } as never)).toThrow(
      new TypeError(
        'DevicePool descriptor.placment: unknown option (known: devices, placement, streams, strategy, profiler, label)',
      ),
    );
  });

  it('placement is a checked setter, as StreamPool.strategy is', TIMEOUT, () => {
    const setter = Object.getOwnPropertyDescriptor(DevicePool.prototype, 'placement')?.set;
    expect(setter).toBeTypeOf('function');
    // The check comes before the field is written, so it runs on a stand-in for the pool.
    expect(() => setter!.call({ label: 'pool' }, 'Bogus')).toThrow(
      new TypeError('pool: unknown placement "Bogus"; expected one of RoundRobin, LeastLoaded, FreeMemory'),
    );
  });
});

describe('StreamPool and Profiler', () => {
  it('a null descriptor is a TypeError naming the call', TIMEOUT, () => {
    expect(() => new StreamPool(null as never)).toThrow(
      new TypeError('new StreamPool() takes a descriptor object, got null'),
    );
    expect(() => new Profiler(null as never)).toThrow(
      new TypeError('new Profiler() takes a descriptor object, got null'),
    );
  });

  it('a misspelt StreamPool option is refused by name before the driver', TIMEOUT, () => {
    expect(() => new StreamPool({ stratgy: 'Priority' } as never)).toThrow(
      new TypeError(
        'StreamPool descriptor.stratgy: unknown option (known: device, context, streams, strategy, profiler, label)',
      ),
    );
  });

  it.each([-1, 0, 1.5, Number.NaN])('Profiler window %p is named before the driver', TIMEOUT, (window) => {
    expect(() => new Profiler({ window, label: 'p' })).toThrow(
      new RangeError(`p: window must be a positive integer (or Infinity), got ${window}`),
    );
  });

  it('Profiler enabled must be a boolean', TIMEOUT, () => {
    expect(() => new Profiler({ enabled: 'yes' as never, label: 'p' })).toThrow(
      new TypeError('p: enabled must be a boolean, got string'),
    );
  });
});

describe('the exported choosers check their arguments', () => {
  const devices: DeviceLoad[] = [
    { index: 0, outstanding: 0, freeBytes: 10 },
    { index: 1, outstanding: 1, freeBytes: 5 },
  ];
  const streams: StreamLoad[] = [
    { index: 0, outstanding: 0, priority: 'high', purpose: 'KernelExecution' },
    { index: 1, outstanding: 0, priority: 'low', purpose: 'ConfigUpload' },
  ];

  it.each([Number.NaN, 0.5, Infinity, -1])('chooseDevice tick %p', TIMEOUT, (tick) => {
    expect(() => chooseDevice('RoundRobin', devices, tick)).toThrow(
      new RangeError(`chooseDevice: tick must be an integer >= 0, got ${tick}`),
    );
  });

  it('chooseDevice: an unknown placement, loads that are not an array', TIMEOUT, () => {
    expect(() => chooseDevice('Bogus' as never, devices, 0)).toThrow(
      new TypeError('chooseDevice: unknown placement "Bogus"; expected one of RoundRobin, LeastLoaded, FreeMemory'),
    );
    expect(() => chooseDevice('RoundRobin', null as never, 0)).toThrow(
      new TypeError('chooseDevice: loads must be an array, got null'),
    );
    expect(chooseDevice('LeastLoaded', devices, 1)).toBe(0);
  });

  it.each([Number.NaN, 0.5, -1])('chooseStream tick %p', TIMEOUT, (tick) => {
    expect(() => chooseStream('LoadBalanced', streams, {}, tick)).toThrow(
      new RangeError(`chooseStream: tick must be an integer >= 0, got ${tick}`),
    );
  });

  it('chooseStream: an unknown strategy or workload, a null request', TIMEOUT, () => {
    expect(() => chooseStream('Bogus' as never, streams, {}, 0)).toThrow(
      new TypeError('chooseStream: strategy must be one of RoundRobin, LoadBalanced, Priority, Workload; got "Bogus"'),
    );
    expect(() => chooseStream('Workload', streams, { workload: 'Bogus' as never }, 0)).toThrow(
      new TypeError('chooseStream: request.workload must be one of Compute, Memory, Mixed, Coordination; got "Bogus"'),
    );
    expect(() => chooseStream('RoundRobin', streams, null as never, 0)).toThrow(TypeError);
    expect(chooseStream('Workload', streams, { workload: 'Memory' }, 0)).toBe(1);
  });
});
