import { afterEach, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../../src/engine/types.js';
import { FusedRequest } from '../../../src/server/fusion/fused-request.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { FakeEngine, fakeResult } from './fake-engine.js';
import { series, BANDS, stftCycles, payload, alone, until, fuser, closeFusers } from './fusion-fixture.js';

afterEach(closeFusers);

describe('JobFuser: each request gets exactly its own results', () => {
  it('fuses concurrent requests into one job of their summed batch; each gets exactly its own rows, as unfused', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const specs = [stftCycles(series(1, 16, 1), 1), stftCycles(series(2, 16, 2), 2), stftCycles(series(3, 16, 3), 3)];
    const jobs = specs.map((s) => f.submit(s));
    expect(f.waiting).toBe(3);
    expect(engine.submitted).toHaveLength(0);
    const results = await Promise.all(jobs.map((j) => j.result));
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(6);
    expect(Array.from(engine.submitted[0]!.data)).toEqual([...specs[0]!.data, ...specs[1]!.data, ...specs[2]!.data]);
    results.forEach((r, i) => {
      expect(payload(r)).toEqual(alone(specs[i]!));
      expect(r.id).toBe(jobs[i]!.id);
      // Its own memory, not a view that would keep the whole fused result alive while this answer is kept.
      for (const array of [r.filtered!, r.spectrum!, r.bandPowers!])
        expect(array.buffer.byteLength).toBe(array.byteLength);
    });
    expect(jobs.map((j) => j.status)).toEqual(['ready', 'ready', 'ready']);
  }, 10_000);

  it('writes each request its share into its own `into` arrays', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const a = stftCycles(series(2, 8, 4), 2, {
      into: { filtered: new Float32Array(16), bandPowers: new Float64Array(4) },
    });
    const b = stftCycles(series(1, 8, 5), 1, { into: { filtered: new Float32Array(8) } });
    const [ra, rb] = await Promise.all([f.submit(a).result, f.submit(b).result]);
    expect(ra.filtered).toBe(a.into!.filtered);
    expect(ra.bandPowers).toBe(a.into!.bandPowers);
    expect(rb.filtered).toBe(b.into!.filtered);
    expect(payload(ra)).toEqual(alone({ ...a, into: undefined }));
    expect(payload(rb)).toEqual(alone({ ...b, into: undefined }));
    // Every request gave a filtered array: the fused job writes one stacked array; not all gave bandPowers: the engine allocates it.
    expect(engine.submitted[0]!.into?.filtered).toHaveLength(24);
    expect(engine.submitted[0]!.into?.bandPowers).toBeUndefined();
  }, 10_000);

  it('splits every kind of result by series: wavelet power, f16 waves of i16 samples, framed spectra', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const i16 = (rows: number, seed: number): Int16Array =>
      Int16Array.from(series(rows, 16, seed), (v) => Math.round(v * 5000));
    const groups: JobSpec[][] = [
      [1, 2].map((rows) => ({ data: series(rows, 16, rows), batch: rows, flags: ['wavelet'], freqs: [0.1, 0.2, 0.3] })),
      [2, 1].map((rows) => ({
        data: i16(rows, rows),
        batch: rows,
        flags: ['stft', 'cycles'],
        bands: BANDS,
        outputDtype: 'f16' as const,
      })),
      [1, 3].map((rows) => ({
        data: series(rows, 16, rows + 9),
        batch: rows,
        flags: ['stft'],
        nperseg: 8,
        previewBins: 3,
      })),
    ];
    for (const specs of groups) {
      const before = engine.submitted.length;
      const results = await Promise.all(specs.map((s) => f.submit(s).result));
      expect(engine.submitted.length - before).toBe(1);
      results.forEach((r, i) => {
        const own = fakeResult(specs[i]!, 0, 'f32', true);
        expect(payload(r)).toEqual(payload(own));
        expect(r.filtered?.constructor).toBe(own.filtered?.constructor);
      });
    }
  }, 10_000);

  it('registered stages and AbortSignals go to the engine as they are', () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine);
    const staged = f.submit({ data: series(1, 16, 1), flags: ['stft', 'my-stage'] });
    const signalled = f.submit({ ...stftCycles(series(1, 16, 1), 1), signal: new AbortController().signal });
    expect(engine.submitted).toHaveLength(2);
    expect([staged, signalled].some((j) => j instanceof FusedRequest)).toBe(false);
    engine.release();
  });

  it('stacks samples and results in the given memory and gives all of it back once the engine is done', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const taken = new Set<Buffer>();
    let released = 0;
    const memory = {
      take: (bytes: number): Buffer => {
        const b = Buffer.alloc(bytes);
        taken.add(b);
        return b;
      },
      release: (b: Buffer): void => {
        expect(taken.delete(b)).toBe(true);
        released++;
      },
    };
    const f = fuser(engine, { memory });
    const specs = [1, 2].map((seed) =>
      stftCycles(series(1, 16, seed), 1, { into: { filtered: new Float32Array(16) } }),
    );
    const jobs = specs.map((s) => f.submit(s));
    const results = await Promise.all(jobs.map((j) => j.result));
    results.forEach((r, i) => expect(payload(r)).toEqual(alone({ ...specs[i]!, into: undefined })));
    await Promise.all(jobs.map((j) => j.released));
    await until(() => released === 2, 'the samples and the filtered waves given back');
    expect(taken.size).toBe(0);
  }, 10_000);
});
