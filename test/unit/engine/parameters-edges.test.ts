// The job parameter table against oracles outside it: the request parameters docs/serving.md lists,
// the JSON schema the HTTP API documents for each (written out here by hand), and the engine's
// behaviour at each row's documented limit (min, exclusive min, max length, enum values).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import {
  ENGINE_ONLY_FIELDS,
  JOB_PARAMETER_NAMES,
  JOB_PARAMETER_TABLE,
  JOB_SPEC_FIELDS,
  RESULT_ARRAY_FIELDS,
  parameterDef,
  parameterOfField,
} from '../../../src/engine/parameters.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import { headerParams, paramsFromStrings } from '../../../src/server/params.js';
import { JOB_BODY_SCHEMA } from '../../../src/server/schemas.js';

/** The request parameters, in the order error messages list them. */
const DOCUMENTED = [
  'dtype',
  'batch',
  'fs',
  'flags',
  'detrend',
  'window',
  'nperseg',
  'noverlap',
  'passBand',
  'previewBins',
  'bands',
  'freqs',
  'nCycles',
  'waveletBands',
  'bandWaves',
  'timeout',
  'label',
  'stageParams',
  'scale',
  'outputDtype',
  'filter',
  'q',
];

const NUMBER = { type: 'number' };
const BAND = { type: 'array', items: NUMBER, minItems: 2, maxItems: 2 };
/** The JSON schema of each body property, as the HTTP API documents it. */
const SCHEMAS: Record<string, unknown> = {
  dtype: { enum: ['f32', 'f64', 'i16', 'f16', 'bf16', 'float32', 'float64', 'int16', 'float16', 'bfloat16'] },
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
  scale: { type: 'number' },
  outputDtype: { enum: ['f16', 'bf16', 'f32', 'f64'] },
  filter: { type: 'object' },
  q: { type: 'integer', minimum: 2 },
};

const ctx = { stages: new Set<string>() };
const data = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.sin(i / 3) + 0.01 * i);

/** The field validateJob names when it refuses `extra` on a 64-sample stft job, or 'accepted'. */
function verdict(extra: Partial<JobSpec>): string {
  try {
    validateJob({ data: data(64), flags: ['stft'], ...extra }, ctx);
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(JobValidationError);
    return (error as JobValidationError).field;
  }
}

