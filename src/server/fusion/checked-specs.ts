/**
 * Job specs whose parameters the server's door validated already (job-io.ts readJob, by the
 * engine's own validateJobParameters), with what that validation made of them, so the fuser does
 * not validate the same request a second time: the second pass was about a tenth of a small
 * request's CPU and garbage on the server (parametersOf and checkFlags build a large normalized
 * object each time). Keyed by the very object the fuser is given (the job runner carries the mark
 * to the spec it builds); a spec nobody marked (a library caller's, a kept job's copy) is
 * validated by the fuser as before. Only the parameters are reused: the fuser still checks the
 * samples' types, the `into` arrays (which the runner adds after the door) and the sizes. CUDA-free.
 */
import type { NormalizedParameters } from '../../engine/validate.js';
import type { JobSpec } from '../../engine/types.js';

/** The marked specs: entries go with their spec (a WeakMap holds no request's memory). */
const checked = new WeakMap<object, NormalizedParameters>();

/**
 * Records that `spec`'s parameters (everything but its samples and `into`) were validated for
 * its data's length as f32 or f64 samples (its data a Float32Array or Float64Array), as `parameters`; the caller must not change the spec
 * afterwards. 16-bit data is not marked: the door validates its parameters as f32 (the flags
 * 16-bit data refuses are the fuser's and the engine's check), so they must be validated again.
 */
export function markChecked(spec: JobSpec, parameters: NormalizedParameters): void {
  const data: unknown = spec.data;
  if (data instanceof Float32Array || data instanceof Float64Array) checked.set(spec, parameters);
}

/** Marks `to` as `from` is (`to`: a copy of `from` with other `into` arrays or none); returns `to`. */
export function carryChecked(from: JobSpec, to: JobSpec): JobSpec {
  const parameters = checked.get(from);
  if (parameters !== undefined) checked.set(to, parameters);
  return to;
}

/** What the door's validation made of `spec`'s parameters, or undefined when it was not marked. */
export function checkedParameters(spec: JobSpec): NormalizedParameters | undefined {
  return checked.get(spec);
}
