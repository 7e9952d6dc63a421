/**
 * Filter coefficients on the device: SOS rows, FIR taps and steady states uploaded once per
 * context as immutable float64 tables of the signal workspace (shared by every stream, freed
 * with the other tables), keyed by a hash of their bytes so the same filter is never uploaded twice.
 */
import { createHash } from 'node:crypto';
import type { Context } from '../runtime/context.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { Stream } from '../runtime/stream.js';
import { signalWorkspace } from './workspace.js';

/** The key coefficient tables are cached under: a hash of the bytes of `values` (float64). */
export function coefficientDigest(values: Float64Array): string {
  return createHash('sha256')
    .update(new Uint8Array(values.buffer, values.byteOffset, values.byteLength))
    .digest('base64url');
}

/**
 * The device table of `values` (float64) under `kind` (what they are: 'sos', 'taps', 'sos-zi');
 * `digest` is coefficientDigest(values) where the caller has it already (tables derived from the
 * same values share it).
 */
export function coefficientTable(
  context: Context,
  kind: string,
  values: Float64Array,
  stream: Stream,
  digest: string = coefficientDigest(values),
): DeviceBuffer<'f64'> {
  return signalWorkspace.table(context, `filter-${kind}:${values.length}:${digest}`, 'f64', stream, () => values);
}
