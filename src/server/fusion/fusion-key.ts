/**
 * Which job requests may share one engine job: those whose validated parameters, sample type and
 * series length are all equal run the same GPU work on every series, so their series can be
 * stacked into one batch and the result cut back along the batch axis. CUDA-free.
 */
import { BUILTIN_FLAGS, JOB_PARAMETER_TABLE, type ParameterDef } from '../../engine/parameters.js';
import type { JobFlag } from '../../engine/types.js';
import type { NormalizedJob } from '../../engine/validate.js';

/**
 * Whether every flag is a built-in one. A registered stage returns one value per job (or per
 * chunk), not per series: no split could give each request its own share of it.
 */
export function builtinFlagsOnly(flags: readonly JobFlag[]): boolean {
  for (let i = 0; i < flags.length; i++) if (!(BUILTIN_FLAGS as readonly JobFlag[]).includes(flags[i]!)) return false;
  return true;
}

/**
 * The normalized fields of the job parameters that change what each series computes (every row of
 * the job schema but those marked `perSeries: false`: the batch, the label, the deadline), read
 * from the table so a new parameter keys fused jobs without a change here.
 */
const PER_SERIES_FIELDS: readonly string[] = (JOB_PARAMETER_TABLE as readonly ParameterDef[])
  .filter((row) => row.field !== null && row.perSeries !== false)
  .map((row) => row.field!);

/**
 * The key of a validated job: two jobs with the same key compute the same thing on each of their
 * series (flags, sample type and scale, output type, series length, fs and every parameter of the
 * flags, defaults filled in), so their series may run as one batch. What differs between requests
 * of one key is only the data, the batch, the result arrays (`into`), the label and the deadline.
 */
export function fusionKey(job: NormalizedJob): string {
  const fields = job as unknown as Readonly<Record<string, unknown>>;
  const parts: unknown[] = [
    job.dtype,
    job.outputFloat ?? null,
    job.length,
    // nperseg and noverlap are normalized into the framing.
    job.framing?.nperseg ?? null,
    job.framing?.noverlap ?? null,
  ];
  for (const field of PER_SERIES_FIELDS) parts.push(fields[field] ?? null);
  return JSON.stringify(parts);
}
