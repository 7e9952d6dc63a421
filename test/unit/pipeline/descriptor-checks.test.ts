/**
 * The pipeline's constructors refuse wrong descriptors before the driver is asked for anything
 * (this suite runs without a GPU: a check made after the driver would surface as "no CUDA
 * driver" instead), and a null descriptor is a TypeError naming the call, not a read of null.
 */
import { describe, expect, it } from 'vitest';
import {
  AsyncCoordinator,
  gradientBatcher,
  lerpBatcher,
  ManagedContext,
  StageManager,
  TripleBuffer,
} from '../../../src/pipeline/index.js';

const TIMEOUT = { timeout: 5_000 };

describe('a null descriptor names the call', () => {
  it.each([
    [
      'AsyncCoordinator',
      () => new AsyncCoordinator(null as never),
      'new AsyncCoordinator() takes a descriptor object, got null',
    ],
    [
      'TripleBuffer',
      () => new TripleBuffer(null as never),
      'new TripleBuffer() takes a descriptor object { create, destroy?, slots?, ... }, got null',
    ],
    [
      'ManagedContext',
      () => new ManagedContext(null as never),
      'new ManagedContext() takes a descriptor object, got null',
    ],
    [
      'gradientBatcher',
      () => gradientBatcher(null as never),
      'gradientBatcher() takes an options object { dim, maxBatchSize, maxWaitMs, channelSize, ... }, got null',
    ],
  ])('%s', TIMEOUT, (_, make, message) => {
    expect(make).toThrow(new TypeError(message));
  });
});

describe('unknown keys are refused with the known ones', () => {
  it('AsyncCoordinator', TIMEOUT, () => {
    expect(() => new AsyncCoordinator({ priority: 'high' } as never)).toThrow(
      new TypeError(
        'AsyncCoordinator descriptor.priority: unknown option (known: device, context, streams, priorities, profiler, retainSettled, label)',
      ),
    );
  });

  it('TripleBuffer', TIMEOUT, () => {
    expect(() => new TripleBuffer({ create: () => 1, slot: 3 } as never)).toThrow(
      new TypeError(
        'TripleBuffer descriptor.slot: unknown option (known: device, context, create, destroy, slots, label)',
      ),
    );
  });

  it('ManagedContext', TIMEOUT, () => {
    expect(() => new ManagedContext({ mdoe: 'triple' } as never)).toThrow(
      new TypeError(
        'ManagedContext descriptor.mdoe: unknown option (known: mode, device, context, step, profiler, slots, label)',
      ),
    );
  });

  it('a GPU batcher knows its dispatcher options besides the Batcher ones', TIMEOUT, () => {
    expect(() => lerpBatcher({ dimension: 3, maxBatchSize: 4, maxWaitMs: 1, channelSize: 4 } as never)).toThrow(
      new TypeError(
        'Batcher "lerp" descriptor.dimension: unknown option (known: maxBatchSize, maxWaitMs, channelSize, maxConcurrentBatches, maxWaiting, dispatchTimeoutMs, label, autoTune, dim, depth, device, context)',
      ),
    );
    expect(() =>
      gradientBatcher({ dim: 3, h: 0.1, step: 1, maxBatchSize: 4, maxWaitMs: 1, channelSize: 4 } as never),
    ).toThrow(/descriptor\.step: unknown option \(known: .*, h\)$/);
  });
});

describe('AsyncCoordinator names a bad option before the driver', () => {
  it.each([
    [
      'priorities.upload',
      { priorities: { upload: 'urgent' } },
      `a: priorities.upload: stream priority must be 'high', 'normal', 'low' or an integer, got "urgent"`,
    ],
    ['priorities', { priorities: 5 }, 'a: priorities must be an object { upload?, compute?, download? }, got number'],
    [
      'a priorities key',
      { priorities: { uplaod: 'high' } },
      'a: priorities.uplaod: unknown option (known: upload, compute, download)',
    ],
    ['profiler', { profiler: {} }, 'a: profiler must be a Profiler, got a plain Object'],
    ['streams', { streams: 5 }, 'a: streams must be an object { upload, compute, download }, got number'],
  ])('%s', TIMEOUT, (_, descriptor, message) => {
    expect(() => new AsyncCoordinator({ ...descriptor, label: 'a' } as never)).toThrow(new TypeError(message));
  });

  it('retainSettled (it failed only after the streams were made)', TIMEOUT, () => {
    expect(() => new AsyncCoordinator({ retainSettled: -1, label: 'a' })).toThrow(
      new RangeError('a: retainSettled must be an integer in [0, 9007199254740991], got -1'),
    );
  });
});

describe('TripleBuffer, ManagedContext and StageManager fields', () => {
  it('a TripleBuffer destroy that is not a function', TIMEOUT, () => {
    expect(() => new TripleBuffer({ create: () => 1, destroy: 5 as never, label: 'ring' })).toThrow(
      new TypeError('TripleBuffer "ring": destroy must be a function (its data -> void), got 5'),
    );
  });

  it('a ManagedContext profiler that is not a Profiler', TIMEOUT, () => {
    expect(() => new ManagedContext({ profiler: 5 as never, label: 'm' })).toThrow(
      new TypeError('ManagedContext "m": profiler must be a Profiler, got number'),
    );
  });

  it.each([
    [
      'coordinator',
      { coordinator: {} },
      'StageManager "s": coordinator must be an AsyncCoordinator, got a plain Object',
    ],
    ['coordinator', { coordinator: 5 }, 'StageManager "s": coordinator must be an AsyncCoordinator, got number'],
    ['profiler', { profiler: {} }, 'StageManager "s": profiler must be a Profiler, got a plain Object'],
    ['concurrent', { concurrent: 'no' }, 'StageManager "s": concurrent must be a boolean, got "no"'],
  ])('a StageManager %s of the wrong kind', TIMEOUT, (_, descriptor, message) => {
    expect(() => new StageManager({ ...descriptor, label: 's' } as never)).toThrow(new TypeError(message));
  });
});
