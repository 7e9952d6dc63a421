import { describe, expect, it } from 'vitest';
import { addEdge, CycleError, topologicalOrder } from '../../../src/orchestration/dag.js';
import { sizeClass } from '../../../src/runtime/memory/size-classes.js';
import { chooseStream, recommendStrategy, type StreamLoad } from '../../../src/orchestration/strategy.js';

const names = ['', 'a', 'b', 'c', 'd'];
const name = (id: number): string => names[id]!;

describe('dependency graph', () => {
  it('orders a diamond and rejects the edge that closes a cycle, naming it', () => {
    const deps = new Map<number, Set<number>>();
    addEdge(deps, 1, 2, name);
    addEdge(deps, 1, 3, name);
    addEdge(deps, 2, 4, name);
    addEdge(deps, 3, 4, name);
    expect(topologicalOrder([4, 3, 2, 1], deps)).toEqual([1, 2, 3, 4]);
    expect(() => addEdge(deps, 4, 1, name)).toThrow(CycleError);
    try {
      addEdge(deps, 4, 1, name);
    } catch (e) {
      expect((e as CycleError).cycle[0]).toBe('a');
      expect((e as CycleError).cycle.at(-1)).toBe('a');
      expect((e as Error).message).toMatch(/^dependency cycle: a -> (b|c) -> d -> a$/);
    }
    expect(() => addEdge(deps, 2, 2, name)).toThrow('dependency cycle: b -> b');
    expect(topologicalOrder([1, 2, 3, 4], deps)).toEqual([1, 2, 3, 4]);
  });
});

describe('stream pool strategies', () => {
  const loads: StreamLoad[] = [
    { index: 0, outstanding: 3, priority: 'high', purpose: 'ConfigUpload' },
    { index: 1, outstanding: 5, priority: 'normal', purpose: 'KernelExecution' },
    { index: 2, outstanding: 0, priority: 'normal', purpose: 'KernelExecution' },
    { index: 3, outstanding: 1, priority: 'low', purpose: 'TelemetryDownload' },
  ];
  it('round robin cycles, load balancing takes the least loaded', () => {
    expect([0, 1, 2, 3, 4].map((t) => chooseStream('RoundRobin', loads, {}, t))).toEqual([0, 1, 2, 3, 0]);
    expect(chooseStream('LoadBalanced', loads, {}, 0)).toBe(2);
    expect(chooseStream('LoadBalanced', loads, { purpose: 'TelemetryDownload' }, 0)).toBe(3);
  });
  it('priority and workload pick by level and purpose', () => {
    expect(chooseStream('Priority', loads, {}, 0)).toBe(0);
    expect(chooseStream('Priority', loads, { priority: 'low' }, 0)).toBe(3);
    expect(chooseStream('Workload', loads, { workload: 'Compute' }, 0)).toBe(2);
    expect(chooseStream('Workload', loads, { workload: 'Memory' }, 0)).toBe(3);
  });
  it('optimize rules', () => {
    expect(
      recommendStrategy(
        new Map([
          ['Compute', 10],
          ['Memory', 1],
        ]),
        loads,
      ),
    ).toBe('Workload');
    expect(
      recommendStrategy(
        new Map([['Compute', 1]]),
        loads.map((l) => ({ ...l, outstanding: l.index === 1 ? 9 : 0 })),
      ),
    ).toBe('LoadBalanced');
    expect(recommendStrategy(new Map([['Compute', 1]]), loads)).toBe('RoundRobin');
    expect(
      recommendStrategy(
        new Map(),
        loads.map((l) => ({ ...l, outstanding: 1 })),
      ),
    ).toBe('RoundRobin');
  });
});

describe('allocator size classes', () => {
  it('rounds up to powers of two from 256 bytes', () => {
    expect(sizeClass(1)).toBe(256);
    expect(sizeClass(256)).toBe(256);
    expect(sizeClass(257)).toBe(512);
    expect(sizeClass(1 << 20)).toBe(1 << 20);
    expect(sizeClass((1 << 20) + 1)).toBe(1 << 21);
    expect(() => sizeClass(0)).toThrow(/positive integer/);
  });

  it('agrees with the smallest power of two at or above the request across the bit-arithmetic limit (1 GiB) and beyond', () => {
    const reference = (bytes: number): number => {
      let c = 256;
      while (c < bytes) c *= 2;
      return c;
    };
    const sizes = [
      255,
      511,
      512,
      513,
      4095,
      2 ** 29 - 1,
      2 ** 29,
      2 ** 29 + 1,
      2 ** 30 - 1,
      2 ** 30,
      2 ** 30 + 1,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 31 + 1,
      3 * 2 ** 33,
      2 ** 40 + 7,
    ];
    for (let i = 0; i < 200; i++) sizes.push(1 + Math.floor(Math.random() * 2 ** (1 + Math.floor(Math.random() * 44))));
    for (const bytes of sizes) expect(sizeClass(bytes), `sizeClass(${bytes})`).toBe(reference(bytes));
    expect(() => sizeClass(1.5)).toThrow(/positive integer/);
    expect(() => sizeClass(Number.NaN)).toThrow(/positive integer/);
  });
});
