/**
 * A job's `flags` checked: built-in flags by their rows of the job schema (which sample types each
 * takes, which parameters it needs), anything else a registered stage. CUDA-free.
 */
import { fail, show } from './field-checks.js';
import { BUILTIN_FLAGS, JOB_FLAGS, flagDef } from './parameters.js';
import type { JobFlagSet } from './normalized-job.js';
import type { JobDataType, JobSpec } from './types.js';

/** The flags of a job: which were asked for, each built-in one as a boolean, and the registered stages in flag order. */
export interface CheckedFlags {
  readonly seen: ReadonlySet<string>;
  readonly set: JobFlagSet;
  readonly stages: readonly string[];
}

/** Checks `spec.flags` against the flag rows and the registered `stages`; throws JobValidationError naming the field. */
export function checkFlags(
  spec: Omit<JobSpec, 'data'>,
  stageNames: ReadonlySet<string>,
  dtype: JobDataType,
): CheckedFlags {
  const flags: unknown = spec.flags;
  if (!Array.isArray(flags))
    return fail(
      'flags',
      `must be an array of flags (${BUILTIN_FLAGS.join(', ')} or a registered stage), got ${show(flags)}`,
    );
  if (flags.length === 0)
    fail('flags', `is empty: ask for at least one of ${BUILTIN_FLAGS.join(', ')} or a registered stage`);
  const seen = new Set<string>();
  const stages: string[] = [];
  // An index loop visits holes (as undefined), which forEach and map skip: `[, 'stft']` is refused, not half read.
  for (let i = 0; i < flags.length; i++) {
    const flag: unknown = flags[i];
    if (typeof flag !== 'string') return fail(`flags[${i}]`, `must be a string, got ${show(flag)}`);
    if (seen.has(flag)) fail(`flags[${i}]`, `"${flag}" is given twice`);
    seen.add(flag);
    if (flagDef(flag) !== undefined) continue;
    if (!stageNames.has(flag))
      fail(
        `flags[${i}]`,
        `unknown flag "${flag}": not one of ${BUILTIN_FLAGS.join(', ')} nor a registered stage${stageNames.size ? ` (${[...stageNames].join(', ')})` : ''}`,
      );
    stages.push(flag);
  }
  if (dtype !== 'f32' && dtype !== 'f64') {
    const refused = [...seen].filter((f) => flagDef(f)?.sixteenBit === false);
    if (refused.length > 0 || stages.length > 0)
      fail(
        'flags',
        `${dtype} data takes the ${JOB_FLAGS.filter((f) => f.sixteenBit)
          .map((f) => f.name)
          .join(
            ' and ',
          )} flags; ${refused.length > 0 ? refused.join(', ') : `registered stages (${stages.join(', ')})`} need f32 or f64 data`,
      );
  }
  for (const row of JOB_FLAGS) {
    if (!seen.has(row.name) || !('requires' in row)) continue;
    for (const field of row.requires)
      if ((spec as Record<string, unknown>)[field] === undefined) fail(field, `the ${row.name} flag needs ${field}`);
  }
  const set = Object.fromEntries(JOB_FLAGS.map((f) => [f.name, seen.has(f.name)])) as unknown as JobFlagSet;
  return { seen, set, stages };
}
