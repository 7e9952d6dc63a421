/**
 * The Coordinator as the one dependency engine, without a GPU: the id-based front the
 * AsyncCoordinator uses (start(), uniqueNames: false), completion after dependencies, failure
 * propagation, bounded retention, host-step timeouts and aborts, and disposal.
 */
import { describe, expect, it } from 'vitest';
import '../../../src/runtime/device.js'; // registers the Device class placements resolve with (tools/layers.ts: device-load)
import { Coordinator, MAX_UNREPORTED } from '../../../src/orchestration/coordinator.js';
import {
  DependencyFailedError,
  OperationError,
  OperationForgottenError,
  OperationTimeoutError,
} from '../../../src/orchestration/errors.js';
import type { OperationSpec } from '../../../src/orchestration/operation.js';
import { AsyncDependencyError, AsyncOperationError } from '../../../src/pipeline/errors.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { FakePool } from './fake-pool.js';

function outcome(p: Promise<void>): { state: () => 'pending' | 'resolved' | 'rejected'; error: () => unknown } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let error: unknown;
  p.then(
    () => (state = 'resolved'),
    (e: unknown) => {
      state = 'rejected';
      error = e;
    },
  );
  return { state: () => state, error: () => error };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const gpu = (name: string, after: number[] = [], extra: Partial<OperationSpec> = {}): OperationSpec => ({
  name,
  kind: 'kernel',
  after,
  run: () => undefined,
  ...extra,
});

function front(retainSettled?: number): { pool: FakePool; c: Coordinator } {
  const pool = new FakePool();
  return {
    pool,
    c: new Coordinator(pool.asPool(), {
      label: 'front',
      uniqueNames: false,
      ...(retainSettled === undefined ? {} : { retainSettled }),
    }),
  };
}

