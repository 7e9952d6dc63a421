/**
 * A job's parameters checked by their rows of the job schema (job-schema.ts): every scalar given
 * (number, integer, boolean, enum, string) against its row's type and range, and the normalized
 * values of the rows that fill in a default or stay optional. A new scalar parameter is checked
 * and normalized by its row alone. CUDA-free.
 */
import { fail, show } from './field-checks.js';
import { JOB_PARAMETER_TABLE, type ParameterDef } from './parameters.js';
import type { NormalizedDefaults, NormalizedOptionals } from './normalized-job.js';
import type { JobSpec } from './types.js';

/** The range of a number or integer row, in words (` >= 1 (positive)`, ` > 0 and <= 8`), or nothing without bounds. */
export function rangeText(def: ParameterDef): string {
  const parts: string[] = [];
  if (def.min !== undefined) parts.push(def.exclusiveMin === true ? `> ${def.min}` : `>= ${def.min}`);
  if (def.max !== undefined) parts.push(`<= ${def.max}`);
  const positive =
    def.min !== undefined &&
    ((def.exclusiveMin === true && def.min === 0) || (def.type === 'integer' && def.min === 1));
  return parts.length === 0 ? '' : ` ${parts.join(' and ')}${positive ? ' (positive)' : ''}`;
}

/** A value of a number or integer row checked against it (type, min, max), refused naming `field`. */
export function tableNumber(v: unknown, def: ParameterDef, field: string): number {
  const integer = def.type === 'integer';
  const what = integer ? 'an integer' : 'a finite number';
  if (typeof v !== 'number' || !(integer ? Number.isSafeInteger(v) : Number.isFinite(v)))
    return fail(field, `must be ${what}${rangeText(def)}, got ${show(v)}`);
  const low = def.min !== undefined && (def.exclusiveMin === true ? !(v > def.min) : v < def.min);
  if (low || (def.max !== undefined && v > def.max)) fail(field, `must be ${what}${rangeText(def)}, got ${v}`);
  return v;
}

/**
 * Checks every scalar parameter given (number, integer, boolean, enum, string) against its row of
 * the table. Checks that need other fields (ranges against N or fs/2, arrays, windows, filters)
 * follow in validate.ts.
 */
export function checkByTable(spec: Omit<JobSpec, 'data'>): void {
  for (const def of JOB_PARAMETER_TABLE) {
    if (def.field === null) continue;
    const v = (spec as Record<string, unknown>)[def.field];
    if (v === undefined) continue;
    const d: ParameterDef = def;
    switch (d.type) {
      case 'number':
      case 'integer':
        tableNumber(v, d, def.field);
        break;
      case 'boolean':
        if (typeof v !== 'boolean') fail(def.field, `must be true or false, got ${show(v)}`);
        break;
      case 'enum':
        if (!(d.values ?? []).includes(v as string | boolean))
          fail(
            def.field,
            `must be one of ${(d.values ?? []).map((x) => JSON.stringify(x)).join(', ')}, got ${show(v)}`,
          );
        break;
      case 'string':
        if (typeof v !== 'string' || v.length > (d.maxLength ?? Infinity))
          fail(
            def.field,
            `must be a string${d.maxLength === undefined ? '' : ` of at most ${d.maxLength} characters`}, got ${typeof v === 'string' ? `${v.length} characters` : show(v)}`,
          );
        break;
      default:
        break;
    }
  }
}

/**
 * The normalized values of the rows that fill in a default (`normal: 'default'`: the value given,
 * else the row's `value`) or stay optional (`normal: 'optional'`); after checkByTable, so every
 * value given is valid.
 */
export function tableValues(spec: Omit<JobSpec, 'data'>): NormalizedDefaults & NormalizedOptionals {
  const out: Record<string, unknown> = {};
  for (const def of JOB_PARAMETER_TABLE as readonly ParameterDef[]) {
    if (def.field === null || (def.normal !== 'default' && def.normal !== 'optional')) continue;
    const v = (spec as Record<string, unknown>)[def.field];
    out[def.field] = v === undefined && def.normal === 'default' ? def.value : v;
  }
  // Each field filled by its row: a value its row's checks passed, or the row's default of that type.
  return out as NormalizedDefaults & NormalizedOptionals;
}
