import { bestEffort, cu, cuOutPointers } from '../ffi/checked.js';
import {
  CUgraphNodeType,
  CUstreamCaptureMode,
  type CUgraph,
  type CUgraphExec,
  type CUgraphNode,
} from '../ffi/generated/types.js';
import koffi from 'koffi';
import type { Context } from './context.js';
import { Kernel, type KernelArg } from './kernel.js';
import { checkLabel, describeValue, DisposedError, expectResource, isLive, Resource } from './resource.js';
import { Stream } from './stream.js';

/** How strictly `Graph.capture` guards the capture (CUstreamCaptureMode): which threads' unsafe calls (e.g. cuMemAlloc) are rejected while it runs — all ('global'), this one ('threadLocal', the default), or none ('relaxed'). */
export type CaptureMode = 'global' | 'threadLocal' | 'relaxed';
const MODES: Record<CaptureMode, number> = {
  global: CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL,
  threadLocal: CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
  relaxed: CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED,
};

/** A CUDA graph: work captured once from a stream, replayed cheaply after instantiate(). */
export class Graph extends Resource {
  readonly handle: CUgraph;
  readonly context: Context;

  private constructor(handle: CUgraph, context: Context, label: string | undefined) {
    super('Graph', label);
    this.handle = handle;
    this.context = context;
    this.track(() => cu().cuGraphDestroy(handle));
  }

  /**
   * Records what `enqueue` submits to `stream` (and to streams that wait on it) into a graph,
   * without running it. If `enqueue` throws, the capture is ended and discarded.
   */
  static capture(
    stream: Stream,
    enqueue: () => void,
    options: { mode?: CaptureMode | undefined; label?: string | undefined } = {},
  ): Graph {
    expectResource(stream, Stream, 'Graph.capture stream');
    if (typeof enqueue !== 'function')
      throw new TypeError(`Graph.capture: enqueue must be a function, got ${describeValue(enqueue)}`);
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`Graph.capture options must be an object, got ${describeValue(options)}`);
    checkLabel(options.label, 'Graph.capture');
    const modeName = options.mode ?? 'threadLocal';
    if (typeof modeName !== 'string' || !Object.hasOwn(MODES, modeName))
      throw new TypeError(
        `Graph.capture: unknown capture mode ${JSON.stringify(modeName) ?? String(modeName)}; expected one of ${Object.keys(MODES).join(', ')}`,
      );
    if (stream.isDefault)
      throw new TypeError(
        `Graph.capture: ${stream.label} (CUDA's legacy NULL stream) cannot be captured; capture on a new Stream()`,
      );
    const sh = stream.use();
    cu().cuStreamBeginCapture(sh, MODES[modeName] as never, `stream "${stream.label}"`);
    let failure: unknown;
    try {
      enqueue();
    } catch (e) {
      failure = e;
    }
    let graph: CUgraph | undefined;
    try {
      graph = cu().cuStreamEndCapture(sh, captureDuring, stream);
    } catch (e) {
      failure ??= e; // enqueue's own error, when there is one, is what the caller must see
    }
    if (failure !== undefined) {
      const partial = graph;
      if (partial) bestEffort(() => cu().cuGraphDestroy(partial), undefined);
      throw failure;
    }
    return new Graph(graph!, stream.context, options.label);
  }

  /** The raw handles of every node in the graph (kernels, copies, memsets, ...), in cuGraphGetNodes order; [] for an empty graph. Handles are for setKernelArgs() and driver calls, valid while the graph lives. */
  nodes(): CUgraphNode[] {
    this.assertAlive();
    // The nodes are an array the header declares as one value: the pointer form takes it in place.
    const count = new BigUint64Array(1);
    cuOutPointers().cuGraphGetNodes(this.handle, null, count, this.label);
    const n = Number(count[0]);
    if (n === 0) return [];
    const nodes = new BigUint64Array(n);
    cuOutPointers().cuGraphGetNodes(this.handle, nodes, count, this.label);
    return Array.from(nodes, (h) => h as CUgraphNode);
  }

  /**
   * The kernel launches in the graph, in the order cuGraphGetNodes lists them; with `kernel`,
   * only the launches of that kernel (matched by its CUfunction).
   */
  kernelNodes(kernel?: Kernel): CUgraphNode[] {
    this.assertAlive();
    if (kernel !== undefined) expectResource(kernel, Kernel, `${this.label} kernelNodes(kernel)`);
    const wanted = kernel === undefined ? undefined : handleAddress(kernel.function);
    return this.nodes().filter((node) => {
      if (cu().cuGraphNodeGetType(node, this.label) !== CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL) return false;
      if (wanted === undefined) return true;
      return handleAddress(cu().cuGraphKernelNodeGetParams(node, this.label).func) === wanted;
    });
  }

  /** Instantiates the graph for launch (cuGraphInstantiate: blocks for about 0.1–1 ms per 100 nodes; instantiate once, launch many times). */
  instantiate(options: { label?: string | undefined } = {}): GraphExec {
    this.assertAlive();
    checkLabel(options?.label, `${this.label} instantiate`);
    this.context.makeCurrent();
    const exec = cu().cuGraphInstantiate(this.handle, 0, this.label);
    instantiating = true;
    try {
      return new GraphExec(exec, this, options.label ?? `${this.label} (instantiated)`);
    } finally {
      instantiating = false;
    }
  }

  protected releaseNative(): void {
    nodeSets.delete(this);
    cu().cuGraphDestroy(this.handle, this.label);
  }
}

