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

describe('what each row says, by its behaviour', { timeout: 30_000 }, () => {
  const ctx = { stages: new Set<string>() };
  const samples = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.cos(i / 4) + 0.1 * i);
  const flagJob = (flag: string, extra: Partial<JobSpec> = {}): JobSpec => ({
    data: samples(256),
    batch: 2,
    fs: 100,
    flags: [flag],
    bands: [[5, 20]],
    freqs: [10],
    ...(flag === 'decimate' ? { q: 3 } : {}),
    ...extra,
  });
  const verdict = async (spec: JobSpec): Promise<string> => {
    const { validateJob } = await import('../../../src/engine/validate.js');
    try {
      validateJob(spec, ctx);
      return 'accepted';
    } catch (e) {
      return (e as { field: string }).field;
    }
  };

  it('sixteenBit: 16-bit samples go to stft and cycles only', async () => {
    const i16 = Int16Array.from({ length: 256 }, (_, i) => (i * 37) % 2000);
    const verdicts = await Promise.all(
      ['stft', 'cycles', 'wavelet', 'envelope', 'decimate'].map((flag) => verdict(flagJob(flag, { data: i16 }))),
    );
    expect(verdicts).toEqual(['accepted', 'accepted', 'flags', 'flags', 'flags']);
  });

  it('framed: a framed job (nperseg) takes stft alone', async () => {
    const verdicts = await Promise.all(
      ['cycles', 'wavelet', 'envelope', 'decimate'].map((flag) =>
        verdict(flagJob(flag, { flags: ['stft', flag], nperseg: 32 })),
      ),
    );
    expect(verdicts).toEqual(['flags', 'flags', 'flags', 'flags']);
    expect(await verdict(flagJob('stft', { nperseg: 32 }))).toBe('accepted');
  });

  it('capturable: only stft and cycles jobs without a filter or stages replay from a graph', async () => {
    const { capturable } = await import('../../../src/engine/series-compute.js');
    const { validateJob } = await import('../../../src/engine/validate.js');
    const of = (spec: JobSpec, stages = new Set<string>()): boolean => capturable(validateJob(spec, { stages }));
    expect(['stft', 'cycles', 'wavelet', 'envelope', 'decimate'].map((flag) => of(flagJob(flag)))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(of(flagJob('stft', { flags: ['stft', 'cycles'] }))).toBe(true);
    expect(of(flagJob('stft', { filter: { taps: [0.5, 0.5] } }))).toBe(false);
    expect(of(flagJob('stft', { flags: ['stft', 'mine'] }), new Set(['mine']))).toBe(false);
  });

  it('outputs: each result array of its flag, of its size per series, in the binary order', async () => {
    const { validateJob } = await import('../../../src/engine/validate.js');
    const { resultArrays } = await import('../../../src/engine/result-arrays.js');
    const all = validateJob(
      {
        data: samples(200),
        batch: 2,
        fs: 100,
        flags: ['decimate', 'envelope', 'wavelet', 'cycles', 'stft'],
        bands: [
          [5, 20],
          [20, 40],
        ],
        freqs: [10, 20, 30],
        q: 3,
        previewBins: 10,
      },
      ctx,
    );
    expect(resultArrays(all, 'f64').map(({ field, length, element }) => [field, length, element])).toEqual([
      ['filtered', 200, 'f64'],
      ['spectrum', 20, 'f64'],
      ['bandPowers', 4, 'f64'],
      ['bandWaves', 400, 'f64'],
      ['waveletPower', 600, 'f64'],
      ['envelope', 200, 'f64'],
      ['decimated', 2 * 34, 'f64'],
    ]);
    const half = validateJob(
      {
        data: samples(200),
        batch: 2,
        flags: ['stft', 'cycles', 'wavelet'],
        bands: [[0.1, 0.2]],
        freqs: [0.1],
        waveletBands: true,
        bandWaves: false,
        outputDtype: 'f16',
      },
      ctx,
    );
    expect(resultArrays(half, 'f32').map(({ field, length, element }) => [field, length, element])).toEqual([
      ['filtered', 200, 'u16'],
      ['spectrum', 2 * 51, 'f32'],
      ['bandPowers', 2, 'f64'],
      ['waveletPower', 200, 'f32'],
    ]);
    const framed = validateJob({ data: samples(200), batch: 2, flags: ['stft'], nperseg: 16, previewBins: 4 }, ctx);
    expect(resultArrays(framed, 'f32').find((r) => r.field === 'spectrum')?.length).toBe(
      2 * 4 * framed.framing!.frames,
    );
  });

  it('layouts: the shape each result array has on the wire', async () => {
    const { shapeOf } = await import('../../../src/server/codec.js');
    const result = {
      id: 1,
      lane: 0,
      device: 0,
      batch: 2,
      length: 100,
      fs: 1,
      timings: { queuedMs: 0, runMs: 0, gpuMs: 0 },
      filtered: new Float32Array(200),
      spectrum: new Float32Array(2 * 7 * 5),
      frames: 5,
      bandPowers: new Float64Array(6),
      bandWaves: new Float32Array(600),
      waveletPower: new Float32Array(400),
      envelope: new Float32Array(200),
      decimated: new Float32Array(2 * 34),
    } as JobResult;
    const shapes = Object.fromEntries(
      (['filtered', 'spectrum', 'bandPowers', 'bandWaves', 'waveletPower', 'envelope', 'decimated'] as const).map(
        (f) => [f, shapeOf(result, f)],
      ),
    );
    expect(shapes).toEqual({
      filtered: [2, 100],
      spectrum: [2, 7, 5],
      bandPowers: [2, 3],
      bandWaves: [2, 3, 100],
      waveletPower: [2, 2, 100],
      envelope: [2, 100],
      decimated: [2, 34],
    });
  });

  it('perSeries: false rows (batch, label, timeout) do not key fused jobs; the others do', async () => {
    const { validateJob } = await import('../../../src/engine/validate.js');
    const { fusionKey } = await import('../../../src/server/fusion/fusion-key.js');
    // Series of 256 samples each, however many.
    const key = (extra: Partial<JobSpec>): string =>
      fusionKey(validateJob({ data: samples(256 * (extra.batch ?? 1)), flags: ['stft'], ...extra }, ctx));
    const base = key({ batch: 1 });
    expect(key({ batch: 2, label: 'x', timeoutMs: 5 })).toBe(base);
    for (const extra of [{ fs: 2 }, { detrend: false }, { filter: { taps: [1, 1] } }, { previewBins: 3 }] as const)
      expect(key(extra), JSON.stringify(extra)).not.toBe(base);
  });
});

describe('the rows document themselves', () => {
  it('every flag and output row says what it is', async () => {
    const { JOB_FLAGS, JOB_OUTPUTS } = await import('../../../src/engine/job-schema.js');
    for (const row of [...JOB_FLAGS, ...JOB_OUTPUTS]) {
      const name = 'name' in row ? row.name : row.field;
      expect(row.help.length, name).toBeGreaterThan(10);
    }
    // Each output names a flag of the table.
    expect(JOB_OUTPUTS.every((o) => JOB_FLAGS.some((f) => f.name === o.flag))).toBe(true);
  });
});
