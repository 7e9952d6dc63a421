/**
 * JSON schemas of the request bodies (fastify validates JSON bodies with them before a handler
 * runs). The job body's properties come from the engine's table of job parameters: the schema
 * checks types and ranges cheaply; the engine's validation (run before the GPU is needed) checks
 * everything that depends on other fields.
 */
import { JOB_PARAMETER_TABLE, type ParameterDef } from '../engine/parameters.js';

const NUMBER = { type: 'number' } as const;
const BAND = { type: 'array', items: NUMBER, minItems: 2, maxItems: 2 } as const;

/** The schema of one parameter of the table, by its type and range. */
function schemaOf(def: ParameterDef): Record<string, unknown> {
  const range = (): Record<string, unknown> => ({
    ...(def.min === undefined ? {} : def.exclusiveMin === true ? { exclusiveMinimum: def.min } : { minimum: def.min }),
    ...(def.max === undefined ? {} : { maximum: def.max }),
  });
  switch (def.type) {
    case 'number':
      return { type: 'number', ...range() };
    case 'integer':
      return { type: 'integer', ...range() };
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return { enum: [...(def.values ?? [])] };
    case 'string':
      return { type: 'string', ...(def.maxLength === undefined ? {} : { maxLength: def.maxLength }) };
    case 'band':
      return BAND;
    case 'bands':
      return { type: 'array', items: BAND, minItems: 1 };
    case 'numbers':
      return { type: 'array', items: NUMBER, minItems: 1 };
    case 'flags':
      return { type: 'array', items: { type: 'string' } };
    case 'window':
      return { anyOf: [{ type: 'string' }, { type: 'array', minItems: 2, maxItems: 2 }] };
    case 'object':
    case 'filter':
      // A filter's forms and fields are checked by the engine (engine/job-filter.ts), which names the field at fault.
      return { type: 'object' };
  }
}

/** A job request with the signal in JSON; every property besides these is refused. */
export const JOB_BODY_SCHEMA = {
  type: 'object',
  required: ['signal'],
  additionalProperties: false,
  properties: {
    // Elements are checked while they are copied into a typed array (faster than the validator on long signals).
    signal: { type: 'array', minItems: 1 },
    ...Object.fromEntries(
      JOB_PARAMETER_TABLE.filter((p) => (p.from as readonly string[]).includes('body')).map((p) => [
        p.name,
        schemaOf(p),
      ]),
    ),
  },
} as const;

/** A batch request: `{ items: [...] }` (items are checked by parseBatchItems). */
export const BATCH_BODY_SCHEMA = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', minItems: 1 }, timeout: { type: 'number', exclusiveMinimum: 0 } },
} as const;

/** The longest job id the job routes take: its routing prefix (`jobIdPrefix`) and random part together. */
export const MAX_JOB_ID_LENGTH = 64;
/** The characters of a job id (URL-safe: ids go into paths and the Location header). */
export const JOB_ID_CHARS = 'A-Za-z0-9_-';

/** `:id` of the job routes: a routing prefix and a random part (job-service.ts). */
export const JOB_ID_PARAMS = {
  type: 'object',
  properties: { id: { type: 'string', pattern: `^[${JOB_ID_CHARS}]{1,${MAX_JOB_ID_LENGTH}}$` } },
  required: ['id'],
} as const;