describe('Coordinator as the one dependency engine', () => {
  it('fork/join: the join completes only after its own work and both branches', async () => {
    const { pool, c } = front();
    const upload = c.start(gpu('up'));
    const a = c.start(gpu('a', [upload]));
    const b = c.start(gpu('b', [upload]));
    const join = c.start(gpu('merge', [a, b, a]));
    expect(pool.log).toEqual(['enqueue up', 'enqueue a', 'enqueue b', 'enqueue merge']);
    const waited = outcome(c.wait(join));
    // Its own work can finish first (events are polled in any order); it still waits.
    pool.complete('merge');
    pool.complete('b');
    expect(c.state(join)).toBe('enqueued');
    expect(c.state(b)).toBe('enqueued'); // b waits for upload
    pool.complete('up');
    expect(c.state(b)).toBe('completed');
    expect(c.state(join)).toBe('enqueued');
    pool.complete('a');
    expect(c.state(join)).toBe('completed');
    await tick();
    expect(waited.state()).toBe('resolved');
    const settled = c.poll();
    expect(settled.map((s) => s.name)).toEqual(['up', 'b', 'a', 'merge']);
    expect(settled.every((s) => s.status === 'completed' && s.kind === 'kernel')).toBe(true);
    expect(c.poll()).toEqual([]);
    expect(c.pendingCount).toBe(0);
  });

  it('names may repeat when they are labels only', () => {
    const { c } = front();
    const x = c.start(gpu('same'));
    const y = c.start(gpu('same'));
    expect(x).not.toBe(y);
    expect(() => c.state('same')).toThrow(RangeError);
  });

  it('a failure rejects exactly its downstream operations, with the cause; one error hierarchy', async () => {
    const { pool, c } = front();
    const up1 = c.start(gpu('up1'));
    const up2 = c.start(gpu('up2'));
    const c1 = c.start(gpu('c1', [up1]));
    const c2 = c.start(gpu('c2', [up2]));
    const join = c.start(gpu('join', [c1, c2]));
    const down2 = c.start(gpu('d2', [c2]));
    const waits = [up1, up2, c1, c2, join, down2].map((id) => outcome(c.wait(id)));
    const cause = new Error('copy engine on fire');
    pool.complete('up1', cause);
    for (const n of ['up2', 'c2', 'd2']) pool.complete(n);
    await tick();
    expect(waits.map((w) => w.state())).toEqual([
      'rejected',
      'resolved',
      'rejected',
      'resolved',
      'rejected',
      'resolved',
    ]);
    expect(waits[0]!.error()).toBe(cause);
    const c1Error = waits[2]!.error() as DependencyFailedError;
    expect(c1Error).toBeInstanceOf(DependencyFailedError);
    expect(c1Error).toBeInstanceOf(OperationError);
    // The pre-issue-9 names are the same classes.
    expect(c1Error).toBeInstanceOf(AsyncDependencyError);
    expect(c1Error).toBeInstanceOf(AsyncOperationError);
    expect(AsyncDependencyError).toBe(DependencyFailedError);
    expect(c1Error.operationId).toBe(c1);
    expect(c1Error.dependencyId).toBe(up1);
    expect(c1Error.cause).toBe(cause);
    const joinError = waits[4]!.error() as DependencyFailedError;
    expect(joinError.dependencyId).toBe(c1);
    expect(joinError.root).toBe(cause);
    expect(joinError.message).toMatch(/copy engine on fire/);
    // Settled failures stay failed: later work finishing does not revive them.
    pool.complete('c1');
    expect(c.state(c1)).toBe('failed');
    await expect(c.wait(join)).rejects.toBe(joinError);
    const failed = c.poll().filter((s) => s.status === 'failed');
    expect(failed.map((s) => s.name).sort()).toEqual(['c1', 'join', 'up1']);
  });

  it('start() refuses a dependency that already failed, adding nothing, and throws its own enqueue error', () => {
    const { pool, c } = front();
    const a = c.start(gpu('a'));
    pool.complete('a', new Error('boom'));
    const before = c.pendingIds().length;
    let thrown: unknown;
    try {
      c.start(gpu('late', [a]));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DependencyFailedError);
    expect((thrown as DependencyFailedError).dependencyId).toBe(a);
    expect(c.pendingIds().length).toBe(before);
    // No id was spent on it: the next operation gets the next id, and the refused one is not "completed".
    const next = c.start(gpu('next'));
    expect(next).toBe(a + 1);
    expect(() =>
      c.start(
        gpu('bad', [], {
          run: () => {
            throw new Error('launch refused');
          },
        }),
      ),
    ).toThrow('launch refused');
    expect(pool.log).not.toContain('enqueue late');
  });

  it('answers wait() and state() for settled and unknown ids without hanging', async () => {
    const { pool, c } = front();
    const a = c.start(gpu('a'));
    pool.complete('a');
    await expect(c.wait(a)).resolves.toBeUndefined();
    expect(() => c.wait(99)).toThrow(RangeError);
    expect(() => c.state(0)).toThrow(RangeError);
    expect(() => c.state(1.5)).toThrow(RangeError);
    const b = c.start(gpu('b'));
    pool.complete('b', new Error('nope'));
    await expect(c.wait(b)).rejects.toThrow('nope');
    expect(c.state(b)).toBe('failed');
    expect(c.failure(b)?.message).toBe('nope');
  });

  it('settles a long chain without recursion', async () => {
    const { pool, c } = front(100_000);
    const ids = [c.start(gpu('0'))];
    for (let i = 1; i < 30_000; i++) ids.push(c.start(gpu(String(i), [ids[i - 1]!])));
    for (let i = ids.length - 1; i > 0; i--) pool.completeAt(i);
    expect(c.pendingCount).toBe(30_000);
    pool.completeAt(0);
    expect(c.pendingCount).toBe(0);
    const second = [c.start(gpu('x'))];
    for (let i = 1; i < 30_000; i++) second.push(c.start(gpu('x', [second[i - 1]!])));
    pool.completeAt(30_000, new Error('first link'));
    expect(c.pendingCount).toBe(0);
    await expect(c.wait(second[29_999]!)).rejects.toBeInstanceOf(DependencyFailedError);
  });
});

describe('Coordinator: bounded memory (issue 10)', () => {
  it('keeps at most retainSettled settled operations; forgotten ones keep their outcome', async () => {
    const { pool, c } = front(4);
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) ids.push(c.start(gpu(`op${i}`)));
    pool.completeAt(0, new Error('early failure'));
    for (let i = 1; i < 10; i++) pool.completeAt(i);
    // Forgotten, yet answered: the first failed, the others completed.
    expect(c.state(ids[0]!)).toBe('failed');
    await expect(c.wait(ids[0]!)).rejects.toThrow('early failure');
    expect(c.state(ids[1]!)).toBe('completed');
    // A dependency on a forgotten failure still fails; on a forgotten success it is satisfied.
    expect(() => c.start(gpu('after-failure', [ids[0]!]))).toThrow(DependencyFailedError);
    const ok = c.start(gpu('after-success', [ids[1]!]));
    pool.complete('after-success');
    expect(c.state(ok)).toBe('completed');
  });

  it('clearSettled() never lets a dependent of a failed operation run as if it had succeeded', async () => {
    const pool = new FakePool();
    const c = new Coordinator(pool.asPool());
    c.add(
      gpu('bad', [], {
        run: () => {
          throw new Error('enqueue failed');
        },
      }) as OperationSpec,
    );
    await expect(c.run()).rejects.toThrow('enqueue failed');
    const badId = c.poll()[0]!.id;
    c.clearSettled();
    expect(() => c.state('bad')).toThrow('no operation');
    // By id, the failure is still known.
    c.add({ name: 'dependent', kind: 'kernel', after: [badId], run: () => undefined });
    await expect(c.run()).rejects.toBeInstanceOf(DependencyFailedError);
    expect(pool.log).not.toContain('enqueue dependent');
  });

  it('clearSettled() between add() and run() keeps a pending dependent failed', async () => {
    const pool = new FakePool();
    const c = new Coordinator(pool.asPool());
    c.add({ name: 'h', kind: 'host', run: () => Promise.reject(new Error('host failed')) });
    await expect(c.run()).rejects.toThrow('host failed');
    c.add({ name: 'dep', kind: 'kernel', after: ['h'], run: () => undefined });
    c.clearSettled();
    await expect(c.run()).rejects.toBeInstanceOf(DependencyFailedError);
    expect(pool.log).toEqual([]);
  });

  it('poll() keeps at most MAX_UNREPORTED settlements', () => {
    const { pool, c } = front(16);
    const n = MAX_UNREPORTED + 10;
    for (let i = 0; i < n; i++) {
      c.start(gpu('x'));
      pool.completeAt(i);
    }
    const got = c.poll();
    expect(got).toHaveLength(MAX_UNREPORTED);
    expect(got[0]!.id).toBe(11);
  });

  it('refuses a bad retainSettled', () => {
    expect(() => new Coordinator(new FakePool().asPool(), { retainSettled: -1 })).toThrow(/retainSettled/);
  });
});

