/** Options that cannot work are refused where they are given (issue 22), without a GPU. */
import { describe, expect, it } from 'vitest';
import '../../../src/runtime/device.js'; // registers the Device class placements resolve with (tools/layers.ts: device-load)
import { Coordinator } from '../../../src/orchestration/coordinator.js';
import type { StreamPool } from '../../../src/orchestration/stream-pool.js';
import {
  checkChoice,
  chooseStream,
  POOL_STRATEGIES,
  PRIORITY_LEVELS,
  STREAM_PURPOSES,
  WORKLOAD_TYPES,
  type StreamLoad,
} from '../../../src/orchestration/strategy.js';
import type { Stream } from '../../../src/runtime/stream.js';
import { FakePool } from './fake-pool.js';

describe('checkChoice', () => {
  it('returns a valid value and refuses anything else naming the option and the valid values', () => {
    for (const s of POOL_STRATEGIES) expect(checkChoice(s, POOL_STRATEGIES, 'strategy')).toBe(s);
    expect(() => checkChoice('Bogus', POOL_STRATEGIES, 'pool: strategy')).toThrow(
      new TypeError('pool: strategy must be one of RoundRobin, LoadBalanced, Priority, Workload; got "Bogus"'),
    );
    expect(() => checkChoice(3, STREAM_PURPOSES, 'purpose')).toThrow(
      /purpose must be one of ConfigUpload, .*; got number/,
    );
    expect(() => checkChoice(null, PRIORITY_LEVELS, 'priority')).toThrow(/got null/);
    // A long bad value is cut, never echoed whole.
    expect(() => checkChoice('x'.repeat(10_000), WORKLOAD_TYPES, 'workload')).toThrow(/got "x{40}\.\.\."$/);
  });

  it('every strategy the list names is one chooseStream() knows (it returned undefined for others)', () => {
    const loads: StreamLoad[] = [0, 1, 2].map((index) => ({
      index,
      outstanding: index,
      priority: 'normal',
      purpose: 'KernelExecution',
    }));
    for (const s of POOL_STRATEGIES) expect(typeof chooseStream(s, loads, {}, 0)).toBe('number');
  });
});

describe('Coordinator: an operation stream outside the pool', () => {
  it('refuses a look-alike stream object before its handle can reach the driver', () => {
    const pool = new FakePool();
    const coord = new Coordinator(pool as unknown as StreamPool);
    const fake = { label: 'fake', handle: 1n, context: {}, use: () => 1n, disposed: false } as unknown as Stream;
    expect(() => coord.add({ name: 'op', kind: 'kernel', run: () => undefined, stream: fake })).toThrow(
      /operation "op": stream must be a Stream, got a plain Object/,
    );
    expect(pool.log).toEqual([]);
  });

  it('takes a stream of the pool', () => {
    const pool = new FakePool();
    const coord = new Coordinator(pool as unknown as StreamPool);
    expect(coord.add({ name: 'op', kind: 'kernel', run: () => undefined, stream: pool.streams[1] })).toBe(1);
  });

  it('refuses a guestStreams that is not a boolean', () => {
    expect(() => new Coordinator(new FakePool() as unknown as StreamPool, { guestStreams: 'yes' as never })).toThrow(
      /guestStreams must be a boolean/,
    );
    // A missing pool or descriptor is named at once (it failed at the first add(), reading 'acquire' of null).
    expect(() => new Coordinator(null as never)).toThrow(/^coordinator: pool must be a StreamPool, got null$/);
    expect(() => new Coordinator({} as never)).toThrow(/pool must be a StreamPool, got an object without acquire\(\)/);
    expect(() => new Coordinator(new FakePool() as unknown as StreamPool, null as never)).toThrow(
      /^Coordinator descriptor must be an object, got null$/,
    );
  });
});

describe('StreamPool options', () => {
  it('refuses an unknown strategy at construction, before any CUDA call, naming the valid ones', async () => {
    const { StreamPool } = await import('../../../src/orchestration/index.js');
    expect(() => new StreamPool({ strategy: 'Bogus' as never, label: 'pool' })).toThrow(
      new TypeError('pool: strategy must be one of RoundRobin, LoadBalanced, Priority, Workload; got "Bogus"'),
    );
  });

  it('refuses bad stream specs before any CUDA call (they read as a missing driver without a GPU)', async () => {
    const { StreamPool } = await import('../../../src/orchestration/index.js');
    expect(() => new StreamPool({ streams: [], label: 'pool' })).toThrow(
      /^pool: a StreamPool needs at least one stream$/,
    );
    expect(() => new StreamPool({ streams: [{ priority: 'hgih' as never }], label: 'pool' })).toThrow(
      /^pool: streams\[0\]\.priority must be one of high, normal, low; got "hgih"$/,
    );
    expect(() => new StreamPool({ streams: [null as never], label: 'pool' })).toThrow(
      /^pool: streams\[0\] must be an object/,
    );
  });
});
