/** Pure dependency-graph logic of the Coordinator: cycle detection and ordering, no CUDA. */

export class CycleError extends Error {
  override readonly name = 'CycleError';
  constructor(readonly cycle: string[]) {
    super(`dependency cycle: ${cycle.join(' -> ')}`);
  }
}

/** A path from `start` to `goal` following "depends on" links, if there is one. */
function findPath(deps: ReadonlyMap<number, ReadonlySet<number>>, start: number, goal: number): number[] | undefined {
  const parent = new Map<number, number>();
  const stack = [start];
  const seen = new Set([start]);
  while (stack.length) {
    const n = stack.pop()!;
    if (n === goal) {
      const path = [n];
      let cur = n;
      while (cur !== start) {
        cur = parent.get(cur)!;
        path.push(cur);
      }
      return path.reverse();
    }
    for (const d of deps.get(n) ?? []) {
      if (seen.has(d)) continue;
      seen.add(d);
      parent.set(d, n);
      stack.push(d);
    }
  }
  return undefined;
}

/**
 * Adds "`dependent` runs after `dependency`", refusing an edge that would close a cycle
 * with a CycleError naming it (by the names `name` gives).
 */
export function addEdge(deps: Map<number, Set<number>>, dependency: number, dependent: number, name: (id: number) => string): void {
  if (dependency === dependent) throw new CycleError([name(dependent), name(dependent)]);
  // A cycle appears if `dependency` already (transitively) depends on `dependent`.
  const path = findPath(deps, dependency, dependent);
  // In run order ("x -> y": y runs after x) the existing chain is dependent -> ... -> dependency.
  if (path) throw new CycleError([...path.reverse().map(name), name(dependent)]);
  let set = deps.get(dependent);
  if (!set) deps.set(dependent, (set = new Set()));
  set.add(dependency);
}

/** Kahn's order over ids (ties by id, so the order is deterministic). */
export function topologicalOrder(ids: readonly number[], deps: ReadonlyMap<number, ReadonlySet<number>>): number[] {
  const indegree = new Map<number, number>();
  const dependents = new Map<number, number[]>();
  for (const id of ids) indegree.set(id, 0);
  for (const id of ids) {
    for (const d of deps.get(id) ?? []) {
      if (!indegree.has(d)) continue;
      indegree.set(id, indegree.get(id)! + 1);
      (dependents.get(d) ?? dependents.set(d, []).get(d)!).push(id);
    }
  }
  const ready = ids.filter((id) => indegree.get(id) === 0).sort((a, b) => a - b);
  const out: number[] = [];
  while (ready.length) {
    const id = ready.shift()!;
    out.push(id);
    for (const n of dependents.get(id) ?? []) {
      const left = indegree.get(n)! - 1;
      indegree.set(n, left);
      if (left === 0) {
        ready.push(n);
        ready.sort((a, b) => a - b);
      }
    }
  }
  return out;
}