describe('the job parameter table', { timeout: 10_000 }, () => {
  it('has the parameters docs/serving.md lists, in order', () => {
    expect(JOB_PARAMETER_NAMES).toEqual(DOCUMENTED);
    const doc = readFileSync(new URL('../../../docs/serving.md', import.meta.url), 'utf8');
    const paragraph = doc.slice(doc.indexOf('**Request parameters**'), doc.indexOf('Unknown names are refused'));
    for (const name of DOCUMENTED) expect(paragraph, name).toContain(`\`${name}\``);
  });

  it('documents a default and a meaning for every row', () => {
    for (const row of JOB_PARAMETER_TABLE) {
      expect(row.default.length, `${row.name}.default`).toBeGreaterThan(0);
      expect(row.help.length, `${row.name}.help`).toBeGreaterThan(10);
    }
  });

  it('gives the JSON body the documented schema of each parameter, and nothing else besides the signal', () => {
    const { signal, ...properties } = JOB_BODY_SCHEMA.properties as Record<string, unknown>;
    expect(signal).toEqual({ type: 'array', minItems: 1 });
    expect(properties).toEqual(SCHEMAS);
  });

  it('reads every parameter from a query or header string by its documented format', () => {
    const strings = {
      dtype: 'f64',
      batch: '2',
      fs: '2.5',
      flags: 'stft,cycles',
      detrend: 'none',
      window: 'kaiser,8',
      nperseg: '8',
      noverlap: '4',
      passBand: '1,2',
      previewBins: '3',
      bands: '1:2',
      freqs: '1,2',
      nCycles: '6',
      waveletBands: '1',
      bandWaves: '0',
      timeout: '250',
      label: 'a,b',
      stageParams: '{"a":1}',
      scale: '0.5',
      outputDtype: 'f16',
      filter: '{"taps":[0.5,0.5]}',
      q: '4',
    };
    expect(Object.keys(strings)).toEqual(DOCUMENTED);
    expect(paramsFromStrings(strings)).toEqual({
      dtype: 'f64',
      batch: 2,
      fs: 2.5,
      flags: ['stft', 'cycles'],
      detrend: false,
      window: ['kaiser', 8],
      nperseg: 8,
      noverlap: 4,
      passBand: [1, 2],
      previewBins: 3,
      bands: [[1, 2]],
      freqs: [1, 2],
      nCycles: 6,
      waveletBands: true,
      bandWaves: false,
      timeout: 250,
      label: 'a,b',
      stageParams: { a: 1 },
      scale: 0.5,
      outputDtype: 'f16',
      filter: { taps: [0.5, 0.5] },
      q: 4,
    });
  });

  it('lets every parameter come as an x-tscuda-<lower-case name> header', () => {
    for (const name of DOCUMENTED)
      expect(headerParams({ [`x-tscuda-${name.toLowerCase()}`]: 'v' }), name).toEqual({ [name]: 'v' });
  });

  it('maps wire names to JobSpec fields (timeout fills timeoutMs; dtype is transport only)', () => {
    const fields = Object.fromEntries(DOCUMENTED.map((name) => [name, parameterDef(name)?.field]));
    expect(fields).toEqual({
      ...Object.fromEntries(DOCUMENTED.map((name) => [name, name])),
      dtype: null,
      timeout: 'timeoutMs',
    });
    expect(parameterOfField('timeoutMs')?.name).toBe('timeout');
    expect(parameterOfField('timeout')).toBeUndefined();
    expect(parameterOfField('dtype')).toBeUndefined();
    expect(parameterOfField('data')).toBeUndefined();
    expect(parameterDef('timeoutMs')).toBeUndefined();
    expect(parameterDef('signal')).toBeUndefined();
  });

  it('lists the result arrays in their binary order and every JobSpec field validateJob takes', () => {
    expect(RESULT_ARRAY_FIELDS).toEqual([
      'filtered',
      'spectrum',
      'bandPowers',
      'bandWaves',
      'waveletPower',
      'envelope',
      'decimated',
    ]);
    expect(ENGINE_ONLY_FIELDS).toEqual(['data', 'dtype', 'into', 'signal']);
    expect([...JOB_SPEC_FIELDS].sort()).toEqual(
      [
        ...DOCUMENTED.filter((n) => n !== 'timeout' && n !== 'dtype'),
        'timeoutMs',
        'data',
        'dtype',
        'into',
        'signal',
      ].sort(),
    );
  });
});

describe('the engine at each row limit', { timeout: 10_000 }, () => {
  it.each([
    ['batch', 0, 1],
    ['fs', 0, Number.MIN_VALUE],
    ['nperseg', 1, 2],
    ['previewBins', 0, 1],
    ['nCycles', 0, 0.5],
    ['timeoutMs', 0, 1],
  ] as const)('%s: %d is refused, %d is the smallest accepted', (field, refused, accepted) => {
    expect(verdict({ [field]: refused })).toBe(field);
    expect(verdict({ [field]: accepted })).toBe('accepted');
  });

  it('noverlap: -1 is refused, 0 accepted', () => {
    expect(verdict({ nperseg: 8, noverlap: -1 })).toBe('noverlap');
    expect(verdict({ nperseg: 8, noverlap: 0, window: 'boxcar' })).toBe('accepted');
  });

  it('integers refuse fractions; numbers take them', () => {
    expect(verdict({ batch: 1.5 })).toBe('batch');
    expect(verdict({ nperseg: 8.5 })).toBe('nperseg');
    expect(verdict({ previewBins: 2.5 })).toBe('previewBins');
    expect(verdict({ fs: 2.5 })).toBe('accepted');
  });

  it('label: 200 characters accepted, 201 refused', () => {
    expect(verdict({ label: 'x'.repeat(200) })).toBe('accepted');
    expect(verdict({ label: 'x'.repeat(201) })).toBe('label');
  });

  it('detrend: each documented value accepted, others refused; outputDtype likewise', () => {
    for (const detrend of ['linear', 'constant', false] as const) expect(verdict({ detrend })).toBe('accepted');
    expect(verdict({ detrend: 'none' as never })).toBe('detrend');
    expect(verdict({ detrend: true as never })).toBe('detrend');
    for (const outputDtype of ['f16', 'bf16', 'f32'] as const) expect(verdict({ outputDtype })).toBe('accepted');
    expect(verdict({ outputDtype: 'i16' as never })).toBe('outputDtype');
  });

  it('booleans refuse 1 and "true"', () => {
    for (const field of ['waveletBands', 'bandWaves'] as const) {
      expect(verdict({ [field]: 1 as never })).toBe(field);
      expect(verdict({ [field]: 'true' as never })).toBe(field);
    }
  });
});
