/** JSON schemas of the request bodies (fastify validates JSON bodies with them before a handler runs). */

const NUMBER = { type: 'number' } as const;
const BAND = { type: 'array', items: NUMBER, minItems: 2, maxItems: 2 } as const;

/** A job request with the signal in JSON; every property besides these is refused. */
export const JOB_BODY_SCHEMA = {
  type: 'object',
  required: ['signal'],
  additionalProperties: false,
  properties: {
    // Elements are checked while they are copied into a typed array (faster than the validator on long signals).
    signal: { type: 'array', minItems: 1 },
    dtype: { enum: ['f32', 'f64', 'float32', 'float64'] },
    batch: { type: 'integer', minimum: 1 },
    fs: { type: 'number', exclusiveMinimum: 0 },
    flags: { type: 'array', items: { type: 'string' } },
    detrend: { enum: ['linear', 'constant', false] },
    window: { anyOf: [{ type: 'string' }, { type: 'array', minItems: 2, maxItems: 2 }] },
    nperseg: { type: 'integer', minimum: 2 },
    noverlap: { type: 'integer', minimum: 0 },
    passBand: BAND,
    previewBins: { type: 'integer', minimum: 1 },
    bands: { type: 'array', items: BAND, minItems: 1 },
    freqs: { type: 'array', items: NUMBER, minItems: 1 },
    nCycles: { type: 'number', exclusiveMinimum: 0 },
    waveletBands: { type: 'boolean' },
    bandWaves: { type: 'boolean' },
    timeout: { type: 'number', exclusiveMinimum: 0 },
    label: { type: 'string', maxLength: 200 },
    stageParams: { type: 'object' },
  },
} as const;

/** A batch request: `{ items: [...] }` (items are checked by parseBatchItems). */
export const BATCH_BODY_SCHEMA = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', minItems: 1 }, timeout: { type: 'number', exclusiveMinimum: 0 } },
} as const;

/** `:id` of the job routes. */
export const JOB_ID_PARAMS = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
  required: ['id'],
} as const;
