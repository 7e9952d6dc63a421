/**
 * Coordinator.capture(): records pending GPU operations into a CUDA Graph instead of running them,
 * with the same streams and the same cross-stream events (fork from the first operation's stream,
 * join back into it), so launching the graph replays one iteration of the DAG with one call.
 */
import type { CUevent } from '../ffi/generated/types.js';
import type { Context } from '../runtime/context.js';
import { cu } from '../ffi/checked.js';
import { Graph, type CaptureMode } from '../runtime/graph.js';
import type { Stream } from '../runtime/stream.js';
import { isThenable } from './host-calls.js';
import type { Operation } from './operation.js';

/**
 * Captures `ops` (pending, in a valid order; nothing is marked) into a Graph. Host steps cannot
 * be captured; neither can a dependency on work outside `ops` that has not completed.
 */
export function captureOperations(
  label: string,
  context: Context,
  ops: readonly Operation[],
  options: { mode?: CaptureMode | undefined; label?: string | undefined },
): Graph {
  if (ops.length === 0) throw new Error(`${label}: no pending operations to capture`);
  const inCapture = new Set(ops);
  const depsOf = new Map<Operation, Operation[]>();
  for (const op of ops) {
    if (op.isHost) throw new TypeError(`${label}: "${op.name}" is a host step; a graph holds only GPU work`);
    const deps: Operation[] = [];
    for (const d of op.after) {
      if (inCapture.has(d)) deps.push(d);
      else if (d.state !== 'completed' && d.state !== 'captured')
        throw new Error(
          `${label}: "${op.name}" depends on "${d.name}", which is ${d.state}: capture once it has completed`,
        );
    }
    depsOf.set(op, deps);
  }
  const origin = ops[0]!.stream;
  const streams = [...new Set(ops.map((op) => op.stream))];
  const events = context.completionEvents;
  // Taken before the capture begins: creating an event is no part of the work to record.
  const taken: CUevent[] = [];
  for (let i = 0; i < 1 + ops.length + streams.length; i++) taken.push(events.acquire());
  let next = 0;
  const api = cu();
  const record = (stream: Stream): CUevent => {
    const e = taken[next++]!;
    api.cuEventRecord(e, stream.use(), `${label}: capture on stream "${stream.label}"`);
    return e;
  };
  const waitOn = (stream: Stream, e: CUevent): void =>
    api.cuStreamWaitEvent(stream.use(), e, 0, `${label}: capture on stream "${stream.label}"`);
  try {
    return Graph.capture(
      origin,
      () => {
        // Other streams join the capture by waiting on an event of the capturing stream.
        const fork = record(origin);
        for (const s of streams) if (s !== origin) waitOn(s, fork);
        const recorded = new Map<Operation, CUevent>();
        let failure: unknown;
        try {
          for (const op of ops) {
            for (const d of depsOf.get(op)!) if (d.stream !== op.stream) waitOn(op.stream, recorded.get(d)!);
            if (!op.barrier && isThenable(op.spec.run(op.stream)))
              throw new TypeError(
                `${label}: "${op.name}" returned a promise; GPU operations must enqueue synchronously`,
              );
            recorded.set(op, record(op.stream));
          }
        } catch (e) {
          failure = e;
        }
        // Every forked stream joins back into the origin, also after a failure: otherwise the
        // capture could not end and the streams would stay in capture mode.
        try {
          for (const s of streams) if (s !== origin) waitOn(origin, record(s));
        } catch (e) {
          failure ??= e;
        }
        if (failure !== undefined) throw failure;
      },
      { mode: options.mode ?? 'threadLocal', label: options.label ?? `${label} iteration` },
    );
  } finally {
    // Events recorded in a capture are only edges of the graph; any later use records them again first.
    for (const e of taken) events.recycle(e);
  }
}
