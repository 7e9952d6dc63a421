/**
 * The queue's job ids: what `submit()` makes, and the one test of whether a string can name a job.
 * BullMQ keeps a job under `<prefix>:<queue>:<id>`, beside its own keys (`events`, `id`, `meta`,
 * `wait`, `marker`, `pc`, ...) and a job's own (`<id>:lock`): an id of another shape would name
 * one of those, and reading it as a job is a Redis type error. Only ids of the shape submit makes
 * reach Redis; any other id is a job the queue does not hold.
 */
import { randomBytes } from 'node:crypto';
import { shownValue } from '../runtime/value-checks.js';

/** A fresh job id: 128 random bits, URL-safe, never all digits (BullMQ refuses integer ids). */
export function newJobId(): string {
  return `j${randomBytes(16).toString('base64url')}`;
}

/** Whether `id` has the shape of newJobId()'s ids: only those can name a job of the queue. */
export function isQueueJobId(id: string): boolean {
  return id.length === 23 && /^j[A-Za-z0-9_-]{22}$/.test(id);
}

/** Throws a TypeError naming `call` unless `id` is a string: `undefined` or `{}` would otherwise read as a job Redis does not hold. */
export function checkJobId(call: string, id: unknown): asserts id is string {
  if (typeof id !== 'string') throw new TypeError(`${call}: a job id must be a string, got ${shownValue(id)}`);
}
