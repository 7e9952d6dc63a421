/** Pure dependency-graph logic of the Coordinator: cycle detection and ordering, no CUDA. */

/** A dependency the Coordinator (or addEdge) refused because it would close a cycle; `cycle` names it, first to last. */
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
export function addEdge(
  deps: Map<number, Set<number>>,
  dependency: number,
  dependent: number,
  name: (id: number) => string,
): void {
  if (dependency === dependent) throw new CycleError([name(dependent), name(dependent)]);
  // A cycle appears if `dependency` already (transitively) depends on `dependent`.
  const path = findPath(deps, dependency, dependent);
  // In run order ("x -> y": y runs after x) the existing chain is dependent -> ... -> dependency.
  if (path) throw new CycleError([...path.reverse().map(name), name(dependent)]);
  let set = deps.get(dependent);
  if (!set) deps.set(dependent, (set = new Set()));
  set.add(dependency);
}

/**
 * Adds an edge to a node nothing depends on yet (one just added): such an edge cannot close a
 * cycle, so the search addEdge makes is skipped.
 */
export function addEdgeToNew(deps: Map<number, Set<number>>, dependency: number, dependent: number): void {
  let set = deps.get(dependent);
  if (!set) deps.set(dependent, (set = new Set()));
  set.add(dependency);
}

/** A binary min-heap of ids: Kahn's order stays O((V + E) log V) however wide the graph. */
class IdHeap {
  readonly #a: number[] = [];
  get size(): number {
    return this.#a.length;
  }
  push(v: number): void {
    const a = this.#a;
    let i = a.push(v) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= v) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }
  pop(): number {
    const a = this.#a;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1]! < a[l]! ? l + 1 : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/**
 * Kahn's order over `ids`, smallest ready id first, so the order is deterministic (insertion
 * order where the graph allows it). Dependencies outside `ids` are ignored (already run).
 * Throws a CycleError if what remains cannot be ordered.
 */
export function topologicalOrder(
  ids: readonly number[],
  deps: ReadonlyMap<number, ReadonlySet<number>>,
  name: (id: number) => string = (id) => `#${id}`,
): number[] {
  const indegree = new Map<number, number>();
  const dependents = new Map<number, number[]>();
  for (const id of ids) indegree.set(id, 0);
  for (const id of ids) {
    for (const d of deps.get(id) ?? []) {
      if (!indegree.has(d)) continue;
      indegree.set(id, indegree.get(id)! + 1);
      let list = dependents.get(d);
      if (!list) dependents.set(d, (list = []));
      list.push(id);
    }
  }
  const ready = new IdHeap();
  for (const id of ids) if (indegree.get(id) === 0) ready.push(id);
  const out: number[] = [];
  while (ready.size) {
    const id = ready.pop();
    out.push(id);
    for (const n of dependents.get(id) ?? []) {
      const left = indegree.get(n)! - 1;
      indegree.set(n, left);
      if (left === 0) ready.push(n);
    }
  }
  if (out.length < indegree.size) {
    // addEdge refuses cycles, so only hand-built maps get here; name one for the message.
    const stuck = [...indegree.keys()].filter((id) => indegree.get(id)! > 0);
    throw new CycleError(findCycle(stuck, deps).map(name));
  }
  return out;
}

/** A cycle among `ids` (each of which lies on or behind one), in run order, first node repeated at the end. */
function findCycle(ids: readonly number[], deps: ReadonlyMap<number, ReadonlySet<number>>): number[] {
  const inSet = new Set(ids);
  // Walk "depends on" links inside the stuck set until a node repeats.
  const seenAt = new Map<number, number>();
  const walk: number[] = [];
  let cur = ids[0]!;
  while (!seenAt.has(cur)) {
    seenAt.set(cur, walk.length);
    walk.push(cur);
    cur = [...(deps.get(cur) ?? [])].find((d) => inSet.has(d))!;
  }
  const cycle = walk.slice(seenAt.get(cur)!).reverse();
  return [...cycle, cycle[0]!];
}
