// validateJobParameters, resolveJobWindow and checkInto at their edges, and each refusal naming its
// field and saying what is wrong.
import { describe, expect, it } from 'vitest';
import {
  checkInto,
  checkSampleTypes,
  jobSamples,
  resolveJobWindow,
  validateJob,
  validateJobParameters,
} from '../../../src/engine/validate.js';
import { ctx, data, refusal, job } from './validate-edges-fixture.js';

describe('validateJobParameters and the job shape', { timeout: 10_000 }, () => {
  it('refuses a job that is not an object, naming (job)', () => {
    for (const spec of [null, [], 'job'])
      expect(() => validateJobParameters(spec as never, 64, ctx)).toThrow(expect.objectContaining({ field: '(job)' }));
    expect(() => validateJob([] as never, ctx)).toThrow(/a job must be an object, got an array/);
  });

  it('refuses no samples and unknown fields; takes the sample type it is told', () => {
    expect(() => validateJobParameters({ flags: ['stft'] }, 0, ctx)).toThrow(
      expect.objectContaining({ field: 'data', detail: 'is empty' }),
    );
    expect(() => validateJobParameters({ flags: ['stft'], nfft: 8 } as never, 64, ctx)).toThrow(
      expect.objectContaining({ field: 'nfft' }),
    );
    expect(() => validateJobParameters({ flags: ['wavelet'], freqs: [0.1] }, 64, ctx, 'f16')).toThrow(
      /f16 data takes the stft and cycles flags/,
    );
    expect(validateJobParameters({ flags: ['wavelet'], freqs: [0.1] }, 64, ctx, 'f64').wavelet).toBe(true);
  });
});

describe('resolveJobWindow edges', { timeout: 10_000 }, () => {
  it('a gaussian std of exactly 0.1 samples is taken, narrower refused at window[1]', () => {
    expect(resolveJobWindow(['gaussian', 0.1]).parameter).toBe(0.1);
    expect(() => resolveJobWindow(['gaussian', 0.099])).toThrow(expect.objectContaining({ field: 'window[1]' }));
  });

  it('names window[1] for a bad parameter and window for a bad name or shape', () => {
    expect(() => resolveJobWindow(['kaiser', '8'])).toThrow(
      expect.objectContaining({ field: 'window[1]', detail: 'must be a finite number, got "8"' }),
    );
    expect(() => resolveJobWindow(42, 'w')).toThrow(
      expect.objectContaining({ field: 'w', detail: 'must be a window name or [name, parameter], got 42' }),
    );
    expect(() => resolveJobWindow('nope')).toThrow(expect.objectContaining({ field: 'window' }));
    expect(() => resolveJobWindow(['hann', 3])).toThrow(expect.objectContaining({ field: 'window' }));
  });
});

describe('checkInto edges', { timeout: 10_000 }, () => {
  it('refuses an explicit float output type other than the engine precision', () => {
    const j = job({ outputDtype: 'f64' });
    expect(() => checkInto(j, 'f32')).toThrow(
      expect.objectContaining({
        field: 'outputDtype',
        detail: "f64 is not this engine's precision (f32); ask for f32, f16 or bf16",
      }),
    );
    expect(() => checkInto(j, 'f64')).not.toThrow();
  });

  it('names the array class with its article and the length it must have', () => {
    expect(() => checkInto(job({ into: { filtered: new Float32Array(64) } }), 'f64')).toThrow(
      expect.objectContaining({
        field: 'into.filtered',
        detail: 'must be a Float64Array (engine precision f64), got Float32Array',
      }),
    );
    expect(() => checkInto(job({ outputDtype: 'f16', into: { filtered: new Float32Array(64) } }), 'f32')).toThrow(
      expect.objectContaining({ detail: 'must be a Uint16Array (outputDtype f16 bits), got Float32Array' }),
    );
    expect(() => checkInto(job({ into: { spectrum: new Float32Array(32) } }), 'f32')).toThrow(
      expect.objectContaining({ detail: 'holds 32 values, the result has 33' }),
    );
    expect(() => checkInto(job({ into: { bandPowers: new Float64Array(1) } }), 'f32')).toThrow(
      expect.objectContaining({ detail: "this job's flags do not produce it" }),
    );
    expect(() =>
      checkInto(job({ into: { spectrum: undefined, filtered: new Float32Array(64) } }), 'f32'),
    ).not.toThrow();
  });
});

