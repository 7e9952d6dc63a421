/**
 * JSON schemas of the answers the routes share: the error envelope every 4xx/5xx carries and the
 * JSON form of a job result. fastify serializes a JSON answer with its route's response schema
 * (fast-json-stringify), which leaves out every property the schema does not list: a field an
 * answer carries must be here or in its route's schema. Binary answers (Buffers, streams) and
 * text (`/metrics`) are sent as they are, with no schema.
 */
import { RESULT_ARRAY_FIELDS } from '../engine/parameters.js';
import { DEFAULT_LIMITS } from './options.js';

const NUMBER = { type: 'number' } as const;
const STRING = { type: 'string' } as const;
const BOOLEAN = { type: 'boolean' } as const;

/** The `error` object of an error answer (HttpError.toJSON), also a failed job's `error` in `GET /v1/jobs/:id`. */
export const ERROR_DETAIL_SCHEMA = {
  type: 'object',
  required: ['code', 'message', 'retryable'],
  properties: { code: STRING, message: STRING, field: STRING, retryable: BOOLEAN },
} as const;

/** `{ error: {...} }`, the body of every 4xx/5xx the one error handler (error-handler.ts) sends. */
export const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: { error: ERROR_DETAIL_SCHEMA },
} as const;

/** The error answers of every route, by status class: a route's own schemas go beside them. */
export const ERROR_RESPONSES = { '4xx': ERROR_BODY_SCHEMA, '5xx': ERROR_BODY_SCHEMA } as const;

/** An object with one property per result array field (engine/job-schema.ts's output rows), each of schema `of`. */
function perResultArray<S>(of: S): Record<string, S> {
  return Object.fromEntries(RESULT_ARRAY_FIELDS.map((field) => [field, of]));
}

/**
 * A job result as JSON (codec.ts, encodeJsonResult): the metadata of resultMeta, each result
 * array as numbers, and their shapes and element types. The array fields come from the
 * engine's output rows, so a new output row is in the answers without a change here.
 */
export const JOB_RESULT_SCHEMA = {
  type: 'object',
  required: ['id', 'lane', 'device', 'batch', 'length', 'fs', 'timings', 'shapes', 'dtypes'],
  properties: {
    id: NUMBER,
    lane: NUMBER,
    device: NUMBER,
    batch: NUMBER,
    length: NUMBER,
    fs: NUMBER,
    timings: {
      type: 'object',
      required: ['queuedMs', 'runMs', 'gpuMs'],
      properties: { queuedMs: NUMBER, runMs: NUMBER, gpuMs: NUMBER },
    },
    frames: NUMBER,
    dominant: {
      type: 'array',
      items: {
        type: 'object',
        properties: { frequency: NUMBER, period: NUMBER, amplitude: NUMBER, phase: NUMBER },
      },
    },
    // What a registered stage returns is the stage's own: any JSON value under its name.
    stages: { type: 'object', additionalProperties: true },
    ...perResultArray({ type: 'array', items: NUMBER }),
    shapes: { type: 'object', properties: perResultArray({ type: 'array', items: NUMBER }) },
    dtypes: { type: 'object', properties: perResultArray(STRING) },
  },
} as const;

/** The schema of a limits value: a number, or an object of numbers (jobRetention), by the defaults' own keys. */
function limitSchema(value: unknown): Record<string, unknown> {
  if (typeof value === 'number') return NUMBER;
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, limitSchema(v)])),
  };
}

/** The server's limits as `GET /v1/info` shows them: every key of DEFAULT_LIMITS (options.ts), so a new limit is shown. */
export const LIMITS_SCHEMA = limitSchema(DEFAULT_LIMITS);