/**
 * The addresses of a graph's nodes, read once: a captured graph never changes, so membership
 * in this set is what proves a node handle came from it (a made-up one would reach the driver
 * as a wild pointer: SIGSEGV).
 */
const nodeSets = new WeakMap<Graph, ReadonlySet<bigint>>();

function nodeSetOf(graph: Graph): ReadonlySet<bigint> {
  let set = nodeSets.get(graph);
  if (set === undefined) {
    set = new Set(graph.nodes().map(handleAddress));
    nodeSets.set(graph, set);
  }
  return set;
}

/** Set only while Graph.instantiate() constructs: a GraphExec around any other handle would hand the driver a wild pointer. */
let instantiating = false;

/** An instantiated graph: launch() replays the whole captured region with one call. */
export class GraphExec extends Resource {
  readonly handle: CUgraphExec;
  readonly graph: Graph;

  /** Made by `graph.instantiate()` only; a direct `new GraphExec()` throws TypeError (its handle could not be trusted). */
  constructor(handle: CUgraphExec, graph: Graph, label: string) {
    if (!instantiating) throw new TypeError('GraphExec is made by graph.instantiate(), not constructed directly');
    super('GraphExec', label);
    this.handle = handle;
    this.graph = graph;
    this.track(() => cu().cuGraphExecDestroy(handle));
  }

  /** Enqueues one replay of the whole graph on `stream` (cuGraphLaunch) and returns at once; await `stream.done()` for it to finish. Throws if either is disposed. */
  launch(stream: Stream): void {
    this.assertAlive();
    if (!isLive<Stream>(stream, 'Stream')) expectResource(stream, Stream, `${this.label} launch(stream)`);
    cu().cuGraphLaunch(this.handle, stream.use(), launchDuring, this, stream);
  }

  /**
   * Gives kernel node `node` new arguments in the instantiated graph, without capturing again:
   * `kernel` (the kernel the node runs) encodes them, and the driver copies them in.
   *
   * `node` must come from `kernelNodes()` (or `nodes()`) of the graph this was instantiated
   * from, which must not be disposed, and must be a launch of `kernel`: anything else is a
   * TypeError (a DisposedError for a disposed graph) before the driver sees the handle.
   */
  setKernelArgs(node: CUgraphNode, kernel: Kernel, ...args: KernelArg[]): void {
    this.assertAlive();
    expectResource(kernel, Kernel, `${this.label} setKernelArgs kernel`);
    const graph = this.graph;
    if (graph.disposed)
      throw new DisposedError(
        `${this.label} setKernelArgs: its graph "${graph.label}" was disposed, so its node handles are no longer valid`,
      );
    const address = nodeAddress(node);
    if (address === undefined || !nodeSetOf(graph).has(address))
      throw new TypeError(
        `${this.label} setKernelArgs: node must be a node of graph "${graph.label}" (from its kernelNodes()), got ${describeNode(node, address)}`,
      );
    if (cu().cuGraphNodeGetType(address as never, this.label) !== CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL)
      throw new TypeError(
        `${this.label} setKernelArgs: node ${describeNode(node, address)} of graph "${graph.label}" is not a kernel launch (use kernelNodes())`,
      );
    const params = cu().cuGraphKernelNodeGetParams(address as never, this.label) as unknown as Record<string, unknown>;
    // Another kernel's parameter block may be shorter than what the node's kernel reads: the driver would read past it.
    if (handleAddress(params.func) !== handleAddress(kernel.function))
      throw new TypeError(
        `${this.label} setKernelArgs: node ${describeNode(node, address)} does not launch kernel "${kernel.name}"; pass the kernel the node runs (kernelNodes(kernel) lists its nodes)`,
      );
    kernel.setArgs(...args);
    params.kernelParams = kernel.parameterArray;
    params.extra = null;
    cu().cuGraphExecKernelNodeSetParams(this.handle, address as never, params as never, setArgsDuring, this, kernel);
  }

  protected releaseNative(): void {
    cu().cuGraphExecDestroy(this.handle, this.label);
  }
}

// What a failed call was doing, built only when it fails (src/ffi/checked-call.ts).
const captureDuring = (stream: Stream): string => `capture on stream "${stream.label}"`;
const launchDuring = (exec: GraphExec, stream: Stream): string => `${exec.label} on stream "${stream.label}"`;
const setArgsDuring = (exec: GraphExec, kernel: Kernel): string => `${exec.label}: kernel "${kernel.name}"`;

/** A node argument's address, or undefined when it is no handle at all (a plain object, a string, a negative number). */
function nodeAddress(node: unknown): bigint | undefined {
  if (typeof node === 'bigint') return node > 0n ? node : undefined;
  if (typeof node === 'number') return Number.isSafeInteger(node) && node > 0 ? BigInt(node) : undefined;
  if (typeof node !== 'object' || node === null) return undefined;
  try {
    return handleAddress(node);
  } catch {
    return undefined; // koffi refuses anything that is not one of its pointers
  }
}

function describeNode(node: unknown, address: bigint | undefined): string {
  return address === undefined ? describeValue(node) : `0x${address.toString(16)}`;
}

/** Handles come back from koffi as bigints or as pointer objects, depending on where they were read. */
function handleAddress(handle: unknown): bigint {
  if (typeof handle === 'bigint') return handle;
  if (typeof handle === 'number') return BigInt(handle);
  if (handle === null || handle === undefined) return 0n;
  return BigInt(koffi.address(handle as never) as bigint | number);
}
