/**
 * The Coordinator's answers to misuse, without a GPU (over fake-pool.ts): a host step whose
 * thenable's then() throws fails like any failed step, a callback that throws is reported as a
 * warning instead of crashing the process, and wrong arguments are refused at the call.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import '../../../src/runtime/device.js'; // registers the Device class placements resolve with (tools/layers.ts: device-load)
import { Coordinator } from '../../../src/orchestration/coordinator.js';
import { DependencyFailedError, type OperationSpec } from '../../../src/orchestration/operation.js';
import type { Stream } from '../../../src/runtime/stream.js';
import { FakePool } from './fake-pool.js';

const TIMEOUT = { timeout: 5_000 };

function setup(descriptor: object = {}): { pool: FakePool; coord: Coordinator } {
  const pool = new FakePool();
  return { pool, coord: new Coordinator(pool.asPool(), descriptor) };
}

const gpu = (name: string, extra: Partial<OperationSpec> = {}): OperationSpec => ({
  name,
  kind: 'kernel',
  run: () => undefined,
  ...extra,
});
/** A host step's result whose then() throws: it will never call back. */
const badThenable = (): Promise<void> =>
  ({
    then: () => {
      throw new Error('then() threw');
    },
  }) as unknown as Promise<void>;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a host step whose thenable throws from then()', () => {
  it('fails the step and its dependents; unrelated operations still run and run() settles', TIMEOUT, async () => {
    const { pool, coord } = setup();
    coord.add({ name: 'h', kind: 'host', run: badThenable });
    coord.add(gpu('other'));
    coord.add(gpu('dep', { after: ['h'] }));
    const done = coord.run();
    pool.completeAll();
    await expect(done).rejects.toThrow('then() threw');
    expect(coord.state('h')).toBe('failed');
    expect(coord.state('other')).toBe('completed');
    expect(coord.state('dep')).toBe('failed');
    await expect(coord.wait('dep')).rejects.toBeInstanceOf(DependencyFailedError);
  });

  it('start() throws the error and leaves nothing pending', TIMEOUT, async () => {
    const { coord } = setup({ uniqueNames: false });
    expect(() => coord.start({ name: 'h', kind: 'host', run: badThenable })).toThrow('then() threw');
    expect(coord.pendingIds()).toEqual([]);
    await expect(coord.wait(1)).rejects.toThrow('then() threw');
  });

  it('a then() that throws a string fails the step with an Error', TIMEOUT, async () => {
    const { coord } = setup();
    coord.add({
      name: 'h',
      kind: 'host',
      run: (() => ({
        then: () => {
          throw 'str';
        },
      })) as never,
    });
    await expect(coord.run()).rejects.toThrow(Error);
  });
});

describe('a callback that throws is reported, not re-thrown', () => {
  it('onComplete: a warning naming the operation; the run completes', TIMEOUT, async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const { pool, coord } = setup();
    coord.add(
      gpu('g', {
        onComplete: () => {
          throw new Error('onComplete threw');
        },
      }),
    );
    const done = coord.run();
    pool.completeAll();
    await expect(done).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toBe('coordinator: onComplete of operation "g" threw: onComplete threw');
    expect(warn.mock.calls[0]![1]).toMatchObject({ code: 'TSCUDA_CALLBACK_FAILED' });
  });

  it('onComplete of a failed operation too', TIMEOUT, async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const { coord } = setup();
    coord.add({
      name: 'h',
      kind: 'host',
      run: () => {
        throw new Error('step failed');
      },
      onComplete: () => {
        throw 'not an Error';
      },
    });
    await expect(coord.run()).rejects.toThrow('step failed');
    expect(warn.mock.calls[0]![0]).toBe('coordinator: onComplete of operation "h" threw: not an Error');
  });

  it('onStreamComplete: a warning naming the stream, after the run', TIMEOUT, async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const { pool, coord } = setup();
    coord.onStreamComplete(pool.streams[0]!, () => {
      throw new Error('onStreamComplete threw');
    });
    coord.add(gpu('g', { stream: pool.streams[0] }));
    const done = coord.run();
    pool.completeAll();
    await done;
    await new Promise((r) => setImmediate(r));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toBe(
      'coordinator: onStreamComplete callback of stream "s0" threw: onStreamComplete threw',
    );
  });

  it('no uncaughtException reaches the process', TIMEOUT, async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const uncaught = vi.fn();
    process.on('uncaughtException', uncaught);
    try {
      const { pool, coord } = setup();
      coord.add(
        gpu('g', {
          onComplete: () => {
            throw new Error('boom');
          },
        }),
      );
      const done = coord.run();
      pool.completeAll();
      await done;
      await new Promise((r) => setImmediate(r));
      expect(uncaught).not.toHaveBeenCalled();
    } finally {
      process.off('uncaughtException', uncaught);
    }
  });
});

describe('wrong arguments are refused at the call', () => {
  it('callbacks that are not functions', TIMEOUT, () => {
    const { pool, coord } = setup();
    expect(() => coord.add(gpu('oc', { onComplete: 5 as never }))).toThrow(
      new TypeError('coordinator: operation "oc": onComplete must be a function, got 5'),
    );
    expect(() => coord.onStreamComplete(pool.streams[0]!, 'x' as never)).toThrow(
      new TypeError('coordinator: onStreamComplete() callback must be a function, got "x"'),
    );
    expect(() => coord.onStreamComplete(null as never, () => undefined)).toThrow(
      new TypeError('coordinator: onStreamComplete() stream must be a Stream of fake pool, got null'),
    );
    expect(() => coord.onStreamComplete({ label: 'fake' } as unknown as Stream, () => undefined)).toThrow(TypeError);
    expect(coord.pendingIds()).toEqual([]);
  });

  it('an unknown kind, a negative or non-finite bytes', TIMEOUT, () => {
    const { coord } = setup();
    expect(() => coord.add(gpu('k', { kind: 'bogus' as never }))).toThrow(
      /^coordinator: operation "k": kind must be one of upload, download, copy, kernel, fft, memset, host, alloc, other; got "bogus"$/,
    );
    for (const bytes of [-5, Number.NaN, Infinity, '4' as never])
      expect(() => coord.add(gpu('b', { bytes })), String(bytes)).toThrow(RangeError);
    expect(coord.add(gpu('ok', { bytes: 0 }))).toBe(1);
  });

  it('a barrier name that is not a non-empty string', TIMEOUT, () => {
    const { coord } = setup();
    expect(() => coord.barrier(123 as never)).toThrow(
      new TypeError('coordinator: barrier() name must be a non-empty string, got 123'),
    );
    expect(() => coord.barrier('')).toThrow(TypeError);
  });

  it('descriptor: unknown keys and a uniqueNames that is not a boolean', TIMEOUT, () => {
    expect(() => setup({ retain: 5 })).toThrow(
      new TypeError(
        'Coordinator descriptor.retain: unknown option (known: label, retainSettled, uniqueNames, guestStreams)',
      ),
    );
    expect(() => setup({ uniqueNames: 'no' })).toThrow(
      new TypeError('coordinator: uniqueNames must be a boolean, got "no"'),
    );
    expect(() => setup({ uniqueNames: false, guestStreams: true, retainSettled: 3, label: 'c' })).not.toThrow();
  });
});
