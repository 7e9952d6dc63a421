import { describe, expect, it } from 'vitest';
import {
  decodeBinarySignal,
  decodeJsonSignal,
  encodeBinaryResult,
  parseFieldsHeader,
  responseFormat,
} from '../../../src/server/codec.js';
import { HttpError, toHttpError } from '../../../src/server/errors.js';
import {
  EngineClosedError,
  EngineFullError,
  JobCancelledError,
  JobError,
  JobTimeoutError,
  JobValidationError,
} from '../../../src/engine/errors.js';
import { BatcherClosedError, BatcherFullError } from '../../../src/pipeline/batching/errors.js';
import { JobStore, type JobRecord } from '../../../src/server/jobs.js';
import { JOB_PARAMETERS, headerParams, paramsFromStrings, parseJobParams } from '../../../src/server/params.js';
import { JOB_BODY_SCHEMA } from '../../../src/server/schemas.js';
import { JOB_PARAMETER_TABLE, type ParameterDef } from '../../../src/engine/parameters.js';
import type { JobResult } from '../../../src/engine/types.js';

const context = { extraFlags: ['supdem'], maxTimeoutMs: 10_000, defaultTimeoutMs: 1000 };

describe('parameters', () => {
  it('query strings become typed parameters', () => {
    const raw = paramsFromStrings({
      fs: '1000',
      batch: '2',
      flags: 'stft,cycles',
      bands: '1:4,4:8',
      passBand: '1,40',
      freqs: '5,10',
      window: 'kaiser,8.6',
      detrend: 'false',
      waveletBands: 'true',
      timeout: '250',
    });
    expect(raw).toEqual({
      fs: 1000,
      batch: 2,
      flags: ['stft', 'cycles'],
      bands: [
        [1, 4],
        [4, 8],
      ],
      passBand: [1, 40],
      freqs: [5, 10],
      window: ['kaiser', 8.6],
      detrend: false,
      waveletBands: true,
      timeout: 250,
    });
    expect(paramsFromStrings({ bands: '[[1,2]]' }).bands).toEqual([[1, 2]]);
  });

  it('framed stft parameters: nperseg within the series, noverlap below nperseg; a framed spectrum is B x bins x frames', () => {
    expect(
      parseJobParams(paramsFromStrings({ nperseg: '256', noverlap: '128', bandWaves: 'false' }), 2048, context, 'stft')
        .spec,
    ).toMatchObject({
      nperseg: 256,
      noverlap: 128,
      bandWaves: false,
    });
    expect(() => parseJobParams({ nperseg: 4096 }, 2048, context, 'stft')).toThrow(/nperseg/);
    expect(() => parseJobParams({ nperseg: 64, noverlap: 64 }, 2048, context, 'stft')).toThrow(/noverlap/);
    expect(() => parseJobParams({ noverlap: 8 }, 2048, context, 'stft')).toThrow(/needs nperseg/);
    const framed: JobResult = {
      id: 1,
      lane: 0,
      device: 0,
      batch: 2,
      length: 8,
      fs: 1,
      frames: 3,
      spectrum: new Float32Array(2 * 5 * 3),
      timings: { queuedMs: 0, runMs: 0, gpuMs: 0 },
    };
    expect(parseFieldsHeader(encodeBinaryResult(framed).fields)[0]!.shape).toEqual([2, 5, 3]);
  });

  it('refuses hex, empty and NaN numbers, naming the field', () => {
    for (const [key, value, field] of [
      ['fs', '0x10', 'fs'],
      ['fs', '', 'fs'],
      ['batch', 'NaN', 'batch'],
      ['freqs', '1,x', 'freqs[1]'],
      ['bands', '1-2', 'bands[0]'],
    ] as const) {
      try {
        paramsFromStrings({ [key]: value });
        expect.unreachable(`${key}=${value}`);
      } catch (e) {
        expect((e as HttpError).field).toBe(field);
      }
    }
  });

  it('builds the spec: the client flags as given, the endpoint flag after them unless named, registered stages allowed, stageParams only for them', () => {
    const parsed = parseJobParams(
      { flags: ['cycles', 'supdem'], bands: [[1, 2]], fs: 10, stageParams: { supdem: { k: 1 } } },
      100,
      context,
      'stft',
    );
    expect(parsed.spec.flags).toEqual(['cycles', 'supdem', 'stft']);
    expect(
      parseJobParams({ flags: ['cycles', 'stft'], bands: [[1, 2]], fs: 10 }, 100, context, 'stft').spec.flags,
    ).toEqual(['cycles', 'stft']);
    // A refusal names the client's own index (the endpoint's flag is not put before it).
    expect(() => parseJobParams({ flags: ['bogus'] }, 100, context, 'stft')).toThrow(/flags\[0\]/);
    expect(parsed.timeoutMs).toBe(1000);
    expect(() => parseJobParams({ stageParams: { other: 1 } }, 100, context, 'stft')).toThrow(/stageParams.other/);
    expect(() => parseJobParams({ freqs: [6] }, 100, { ...context }, 'wavelet')).toThrow(/outside \(0, fs\/2/);
    expect(() => parseJobParams({ waveletBands: true, freqs: [0.1] }, 100, context, 'wavelet')).toThrow(/bands/);
  });
});

describe('codecs', () => {
  it('binary signals: aligned bodies are viewed, misaligned ones copied, odd lengths refused', () => {
    const f = Float32Array.from([1, 2, 3]);
    const aligned = Buffer.from(f.buffer);
    expect(decodeBinarySignal(aligned, 'f32').buffer).toBe(f.buffer);
    const shifted = Buffer.alloc(13).subarray(1);
    Buffer.from(f.buffer).copy(shifted);
    expect(Array.from(decodeBinarySignal(shifted, 'f32'))).toEqual([1, 2, 3]);
    expect(() => decodeBinarySignal(Buffer.alloc(12), 'f64')).toThrow(/multiple of the f64 element size/);
    expect(
      decodeJsonSignal(
        [
          [1, 2],
          [3, 4],
        ],
        'f64',
      ),
    ).toMatchObject({ rows: 2 });
  });

  it('Accept: binary only when asked for, 406 when nothing fits', () => {
    expect(responseFormat(undefined)).toBe('json');
    expect(responseFormat('*/*')).toBe('json');
    expect(responseFormat('application/octet-stream')).toBe('binary');
    expect(responseFormat('application/json;q=0.5, application/octet-stream')).toBe('binary');
    expect(() => responseFormat('text/csv')).toThrow(HttpError);
  });

  it('binary results round-trip through x-tscuda-fields', () => {
    const result: JobResult = {
      id: 1,
      lane: 0,
      device: 0,
      batch: 2,
      length: 3,
      fs: 1,
      filtered: Float32Array.from([1, 2, 3, 4, 5, 6]),
      bandPowers: Float64Array.from([7, 8]),
      dominant: [
        { frequency: 1, period: 1, amplitude: 2, phase: 3 },
        { frequency: 4, period: 0.25, amplitude: 5, phase: 6 },
      ],
      timings: { queuedMs: 0, runMs: 0, gpuMs: 0 },
    };
    const b = encodeBinaryResult(result);
    const fields = parseFieldsHeader(b.fields);
    expect(fields.map((f) => [f.name, f.dtype, f.shape])).toEqual([
      ['filtered', 'f32', [2, 3]],
      ['bandPowers', 'f64', [2, 1]],
      ['dominant', 'f64', [2, 4]],
    ]);
    const dom = fields[2]!;
    expect(
      Array.from(
        new Float64Array(
          b.body.buffer.slice(b.body.byteOffset + dom.offset, b.body.byteOffset + dom.offset + dom.bytes),
        ),
      ),
    ).toEqual([1, 1, 2, 3, 4, 0.25, 5, 6]);
    expect(JSON.parse(b.meta)).not.toHaveProperty('dominant');
    const withStage = encodeBinaryResult({ ...result, stages: { note: 'héllo ☃\n' } });
    expect(withStage.meta).toMatch(/^[\x20-\x7e]*$/);
    expect((JSON.parse(withStage.meta) as { stages: { note: string } }).stages.note).toBe('héllo ☃\n');
  });
});

describe('errors and retention', () => {
  it('maps engine and batcher errors by class; an unexpected error (a bug) is a 500 with a correlation id, never a 400', () => {
    expect(toHttpError(new EngineFullError('e', 4), 3)).toMatchObject({
      statusCode: 429,
      retryAfterS: 3,
      retryable: true,
    });
    expect(toHttpError(new BatcherFullError('full'), 3)).toMatchObject({ statusCode: 429, retryable: true });
    expect(toHttpError(new JobTimeoutError(1, 50, false), 1)).toMatchObject({
      statusCode: 504,
      code: 'timeout',
      field: 'timeout',
    });
    expect(toHttpError(new EngineClosedError('e'), 1)).toMatchObject({ statusCode: 503, retryable: true });
    expect(toHttpError(new BatcherClosedError('closed'), 1)).toMatchObject({ statusCode: 503, code: 'shutting_down' });
    expect(toHttpError(new JobCancelledError(1), 1)).toMatchObject({ statusCode: 499, code: 'cancelled' });
    expect(toHttpError(new JobError(1, 0, 0, 'fft', Object.assign(new Error('x'), { sticky: true })), 1)).toMatchObject(
      { statusCode: 503, code: 'gpu_lost', retryable: true },
    );
    expect(toHttpError(new JobError(1, 0, 0, 'fft', new Error('x')), 1)).toMatchObject({
      statusCode: 500,
      code: 'job_failed',
    });
    // JobSpec fields are named as requests spell them.
    expect(toHttpError(new JobValidationError('bands[0]', 'bad'), 1)).toMatchObject({
      statusCode: 400,
      field: 'bands[0]',
      message: 'bands[0]: bad',
    });
    expect(toHttpError(new JobValidationError('timeoutMs', 'bad'), 1)).toMatchObject({
      statusCode: 400,
      field: 'timeout',
    });
    expect(toHttpError(new JobValidationError('data', 'is empty'), 1)).toMatchObject({
      statusCode: 400,
      field: 'signal',
    });
    // Names are not matched: an error merely called like an engine error is unexpected.
    const impostor = Object.assign(new Error('EngineFullError'), { name: 'EngineFullError' });
    expect(toHttpError(impostor, 1)).toMatchObject({ statusCode: 500, code: 'internal' });
    for (const bug of [
      new TypeError('cannot read properties of undefined (reading "x")'),
      new RangeError('Invalid array length'),
      'a string',
    ]) {
      const answer = toHttpError(bug, 1);
      expect(answer).toMatchObject({ statusCode: 500, code: 'internal' });
      expect(answer.correlationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.message).toContain(answer.correlationId);
      expect(answer.message).not.toMatch(/properties|array length|a string/);
    }
  });

  it('finished jobs leave after their TTL', () => {
    let now = 0;
    const store = new JobStore({ maxFinished: 10, ttlMs: 100 }, () => now);
    const record: JobRecord = {
      id: 'a',
      job: null,
      submittedAt: 0,
      status: 'queued',
      finishedAt: undefined,
      result: undefined,
      error: undefined,
      settled: Promise.resolve(),
    };
    store.add(record);
    store.finish(record, { error: new HttpError(500, 'x', 'x'), status: 'error' });
    now = 50;
    expect(store.get('a')).toBe(record);
    now = 151;
    expect(store.get('a')).toBeUndefined();
  });
});

describe('one table of job parameters', () => {
  it('the JSON schema, the string coercion, the header names and the engine checks all come from the table', () => {
    expect([...JOB_PARAMETERS]).toEqual(JOB_PARAMETER_TABLE.map((p) => p.name));
    const properties = JOB_BODY_SCHEMA.properties as Record<string, Record<string, unknown>>;
    const sample: Record<string, string> = {
      number: '2.5',
      integer: '3',
      boolean: 'true',
      string: 'x',
      band: '1,2',
      bands: '1:2',
      numbers: '1,2',
      flags: 'stft',
      window: 'hann',
      object: '{}',
      filter: '{"taps":[1]}',
    };
    for (const def of JOB_PARAMETER_TABLE as readonly ParameterDef[]) {
      expect(properties[def.name], def.name).toBeDefined();
      if (def.type === 'number' || def.type === 'integer') {
        expect(properties[def.name]!.type).toBe(def.type);
        if (def.min !== undefined)
          expect(properties[def.name]![def.exclusiveMin === true ? 'exclusiveMinimum' : 'minimum']).toBe(def.min);
      }
      const text = def.type === 'enum' ? String(def.values![0]) : sample[def.type]!;
      expect(Object.keys(paramsFromStrings({ [def.name]: text })), def.name).toEqual([def.name]);
      expect(Object.keys(headerParams({ [`x-tscuda-${def.name.toLowerCase()}`]: text })), def.name).toEqual([def.name]);
      // Below its minimum, the engine refuses it by the row's range, naming it as requests do.
      if ((def.type === 'number' || def.type === 'integer') && def.min !== undefined && def.field !== null) {
        try {
          parseJobParams({ [def.name]: def.min - 1 }, 64, context, 'stft');
          expect.unreachable(def.name);
        } catch (e) {
          expect((e as HttpError).field, def.name).toBe(def.name);
        }
      }
    }
  });
});

describe('helpers given malformed input (found by probing)', () => {
  it('responseFormat: q is case-insensitive, a weight outside [0, 1] is 400, a non-string is a TypeError', () => {
    expect(responseFormat('application/octet-stream;Q=0, application/json')).toBe('json');
    expect(() => responseFormat('application/octet-stream;q=5')).toThrow(/weight \(q\) outside \[0, 1\]/);
    expect(() => responseFormat(null as never)).toThrow(TypeError);
  });

  it('parseFieldsHeader: empty dimensions and sizes past 2^53 are refused', () => {
    expect(() => parseFieldsHeader('a=f32[1,,2]')).toThrow(/cannot read/);
    expect(() => parseFieldsHeader('a=f32[,]')).toThrow(/cannot read/);
    expect(() => parseFieldsHeader('a=f32[99999999999999999999]')).toThrow(/larger than any body/);
    expect(parseFieldsHeader('a=f32[2,3]')[0]).toMatchObject({ shape: [2, 3], bytes: 24 });
  });

  it('parseJobParams of null or an array: 400 naming the body', () => {
    const context = { extraFlags: [], maxTimeoutMs: 60_000, defaultTimeoutMs: 1000 };
    expect(() => parseJobParams(null as never, 64, context)).toThrow(/parameters must be an object, got null/);
    expect(() => parseJobParams([] as never, 64, context)).toThrow(/got an array/);
  });
});