describe('each refusal names its field and says what is wrong', { timeout: 10_000 }, () => {
  it('integers refuse fractions; a string, a boolean and an enum value are named in words', () => {
    expect(refusal({ batch: 1.5 })).toEqual({ field: 'batch', detail: 'must be an integer >= 1 (positive), got 1.5' });
    expect(refusal({ previewBins: 2.5 }).detail).toBe('must be an integer >= 1 (positive), got 2.5');
    expect(refusal({ nperseg: 8.5 }).detail).toBe('must be an integer >= 2, got 8.5');
    expect(refusal({ nCycles: Number.POSITIVE_INFINITY }).detail).toBe(
      'must be a finite number > 0 (positive), got Infinity',
    );
    expect(refusal({ waveletBands: 1 as never })).toEqual({
      field: 'waveletBands',
      detail: 'must be true or false, got 1',
    });
    expect(refusal({ detrend: 'none' as never })).toEqual({
      field: 'detrend',
      detail: 'must be one of "linear", "constant", false, got "none"',
    });
    expect(job({ label: 'x'.repeat(200) }).label).toHaveLength(200);
    expect(refusal({ label: 'x'.repeat(201) })).toEqual({
      field: 'label',
      detail: 'must be a string of at most 200 characters, got 201 characters',
    });
    expect(refusal({ label: 5 as never }).detail).toBe('must be a string of at most 200 characters, got 5');
  });

  it('a number row without a range says only that it must be finite', () => {
    expect(() => validateJobParameters({ flags: ['stft'], scale: 'x' as never }, 64, ctx)).toThrow(
      expect.objectContaining({ field: 'scale', detail: 'must be a finite number, got "x"' }),
    );
  });

  it('bands, freqs, into and stageParams of the wrong shape', () => {
    expect(refusal({ passBand: [0, 0.1, 0.2] as never }).detail).toBe('must be a [low, high] pair in Hz, got an array');
    expect(refusal({ flags: ['wavelet'], freqs: 0.1 as never })).toEqual({
      field: 'freqs',
      detail: 'must be an array of frequencies in Hz, got 0.1',
    });
    expect(refusal({ into: 'x' as never })).toEqual({
      field: 'into',
      detail: 'must be an object of result arrays, got "x"',
    });
    expect(refusal({ into: { extra: new Float32Array(1) } as never })).toEqual({
      field: 'into.extra',
      detail:
        'is not a result array (known: filtered, spectrum, bandPowers, bandWaves, waveletPower, envelope, decimated)',
    });
    expect(refusal({ into: { filtered: new Int16Array(64) as never } }).detail).toMatch(
      /^must be a Float32Array or Float64Array \(a Uint16Array with outputDtype f16\/bf16\), got /,
    );
    expect(refusal({ stageParams: 5 as never })).toEqual({
      field: 'stageParams',
      detail: 'must be an object keyed by stage name, got 5',
    });
  });

  it('an unknown flag lists every registered stage', () => {
    expect(() => validateJob({ data: data(64), flags: ['nope'] }, { stages: new Set(['a', 'b']) })).toThrow(
      /nor a registered stage \(a, b\)$/,
    );
  });

  it('a job that is not an object, and a context without stages, are named', () => {
    expect(() => validateJob(null as never, ctx)).toThrow(
      expect.objectContaining({ field: '(job)', detail: 'a job must be an object, got null' }),
    );
    expect(() => validateJob('job' as never, ctx)).toThrow(
      expect.objectContaining({ field: '(job)', detail: 'a job must be an object, got "job"' }),
    );
    expect(() => validateJobParameters(null as never, 64, ctx)).toThrow(
      expect.objectContaining({ detail: 'a job must be an object, got null' }),
    );
    expect(() => validateJobParameters([] as never, 64, ctx)).toThrow(
      expect.objectContaining({ detail: 'a job must be an object, got an array' }),
    );
    expect(() => validateJob({ data: data(64), flags: ['stft'] }, null as never)).toThrow(
      new TypeError(
        'validateJob needs a context { stages: a Set of registered stage names } (an engine passes its own)',
      ),
    );
  });

  it('validateJob leaves NaN samples to the doors and the GPU; validateJobParameters takes f32 data by default', () => {
    const bad = data(64);
    bad[7] = Number.NaN;
    // The engine's submit path does not scan samples (its lanes search them on the GPU)...
    expect(validateJob({ data: bad, flags: ['stft'] }, ctx).data).toBe(bad);
    // ...while a door's check refuses the same job, naming the sample.
    expect(() => checkSampleTypes({ data: bad }, { finite: true })).toThrow(
      expect.objectContaining({ field: 'data[7]' }),
    );
    expect(validateJobParameters({ flags: ['wavelet'], freqs: [0.1] }, 64, ctx).wavelet).toBe(true);
  });

  it('a window given as a one-item array is named as the window, not its parameter', () => {
    expect(() => resolveJobWindow(['hann'])).toThrow(expect.objectContaining({ field: 'window' }));
    expect(() => resolveJobWindow(['gaussian', 0.099])).toThrow(
      expect.objectContaining({ detail: "a gaussian window's std must be at least 0.1 samples, got 0.099" }),
    );
  });

  it('jobSamples: batch times length', () => {
    expect(jobSamples(validateJob({ data: data(12), batch: 3, flags: ['stft'] }, ctx))).toBe(12);
  });
});
