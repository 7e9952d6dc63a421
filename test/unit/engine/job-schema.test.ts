// The job schema is declared once: a flag row, its output row and its parameter row, added to
// job-schema.ts alone (here: injected into the module before anything imports it), reach the
// engine's validation and result sizes, the server's JSON schema, string coercion and binary
// layout, and the queue's codec, with no other edit. The type-level half: JobOutputArrays'
// keys, BuiltinJobFlag and the normalized job's flag booleans are the rows' names.
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import type * as Schema from '../../../src/engine/job-schema.js';
import type { JOB_FLAGS, JOB_OUTPUTS } from '../../../src/engine/job-schema.js';
import type { NormalizedJob } from '../../../src/engine/normalized-job.js';
import type { BuiltinJobFlag, JobOutputArrays, JobResult, JobSpec } from '../../../src/engine/types.js';

/** A flag the project does not have, with one output and one parameter. */
const EXTRA_FLAG = { name: 'probe', help: 'a test flag', sixteenBit: false, framed: false, capturable: false };
const EXTRA_OUTPUT = {
  field: 'probeOut',
  flag: 'probe',
  element: 'real',
  layout: 'values',
  perSeries: (job: { readonly length: number }) => job.length * 2,
  help: 'two values per sample',
};
const EXTRA_PARAMETER = {
  name: 'probeGain',
  field: 'probeGain',
  type: 'number',
  min: 0,
  exclusiveMin: true,
  default: '1',
  help: 'a test parameter of the probe flag',
  from: ['body', 'query', 'header'],
  normal: 'default',
  value: 1,
};

afterEach(() => {
  vi.doUnmock('../../../src/engine/job-schema.js');
  vi.resetModules();
});

/** The modules that derive from the schema, loaded fresh over the schema with the extra rows. */
async function withExtraRows() {
  vi.resetModules();
  vi.doMock('../../../src/engine/job-schema.js', async (load) => {
    const real = await load<typeof Schema>();
    return {
      ...real,
      JOB_FLAGS: [...real.JOB_FLAGS, EXTRA_FLAG],
      JOB_OUTPUTS: [...real.JOB_OUTPUTS, EXTRA_OUTPUT],
      JOB_PARAMETER_TABLE: [...real.JOB_PARAMETER_TABLE, EXTRA_PARAMETER],
    };
  });
  return {
    parameters: await import('../../../src/engine/parameters.js'),
    validate: await import('../../../src/engine/validate.js'),
    results: await import('../../../src/engine/result-arrays.js'),
    schemas: await import('../../../src/server/schemas.js'),
    params: await import('../../../src/server/params.js'),
    codec: await import('../../../src/server/codec.js'),
    queue: await import('../../../src/queue/codec.js'),
    fusion: await import('../../../src/server/fusion/fusion-key.js'),
  };
}

describe('a flag row with an output row and a parameter row', { timeout: 30_000 }, () => {
  it('is a flag, a result field and a parameter everywhere they are listed', async () => {
    const m = await withExtraRows();
    expect(m.parameters.BUILTIN_FLAGS).toContain('probe');
    expect(m.parameters.RESULT_ARRAY_FIELDS.at(-1)).toBe('probeOut');
    expect(m.parameters.JOB_PARAMETER_NAMES).toContain('probeGain');
    expect(m.parameters.JOB_SPEC_FIELDS.has('probeGain')).toBe(true);
    const properties = m.schemas.JOB_BODY_SCHEMA.properties as Record<string, unknown>;
    expect(properties.probeGain).toEqual({ type: 'number', exclusiveMinimum: 0 });
    expect(m.params.paramsFromStrings({ probeGain: '2.5' })).toEqual({ probeGain: 2.5 });
    expect(m.params.headerParams({ 'x-tscuda-probegain': '3' })).toEqual({ probeGain: '3' });
  });

  it('is validated, normalized and sized by its rows', async () => {
    const m = await withExtraRows();
    const data = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i));
    const job = m.validate.validateJob({ data, batch: 2, flags: ['probe'], probeGain: 4 } as JobSpec, {
      stages: new Set(),
    });
    expect((job as unknown as Record<string, unknown>).probe).toBe(true);
    expect((job as unknown as Record<string, unknown>).probeGain).toBe(4);
    const filled = m.validate.validateJob({ data, flags: ['probe'] } as JobSpec, { stages: new Set() });
    expect((filled as unknown as Record<string, unknown>).probeGain).toBe(1);
    expect(m.results.resultArrays(job, 'f32')).toEqual([{ field: 'probeOut', length: 2 * 32 * 2, element: 'f32' }]);
    // The row's range, checked by the table (the field named), and the fuser keys on it.
    expect(() =>
      m.validate.validateJob({ data, flags: ['probe'], probeGain: 0 } as JobSpec, { stages: new Set() }),
    ).toThrow(expect.objectContaining({ field: 'probeGain' }));
    expect(m.fusion.fusionKey(job)).not.toBe(m.fusion.fusionKey(filled));
    // 16-bit data is refused for it, as its row says.
    expect(() =>
      m.validate.validateJob({ data: new Int16Array(64), flags: ['probe'] } as JobSpec, { stages: new Set() }),
    ).toThrow(/probe need f32 or f64 data/);
  });

  it('travels through the server codec and the queue codec as a result array', async () => {
    const m = await withExtraRows();
    const probeOut = Float32Array.from({ length: 8 }, (_, i) => i + 0.5);
    const result = {
      id: 1,
      lane: 0,
      device: 0,
      batch: 2,
      length: 4,
      fs: 1,
      timings: { queuedMs: 0, runMs: 0, gpuMs: 0 },
    };
    const withOutput = { ...result, probeOut } as unknown as JobResult;
    expect(m.codec.encodeBinaryResult(withOutput).fields).toBe('probeOut=f32[2,4]');
    expect(m.codec.encodeJsonResult(withOutput)).toMatchObject({ shapes: { probeOut: [2, 4] } });
    const packed = m.queue.packResult(withOutput);
    expect(packed.arrays).toEqual([{ field: 'probeOut', dtype: 'f32', length: 8, offset: 0 }]);
    const back = m.queue.unpackResult(packed.scalars, packed.arrays, m.queue.joinPieces(packed.pieces));
    expect(Array.from((back as unknown as { probeOut: Float32Array }).probeOut)).toEqual(Array.from(probeOut));
  });
});

describe('the types derived from the rows', () => {
  it('names the result fields, the flags and the normalized flag booleans after the rows', () => {
    expectTypeOf<keyof JobOutputArrays>().toEqualTypeOf<(typeof JOB_OUTPUTS)[number]['field']>();
    expectTypeOf<BuiltinJobFlag>().toEqualTypeOf<(typeof JOB_FLAGS)[number]['name']>();
    expectTypeOf<Pick<NormalizedJob, BuiltinJobFlag>>().toEqualTypeOf<{ readonly [F in BuiltinJobFlag]: boolean }>();
    expectTypeOf<JobResult['envelope']>().toEqualTypeOf<Float32Array | Float64Array | undefined>();
    expectTypeOf<JobResult['bandPowers']>().toEqualTypeOf<Float64Array | undefined>();
    expectTypeOf<JobSpec['q']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<NormalizedJob['nCycles']>().toEqualTypeOf<number>();
    expectTypeOf<NormalizedJob['label']>().toEqualTypeOf<string | undefined>();
  });
});
