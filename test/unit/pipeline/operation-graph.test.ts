import { describe, expect, it } from 'vitest';
import { AsyncDependencyError, AsyncOperationError } from '../../../src/pipeline/errors.js';
import { OperationGraph } from '../../../src/pipeline/operation-graph.js';

function graph(): OperationGraph<string> {
  return new OperationGraph<string>('test');
}

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

describe('OperationGraph (AsyncCoordinator dependency bookkeeping)', () => {
  it('fork/join: the join completes only after its own work and both branches', async () => {
    const g = graph();
    const upload = g.add('upload', 'up', [], 'u');
    const a = g.add('compute', 'a', g.resolveDependencies([upload.id]), 'c');
    const b = g.add('compute', 'b', g.resolveDependencies([upload.id]), 'c2');
    const join = g.add('compute', 'merge', g.resolveDependencies([a.id, b.id, a.id]), 'c');
    expect(join.waitingOn).toBe(2);
    const waited = outcome(g.wait(join.id));

    // Its own work can finish first (events are polled in any order); it still waits.
    g.workDone(join);
    g.workDone(b);
    expect(g.status(join.id)).toBe('pending');
    expect(g.status(b.id)).toBe('pending'); // b waits for upload
    g.workDone(upload);
    expect(g.status(b.id)).toBe('completed');
    expect(g.status(join.id)).toBe('pending');
    g.workDone(a);
    expect(g.status(join.id)).toBe('completed');
    await tick();
    expect(waited.state()).toBe('resolved');
    expect(g.takeSettled().map((s) => s.name)).toEqual(['up', 'b', 'a', 'merge']);
    expect(g.takeSettled()).toEqual([]);
    expect(g.pendingCount).toBe(0);
  });

  it('a failure rejects exactly its downstream operations, with the cause', async () => {
    const g = graph();
    const up1 = g.add('upload', 'up1', [], '');
    const up2 = g.add('upload', 'up2', [], '');
    const c1 = g.add('compute', 'c1', g.resolveDependencies([up1.id]), '');
    const c2 = g.add('compute', 'c2', g.resolveDependencies([up2.id]), '');
    const join = g.add('compute', 'join', g.resolveDependencies([c1.id, c2.id]), '');
    const down2 = g.add('download', 'd2', g.resolveDependencies([c2.id]), '');
    const waits = [up1, up2, c1, c2, join, down2].map((n) => outcome(g.wait(n.id)));

    const cause = new Error('copy engine on fire');
    g.fail(up1, cause);
    for (const n of [up2, c2, down2]) g.workDone(n);
    await tick();
    expect(waits.map((w) => w.state())).toEqual(['rejected', 'resolved', 'rejected', 'resolved', 'rejected', 'resolved']);
    expect(waits[0]!.error()).toBe(cause);
    const c1Error = waits[2]!.error() as AsyncDependencyError;
    expect(c1Error).toBeInstanceOf(AsyncDependencyError);
    expect(c1Error.operationId).toBe(c1.id);
    expect(c1Error.dependencyId).toBe(up1.id);
    expect(c1Error.cause).toBe(cause);
    const joinError = waits[4]!.error() as AsyncDependencyError;
    expect(joinError.dependencyId).toBe(c1.id);
    expect(joinError.message).toMatch(/copy engine on fire/);

    // Settled failures stay failed: later work finishing does not revive them.
    g.workDone(c1);
    expect(g.status(c1.id)).toBe('failed');
    await expect(g.wait(join.id)).rejects.toBe(joinError);
    const failed = g.takeSettled().filter((s) => s.status === 'failed');
    expect(failed.map((s) => s.name).sort()).toEqual(['c1', 'join', 'up1']);
  });

  it('refuses dependencies that were never issued or already failed; completed ones need no waiting', () => {
    const g = graph();
    expect(() => g.resolveDependencies([1])).toThrow(/no operation 1/);
    expect(() => g.resolveDependencies([0])).toThrow(RangeError);
    expect(() => g.resolveDependencies([1.5])).toThrow(RangeError);
    const a = g.add('upload', 'a', [], '');
    const b = g.add('upload', 'b', [], '');
    g.workDone(a);
    expect(g.resolveDependencies([a.id])).toEqual([]);
    expect(g.resolveDependencies([b.id, b.id])).toEqual([b]);
    g.fail(b, new Error('boom'));
    let thrown: unknown;
    try {
      g.resolveDependencies([a.id, b.id]);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(AsyncDependencyError);
    expect((thrown as AsyncDependencyError).operationId).toBe(g.nextId);
    expect(thrown).toBeInstanceOf(AsyncOperationError);
  });

  it('answers wait() for settled and unknown ids without hanging', async () => {
    const g = graph();
    const a = g.add('compute', 'a', [], '');
    g.workDone(a);
    await expect(g.wait(a.id)).resolves.toBeUndefined();
    await expect(g.wait(99)).rejects.toThrow(RangeError);
    const b = g.add('compute', 'b', [], '');
    g.fail(b, new Error('nope'));
    await expect(g.wait(b.id)).rejects.toThrow('nope');
    expect(g.status(b.id)).toBe('failed');
    expect(() => g.status(42)).toThrow(RangeError);
  });

  it('settles a long chain without recursion', async () => {
    const g = graph();
    const nodes = [g.add('compute', '0', [], '')];
    for (let i = 1; i < 30_000; i++) nodes.push(g.add('compute', String(i), [nodes[i - 1]!], ''));
    for (let i = nodes.length - 1; i > 0; i--) g.workDone(nodes[i]!);
    expect(g.pendingCount).toBe(30_000);
    g.workDone(nodes[0]!);
    expect(g.pendingCount).toBe(0);
    const second = [g.add('compute', 'x', [], '')];
    for (let i = 1; i < 30_000; i++) second.push(g.add('compute', 'x', [second[i - 1]!], ''));
    g.fail(second[0]!, new Error('first link'));
    expect(g.pendingCount).toBe(0);
    await expect(g.wait(second[29_999]!.id)).rejects.toBeInstanceOf(AsyncDependencyError);
  });
});
