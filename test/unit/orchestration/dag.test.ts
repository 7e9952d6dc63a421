import { describe, expect, it } from 'vitest';
import { addEdge, CycleError, topologicalOrder } from '../../../src/orchestration/dag.js';
import { MIN_CLASS_BYTES, sizeClass } from '../../../src/runtime/memory/size-classes.js';
import {
  assignWorkloads,
  chooseStream,
  recommendStrategy,
  type StreamLoad,
} from '../../../src/orchestration/strategy.js';

const letters = (id: number): string => String.fromCharCode(96 + id); // 1 -> a

describe('cycle detection', () => {
  it('names a long cycle in run order, starting and ending at the new dependent', () => {
    const deps = new Map<number, Set<number>>();
    addEdge(deps, 1, 2, letters); // a -> b
    addEdge(deps, 2, 3, letters); // b -> c
    addEdge(deps, 3, 4, letters); // c -> d
    expect(() => addEdge(deps, 4, 1, letters)).toThrow('dependency cycle: a -> b -> c -> d -> a');
    expect(() => addEdge(deps, 3, 2, letters)).toThrow('dependency cycle: b -> c -> b');
    // The refused edges left nothing behind.
    expect(topologicalOrder([1, 2, 3, 4], deps)).toEqual([1, 2, 3, 4]);
  });

  it('allows redundant edges and diamonds, and refuses a self-edge', () => {
    const deps = new Map<number, Set<number>>();
    addEdge(deps, 1, 3, letters);
    addEdge(deps, 1, 2, letters);
    addEdge(deps, 2, 3, letters);
    addEdge(deps, 1, 3, letters);
    expect(topologicalOrder([3, 2, 1], deps)).toEqual([1, 2, 3]);
    const e = (() => {
      try {
        addEdge(deps, 2, 2, letters);
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(CycleError);
    expect((e as CycleError).cycle).toEqual(['b', 'b']);
  });

  it('names a cycle in a hand-built map that topologicalOrder cannot order', () => {
    const deps = new Map<number, Set<number>>([
      [2, new Set([1])],
      [3, new Set([2, 5])],
      [4, new Set([3])],
      [5, new Set([4])],
    ]);
    expect(() => topologicalOrder([1, 2, 3, 4, 5], deps, letters)).toThrow(/^dependency cycle: ([cde]) -> .* -> \1$/);
    try {
      topologicalOrder([1, 2, 3, 4, 5], deps, letters);
    } catch (err) {
      expect(new Set((err as CycleError).cycle)).toEqual(new Set(['c', 'd', 'e']));
      expect((err as CycleError).cycle).toHaveLength(4);
    }
  });
});

describe('topological order', () => {
  it('puts every dependency first and breaks ties by id (insertion order)', () => {
    const deps = new Map<number, Set<number>>();
    // 5 -> 2, 5 -> 3, 1 -> 4, 2 -> 4, 3 -> 6
    addEdge(deps, 5, 2, String);
    addEdge(deps, 5, 3, String);
    addEdge(deps, 1, 4, String);
    addEdge(deps, 2, 4, String);
    addEdge(deps, 3, 6, String);
    expect(topologicalOrder([1, 2, 3, 4, 5, 6], deps)).toEqual([1, 5, 2, 3, 4, 6]);
  });

  it('ignores dependencies outside the ids (operations that already ran)', () => {
    const deps = new Map<number, Set<number>>([[3, new Set([1, 2])]]);
    expect(topologicalOrder([3, 2], deps)).toEqual([2, 3]);
  });

  it('orders a random DAG of 5,000 nodes quickly and correctly', () => {
    const n = 5000;
    const deps = new Map<number, Set<number>>();
    let seed = 12345;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let id = 2; id <= n; id++) {
      const set = new Set<number>();
      for (let k = 0; k < 3; k++) set.add(1 + Math.floor(rand() * (id - 1)));
      deps.set(id, set);
    }
    const ids = Array.from({ length: n }, (_, i) => n - i);
    const t0 = performance.now();
    const order = topologicalOrder(ids, deps);
    expect(performance.now() - t0).toBeLessThan(500);
    const position = new Map(order.map((id, i) => [id, i]));
    expect(order).toHaveLength(n);
    for (const [id, ds] of deps) for (const d of ds) expect(position.get(d)!).toBeLessThan(position.get(id)!);
  });
});

describe('stream selection', () => {
  const loads: StreamLoad[] = [
    { index: 0, outstanding: 2, priority: 'high', purpose: 'ConfigUpload' },
    { index: 1, outstanding: 1, priority: 'normal', purpose: 'KernelExecution' },
    { index: 2, outstanding: 1, priority: 'normal', purpose: 'KernelExecution' },
    { index: 3, outstanding: 0, priority: 'low', purpose: 'TelemetryDownload' },
    { index: 4, outstanding: 4, priority: 'low', purpose: 'AuxCompute' },
  ];

  it('LoadBalanced spreads ties by the round-robin tick', () => {
    const busy = loads.map((l) => ({ ...l, outstanding: l.index === 3 ? 9 : 1 }));
    const picks = [0, 1, 2, 3, 4, 5].map((t) => chooseStream('LoadBalanced', busy, {}, t));
    expect(picks).toEqual([0, 1, 2, 4, 4, 0]);
  });

  it('purpose narrows first; an unmatched filter falls back', () => {
    expect(chooseStream('RoundRobin', loads, { purpose: 'KernelExecution' }, 0)).toBe(1);
    expect(chooseStream('RoundRobin', loads, { purpose: 'KernelExecution' }, 1)).toBe(2);
    expect(chooseStream('RoundRobin', loads, { purpose: 'P2PTransfer' }, 1)).toBe(1);
    expect(chooseStream('Priority', loads, { priority: 'low' }, 0)).toBe(3);
    expect(chooseStream('Priority', loads.slice(1, 3), { priority: 'high' }, 0)).toBe(1);
    expect(chooseStream('Workload', loads, { workload: 'Coordination' }, 0)).toBe(4);
    expect(() => chooseStream('RoundRobin', [], {}, 0)).toThrow(RangeError);
  });

  it('Workload follows the assignments optimize() made', () => {
    const assignments = { Compute: [2, 4] };
    expect(chooseStream('Workload', loads, { workload: 'Compute' }, 0, assignments)).toBe(2);
    expect(chooseStream('Workload', loads, { workload: 'Compute' }, 0)).toBe(1);
  });

  it('assigns half the suitable streams to a workload over 2x slower than the fastest', () => {
    const averages = new Map([
      ['Compute', 12],
      ['Mixed', 1],
    ] as const);
    // Compute suits 1, 2 (KernelExecution) and 4 (AuxCompute): it keeps 1 and 2.
    expect(assignWorkloads(averages, loads)).toEqual({ Compute: [1, 2], Mixed: [0, 3, 4] });
    expect(
      assignWorkloads(
        new Map([
          ['Compute', 3],
          ['Mixed', 2],
        ] as const),
        loads,
      ),
    ).toEqual({});
    expect(assignWorkloads(new Map([['Compute', 30]] as const), loads)).toEqual({});
    // Coordination suits only one stream: nothing to split.
    expect(
      assignWorkloads(
        new Map([
          ['Coordination', 30],
          ['Compute', 1],
        ] as const),
        loads,
      ),
    ).toEqual({});
  });

  it('recommends a strategy by the documented rules', () => {
    expect(
      recommendStrategy(
        new Map([
          ['Memory', 9],
          ['Compute', 3],
        ] as const),
        loads,
      ),
    ).toBe('Workload');
    expect(
      recommendStrategy(
        new Map([
          ['Memory', 5],
          ['Compute', 3],
        ] as const),
        loads,
      ),
    ).toBe('RoundRobin');
    expect(
      recommendStrategy(
        new Map(),
        loads.map((l) => ({ ...l, outstanding: l.index === 0 ? 12 : 0 })),
      ),
    ).toBe('LoadBalanced');
    expect(recommendStrategy(new Map(), [])).toBe('RoundRobin');
  });
});

describe('size classes', () => {
  it('are powers of two from 256 bytes, and a class holds every size it is chosen for', () => {
    expect(MIN_CLASS_BYTES).toBe(256);
    for (let bytes = 1; bytes < 70_000; bytes += 97) {
      const c = sizeClass(bytes);
      expect(c).toBeGreaterThanOrEqual(Math.max(bytes, 256));
      expect(Math.log2(c) % 1).toBe(0);
      expect(c === 256 || c / 2 < bytes).toBe(true);
    }
    expect(sizeClass(2 ** 40)).toBe(2 ** 40);
    expect(sizeClass(2 ** 40 + 1)).toBe(2 ** 41);
    expect(() => sizeClass(1.5)).toThrow(RangeError);
    expect(() => sizeClass(-1)).toThrow(RangeError);
  });
});
