/**
 * Filter coefficients on the device: SOS rows, FIR taps and steady states uploaded once per
 * context as immutable float64 tables of the signal workspace (shared by every stream, freed
 * with the other tables), keyed by a hash of their bytes so the same filter is never uploaded twice;
 * tables computed from a filter (sosfilt's section and transition tables) are keyed by the filter's hash.
 */
import { createHash } from 'node:crypto';
import type { Context } from '../runtime/context.js';
import type { DeviceBuffer } from '../runtime/memory/device-buffer.js';
import type { Stream } from '../runtime/stream.js';
import { signalWorkspace } from './workspace.js';

/** The hash that keys the tables of `values` (a filter's coefficients). */
export function coefficientDigest(values: Float64Array): string {
  return createHash('sha256')
    .update(new Uint8Array(values.buffer, values.byteOffset, values.byteLength))
    .digest('base64url');
}

/** The device table of `values` (float64) under `kind` (what they are: 'sos', 'taps', 'sos-zi'). */
export function coefficientTable(
  context: Context,
  kind: string,
  values: Float64Array,
  stream: Stream,
): DeviceBuffer<'f64'> {
  return signalWorkspace.table(
    context,
    `filter-${kind}:${values.length}:${coefficientDigest(values)}`,
    'f64',
    stream,
    () => values,
  );
}

/**
 * A float64 table computed from a filter (`make` runs only when it is not cached), keyed by `kind`, the
 * filter's coefficientDigest and `variant` (what else it depends on).
 */
export function derivedTable(
  context: Context,
  kind: string,
  digest: string,
  variant: string,
  make: () => Float64Array,
  stream: Stream,
): DeviceBuffer<'f64'> {
  return signalWorkspace.table(context, `filter-${kind}:${variant}:${digest}`, 'f64', stream, make);
}
