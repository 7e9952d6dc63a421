/** The Coordinator's scheduling without a GPU, over the stand-in pool of fake-pool.ts. */
import { describe, expect, it } from 'vitest';
import '../../../src/runtime/device.js'; // registers the Device class placements resolve with (tools/layers.ts: device-load)
import { Coordinator } from '../../../src/orchestration/coordinator.js';
import { DependencyFailedError, type OperationSpec } from '../../../src/orchestration/operation.js';
import type { StreamPool } from '../../../src/orchestration/stream-pool.js';
import { FakePool } from './fake-pool.js';

function setup(): { pool: FakePool; coord: Coordinator } {
  const pool = new FakePool();
  return { pool, coord: new Coordinator(pool as unknown as StreamPool) };
}

const gpu = (name: string, after: string[] = [], extra: Partial<OperationSpec> = {}): OperationSpec => ({
  name,
  kind: 'kernel',
  after,
  run: () => undefined,
  ...extra,
});
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('Coordinator scheduling', () => {
  it('enqueues GPU work in dependency order without waiting for completion', async () => {
    const { pool, coord } = setup();
    coord.add(gpu('join', []));
    coord.add(gpu('up'));
    coord.add(gpu('left', ['up']));
    coord.add(gpu('right', ['up']));
    coord.addDependency('left', 'join');
    coord.addDependency('right', 'join');
    const done = coord.run();
    // Everything is enqueued at once: the GPU orders it through events.
    expect(pool.log).toEqual(['enqueue up', 'enqueue left', 'enqueue right', 'enqueue join']);
    expect(coord.state('join')).toBe('enqueued');
    pool.completeAll();
    await done;
    expect(coord.poll().map((c) => c.name)).toEqual(['up', 'left', 'right', 'join']);
    expect(coord.poll()).toEqual([]);
  });

  it('runs a host step after its GPU dependencies complete, and its dependents after it', async () => {
    const { pool, coord } = setup();
    const seen: string[] = [];
    coord.add(gpu('upload'));
    coord.add({
      name: 'check',
      kind: 'host',
      after: ['upload'],
      run: async () => {
        seen.push(`check sees ${pool.inFlight.join(',') || 'nothing in flight'}`);
        await tick();
      },
    });
    coord.add(gpu('compute', ['check']));
    coord.add(gpu('independent'));
    const done = coord.run();
    expect(pool.log).toEqual(['enqueue upload', 'enqueue independent']);
    await tick();
    expect(seen).toEqual([]);
    pool.complete('upload');
    expect(seen).toEqual(['check sees independent']);
    expect(coord.state('compute')).toBe('waiting');
    await tick();
    await tick();
    expect(pool.log.at(-1)).toBe('enqueue compute');
    pool.completeAll();
    await done;
  });

  it('fails the dependents of a failed operation with the cause, and lets independent branches finish', async () => {
    const { pool, coord } = setup();
    const callbacks: string[] = [];
    coord.add(gpu('a'));
    coord.add(
      gpu('bad', ['a'], {
        run: () => {
          throw new Error('enqueue failed');
        },
      }),
    );
    coord.add(gpu('child', ['bad'], { onComplete: (e) => callbacks.push(`child ${e?.name}`) }));
    coord.add(gpu('grandchild', ['child']));
    coord.add(gpu('free', ['a'], { onComplete: (e) => callbacks.push(`free ${e ? 'failed' : 'ok'}`) }));
    const done = coord.run();
    pool.completeAll();
    await expect(done).rejects.toThrow('enqueue failed');
    const child = await coord.wait('child').catch((e: unknown) => e);
    expect(child).toBeInstanceOf(DependencyFailedError);
    expect((child as Error).message).toBe('"child" did not run: its dependency "bad" failed');
    expect(((child as Error).cause as Error).message).toBe('enqueue failed');
    const grandchild = (await coord.wait('grandchild').catch((e: unknown) => e)) as DependencyFailedError;
    expect(grandchild.cause).toBe(child);
    expect(grandchild.root.message).toBe('enqueue failed');
    expect(grandchild.message).toContain('because of: enqueue failed');
    await expect(coord.wait('free')).resolves.toBeUndefined();
    expect(callbacks.sort()).toEqual(['child DependencyFailedError', 'free ok']);
    expect(pool.log).not.toContain('enqueue child');
  });

  it('fails dependents already enqueued when their dependency reports a GPU error later', async () => {
    const { pool, coord } = setup();
    coord.add(gpu('x'));
    coord.add(gpu('y', ['x']));
    coord.add({
      name: 'h',
      kind: 'host',
      after: ['y'],
      run: () => {
        throw new Error('must not run');
      },
    });
    const done = coord.run();
    expect(pool.inFlight).toEqual(['x', 'y']);
    pool.complete('x', new Error('CUDA_ERROR_ILLEGAL_ADDRESS'));
    expect(coord.state('y')).toBe('failed');
    expect(coord.state('h')).toBe('failed');
    // The dependent's own completion, arriving later, changes nothing.
    pool.complete('y');
    await expect(done).rejects.toThrow('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(coord.poll().map((c) => [c.name, c.error?.name])).toEqual([
      ['x', 'Error'],
      ['y', 'DependencyFailedError'],
      ['h', 'DependencyFailedError'],
    ]);
  });

  it('a failed host step rejects its dependents; a dependency on an earlier failure fails at once', async () => {
    const { pool, coord } = setup();
    coord.add({ name: 'h', kind: 'host', run: () => Promise.reject(new Error('host step failed')) });
    coord.add(gpu('g', ['h']));
    await expect(coord.run()).rejects.toThrow('host step failed');
    await expect(coord.wait('g')).rejects.toBeInstanceOf(DependencyFailedError);
    coord.add(gpu('late', ['g']));
    await expect(coord.run()).rejects.toBeInstanceOf(DependencyFailedError);
    expect(pool.log).toEqual([]);
  });

  it('refuses cycles, unknown names, duplicate pending names and dependencies on started work', async () => {
    const { pool, coord } = setup();
    coord.add(gpu('a'));
    coord.add(gpu('b', ['a']));
    coord.add(gpu('c', ['b']));
    expect(() => coord.addDependency('c', 'a')).toThrow('dependency cycle: a -> b -> c -> a');
    expect(() => coord.add(gpu('d', ['nope']))).toThrow('no operation "nope"');
    expect(() => coord.add(gpu('a'))).toThrow('already pending');
    const done = coord.run();
    expect(() => coord.addDependency('a', 'c')).toThrow('has already started');
    pool.completeAll();
    await done;
    // Settled names can be used again; `after` then means the latest.
    coord.add(gpu('a', ['c']));
    const again = coord.run();
    expect(pool.log.at(-1)).toBe('enqueue a');
    pool.completeAll();
    await again;
    coord.clearSettled();
    expect(() => coord.state('b')).toThrow('no operation');
  });

  it("calls per-stream callbacks once the run's work on that stream has settled", async () => {
    const { pool, coord } = setup();
    const [s0, s1] = pool.streams;
    const heard: string[] = [];
    coord.onStreamComplete(s0!, (e) => heard.push(`s0 ${e ? e.message : 'ok'}`));
    coord.onStreamComplete(s1!, (e) => heard.push(`s1 ${e ? e.message : 'ok'}`));
    coord.add(gpu('p', [], { stream: s0! }));
    coord.add(gpu('q', [], { stream: s1! }));
    coord.add(gpu('r', [], { stream: s1! }));
    const done = coord.run();
    pool.complete('p');
    pool.complete('q');
    await tick();
    expect(heard).toEqual(['s0 ok']);
    pool.complete('r', new Error('r broke'));
    await done.catch(() => undefined);
    await tick();
    expect(heard).toEqual(['s0 ok', 's1 r broke']);
  });

  it('refuses to capture host steps before touching the driver', () => {
    const { coord } = setup();
    coord.add({ name: 'h', kind: 'host', run: () => undefined });
    expect(() => coord.capture()).toThrow('"h" is a host step');
    expect(() => new Coordinator(new FakePool() as unknown as StreamPool).capture()).toThrow('no pending operations');
  });

  it('schedules a long chain without recursion', async () => {
    const { pool, coord } = setup();
    const n = 20_000;
    coord.add({ name: 'op0', kind: 'host', run: () => undefined });
    for (let i = 1; i < n; i++)
      coord.add({ name: `op${i}`, kind: i % 2 ? 'kernel' : 'host', after: [`op${i - 1}`], run: () => undefined });
    const done = coord.run();
    for (let guard = 0; pool.inFlight.length && guard < n; guard++) pool.completeAll();
    await done;
    expect(coord.poll()).toHaveLength(n);
  });
});