describe('Coordinator: nothing waits forever (issue 10)', () => {
  it('a host step past its timeoutMs fails with OperationTimeoutError, and its dependents with it', async () => {
    const { pool, c } = front();
    const never = new Promise<void>(() => undefined);
    const h = c.start({ name: 'stuck', kind: 'host', run: () => never, timeoutMs: 20 });
    const g = c.start(gpu('after', [h]));
    await expect(c.wait(h)).rejects.toBeInstanceOf(OperationTimeoutError);
    await expect(c.wait(h)).rejects.toThrow(/did not settle within 20 ms/);
    await expect(c.wait(g)).rejects.toBeInstanceOf(DependencyFailedError);
    expect(pool.log).toEqual([]);
  });

  it('a host step that settles in time clears its timer', async () => {
    const { c } = front();
    const h = c.start({
      name: 'quick',
      kind: 'host',
      run: () => new Promise<void>((r) => setTimeout(r, 5)),
      timeoutMs: 10_000,
    });
    await expect(c.wait(h)).resolves.toBeUndefined();
  });

  it('an AbortSignal fails a host step (before it starts or while it runs)', async () => {
    const { c } = front();
    const controller = new AbortController();
    const h = c.start({
      name: 'abortable',
      kind: 'host',
      run: () => new Promise<void>(() => undefined),
      signal: controller.signal,
    });
    controller.abort(new Error('client went away'));
    await expect(c.wait(h)).rejects.toThrow('client went away');
    // Aborted before it started: start() throws, as for any failure of its own start.
    expect(() =>
      c.start({ name: 'already', kind: 'host', run: () => undefined, signal: AbortSignal.abort('no') }),
    ).toThrow(OperationTimeoutError);
  });

  it('refuses timeouts a Node timer cannot hold and signals that are not AbortSignals', () => {
    const { c } = front();
    expect(() => c.start({ name: 't', kind: 'host', run: () => undefined, timeoutMs: 2 ** 31 })).toThrow(/timeoutMs/);
    expect(() => c.start({ name: 't', kind: 'host', run: () => undefined, timeoutMs: Number.NaN })).toThrow(RangeError);
    expect(() => c.start({ name: 't', kind: 'host', run: () => undefined, signal: {} as AbortSignal })).toThrow(
      TypeError,
    );
  });

  it('dispose() settles every unsettled operation; later work throws DisposedError', async () => {
    const { pool, c } = front();
    const a = c.start(gpu('a'));
    const b = c.start(gpu('b', [a]));
    const h = c.start({ name: 'host', kind: 'host', after: [b], run: () => undefined });
    const done = c.start(gpu('done'));
    pool.complete('done');
    const waits = [a, b, h, done].map((id) => outcome(c.wait(id)));
    c.dispose();
    await tick();
    expect(waits.map((w) => w.state())).toEqual(['rejected', 'rejected', 'rejected', 'resolved']);
    expect(waits[0]!.error()).toBeInstanceOf(OperationError);
    expect(waits[1]!.error()).toBeInstanceOf(DependencyFailedError);
    expect(() => c.start(gpu('x'))).toThrow(DisposedError);
    expect(() => c.add(gpu('x'))).toThrow(DisposedError);
    // The GPU finishing later changes nothing.
    pool.complete('a');
    expect(c.state(a)).toBe('failed');
    c.dispose();
  });

  it('OperationForgottenError is a RangeError', () => {
    expect(new OperationForgottenError('x')).toBeInstanceOf(RangeError);
  });
});
