import { afterEach, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../../src/engine/types.js';
import { FusedRequest } from '../../../src/server/fusion/fused-request.js';
import { JobFuser } from '../../../src/server/fusion/job-fuser.js';
import { FakeEngine } from './fake-engine.js';
import { series, stftCycles, alone, fuser, closeFusers, closeAfterTest } from './fusion-fixture.js';

afterEach(closeFusers);

describe('JobFuser: what is fused together, and how much', () => {
  it('never fuses different shapes: series length, fs, flags, parameters or sample type', async () => {
    const engine = new FakeEngine();
    const f = fuser(engine);
    const base = stftCycles(series(1, 16, 1), 1);
    const specs: JobSpec[] = [
      base,
      stftCycles(series(1, 32, 1), 1),
      { ...base, fs: 2 },
      { ...base, flags: ['stft'] },
      { ...base, previewBins: 3 },
      { ...base, bands: [[0.05, 0.3]] },
      { ...base, window: 'hamming' },
      { ...base, data: Int16Array.from(base.data, (v) => Math.round(v * 1000)) },
      { ...base, outputDtype: 'f16' },
    ];
    await Promise.all(specs.map((s) => f.submit(s).result));
    expect(engine.submitted).toHaveLength(specs.length);
    // The same parameters spelled out (the defaults) are the same shape.
    await Promise.all([f.submit(base).result, f.submit({ ...base, fs: 1, window: 'hann', detrend: 'linear' }).result]);
    expect(engine.submitted).toHaveLength(specs.length + 1);
  }, 10_000);

  it('bounds a fused job: a full window goes at once, a request of more than half a bound goes alone', async () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine, { maxBatchDelayMs: 1000, maxSamples: 64 });
    const jobs = [1, 2, 3, 4].map((seed) => f.submit(stftCycles(series(1, 16, seed), 1)));
    // Four requests of 16 samples fill 64: submitted with no wait.
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(4);
    const fifth = f.submit(stftCycles(series(1, 16, 5), 1));
    expect(f.waiting).toBe(1);
    const big = f.submit(stftCycles(series(3, 16, 6), 3));
    expect(big).not.toBeInstanceOf(FusedRequest);
    expect(engine.submitted).toHaveLength(2);
    expect(engine.submitted[1]!.batch).toBe(3);
    const wide = new JobFuser(engine, { maxBatchDelayMs: 1000, maxRequests: 2 });
    closeAfterTest(wide);
    wide.submit(stftCycles(series(1, 16, 7), 1));
    wide.submit(stftCycles(series(1, 16, 8), 1));
    expect(engine.submitted).toHaveLength(3);
    engine.release();
    f.close();
    engine.release();
    await Promise.all([...jobs, fifth, big].map((j) => j.result));
  }, 10_000);

  it('a request of more than maxRequestSamples goes alone (stacking it would only add copies); one at the bound joins', async () => {
    const engine = new FakeEngine({ manual: true });
    const f = fuser(engine, { maxBatchDelayMs: 1000, maxRequestSamples: 32 });
    const atBound = f.submit(stftCycles(series(2, 16, 1), 2));
    expect(atBound).toBeInstanceOf(FusedRequest);
    const over = f.submit(stftCycles(series(3, 16, 2), 3));
    expect(over).not.toBeInstanceOf(FusedRequest);
    expect(engine.submitted).toHaveLength(1);
    expect(engine.submitted[0]!.batch).toBe(3);
    // The default lets 4 x 4096 samples join and sends 16 x 65536 alone.
    const byDefault = fuser(engine, { maxBatchDelayMs: 1000 });
    expect(byDefault.submit(stftCycles(series(4, 4096, 3), 4))).toBeInstanceOf(FusedRequest);
    expect(byDefault.submit(stftCycles(series(16, 65536, 4), 16))).not.toBeInstanceOf(FusedRequest);
    f.close();
    byDefault.close();
    engine.release();
    await Promise.all([atBound, over].map((j) => j.result));
  }, 10_000);
});
