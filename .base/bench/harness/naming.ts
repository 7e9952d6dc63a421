/** Where a run's results go: bench/results/<gpu-slug>-<yyyymmdd>.{json,md,svg}. */
import { join } from 'node:path';
import { gpuSlug } from '../report/slug.js';

/** yyyymmdd of the date in UTC, so the name does not depend on the host's time zone. */
export function yyyymmdd(date: Date): string {
  const y = date.getUTCFullYear().toString().padStart(4, '0');
  const m = (date.getUTCMonth() + 1).toString().padStart(2, '0');
  const d = date.getUTCDate().toString().padStart(2, '0');
  return `${y}${m}${d}`;
}

/** A run limited with --only is marked `-partial`, so it never overwrites the day's full results. */
export function resultsBaseName(gpuName: string, date: Date, partial = false): string {
  return `${gpuSlug(gpuName)}-${yyyymmdd(date)}${partial ? '-partial' : ''}`;
}

export interface ResultsPaths {
  json: string;
  md: string;
  svg: string;
}

export function resultsPaths(dir: string, gpuName: string, date: Date, partial = false): ResultsPaths {
  const base = join(dir, resultsBaseName(gpuName, date, partial));
  return { json: `${base}.json`, md: `${base}.md`, svg: `${base}.svg` };
}
