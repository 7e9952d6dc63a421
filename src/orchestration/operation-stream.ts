/** What the Coordinator checks of an operation it is given, and the stream the operation runs on. */
import { checkTimeoutMs } from '../runtime/timeout.js';
import { expectResource } from '../runtime/resource.js';
import { Stream } from '../runtime/stream.js';
import { checkSpecFields, type OperationSpec } from './operation.js';
import type { StreamPool } from './stream-pool.js';

/** An operation's spec: an object with a name and a run function, and well-formed optional fields (errors name `label`). */
export function checkOperationSpec(spec: OperationSpec, label: string): void {
  if (spec === null || typeof spec !== 'object') throw new TypeError(`${label}: an operation must be an object`);
  if (typeof spec.name !== 'string' || spec.name === '') throw new TypeError(`${label}: an operation needs a name`);
  if (typeof spec.run !== 'function') throw new TypeError(`${label}: operation "${spec.name}" needs a run function`);
  checkSpecFields(spec, `${label}: operation "${spec.name}"`);
  if (spec.timeoutMs !== undefined) checkTimeoutMs(spec.timeoutMs, `${label}: operation "${spec.name}": timeoutMs`);
  if (spec.signal !== undefined && !(spec.signal instanceof AbortSignal))
    throw new TypeError(`${label}: operation "${spec.name}": signal must be an AbortSignal`);
  if (spec.after !== undefined && !Array.isArray(spec.after))
    throw new TypeError(`${label}: operation "${spec.name}": after must be an array of names or ids`);
}

/**
 * The stream an operation runs on: its own `stream`, which must be one of the pool's (or, with
 * `guestStreams`, any stream of the pool's context), else one the pool hands out for its purpose
 * and workload.
 */
export function operationStream(spec: OperationSpec, pool: StreamPool, guestStreams: boolean, label: string): Stream {
  let stream = spec.stream;
  if (stream === undefined) {
    const request: {
      purpose?: OperationSpec['purpose'] | undefined;
      workload?: OperationSpec['workload'] | undefined;
    } = {};
    if (spec.purpose !== undefined) request.purpose = spec.purpose;
    if (spec.workload !== undefined) request.workload = spec.workload;
    stream = pool.acquire(request);
  } else if (!pool.has(stream)) {
    // A look-alike object's handle would reach the driver; a stream outside the pool escapes its strategy and barriers.
    expectResource(stream, Stream, `${label}: operation "${spec.name}": stream`);
    if (stream.context !== pool.context)
      throw new Error(
        `${label}: stream "${stream.label}" of "${spec.name}" belongs to another context than ${pool.label}`,
      );
    if (!guestStreams)
      throw new Error(
        `${label}: stream "${stream.label}" of "${spec.name}" is not one of ${pool.label}'s streams (${pool.streams.map((s) => s.label).join(', ')}); use one of them, or make the coordinator with guestStreams: true`,
      );
  }
  return stream;
}
