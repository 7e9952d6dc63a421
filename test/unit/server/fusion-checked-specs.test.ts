import { afterEach, describe, expect, it } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import { validateJobParameters } from '../../../src/engine/validate.js';
import { carryChecked, checkedParameters, markChecked } from '../../../src/server/fusion/checked-specs.js';
import { FakeEngine } from './fake-engine.js';
import { alone, closeFusers, fuser, payload, series, stftCycles } from './fusion-fixture.js';

afterEach(closeFusers);

const NO_STAGES = { stages: new Set<string>() };

describe('checked specs: the door validates a request once, the fuser reuses it', () => {
  it('marks f32 and f64 specs only, and carries the mark to a copy', () => {
    const spec = stftCycles(series(2, 16, 1), 2);
    const parameters = validateJobParameters(spec, spec.data.length, NO_STAGES);
    markChecked(spec, parameters);
    expect(checkedParameters(spec)).toBe(parameters);
    const copy = carryChecked(spec, { ...spec, into: {} });
    expect(checkedParameters(copy)).toBe(parameters);
    // 16-bit data: the door validated its parameters as f32, so they are not taken as checked.
    const i16 = { data: new Int16Array(32), dtype: 'i16' as const, flags: ['stft' as const] };
    markChecked(i16, validateJobParameters(i16, 32, NO_STAGES));
    expect(checkedParameters(i16)).toBeUndefined();
    expect(checkedParameters({ ...spec })).toBeUndefined();
  });

  it('a marked request is fused and answered as an unmarked one; its into and samples are still checked', async () => {
    const engine = new FakeEngine({ perSeries: true });
    const f = fuser(engine);
    const specs = [stftCycles(series(1, 16, 1), 1), stftCycles(series(2, 16, 2), 2)];
    for (const s of specs) markChecked(s, validateJobParameters(s, s.data.length, NO_STAGES));
    const jobs = specs.map((s) => f.submit(s));
    const results = await Promise.all(jobs.map((j) => j.result));
    expect(engine.submitted.map((s) => s.batch)).toEqual([3]);
    results.forEach((r, i) => expect(payload(r)).toEqual(alone(specs[i]!)));
    // The runner's `into` is checked by the fuser whatever the door found.
    const bad = stftCycles(series(1, 16, 3), 1);
    markChecked(bad, validateJobParameters(bad, 16, NO_STAGES));
    const withInto = carryChecked(bad, { ...bad, into: { filtered: new Float32Array(3) } });
    expect(() => f.submit(withInto)).toThrow(JobValidationError);
    expect(() =>
      f.submit(carryChecked(bad, { ...bad, into: { filtered: [1, 2] as unknown as Float32Array } })),
    ).toThrow(/into/);
    // NaN samples of a marked request are still refused (the door leaves them to the fuser here).
    const nan = series(1, 16, 4);
    nan[5] = Number.NaN;
    const marked = stftCycles(nan, 1);
    markChecked(marked, validateJobParameters(marked, 16, NO_STAGES));
    expect(() => f.submit(marked)).toThrow(/data\[5\]: is NaN/);
  }, 10_000);
});
