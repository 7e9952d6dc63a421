import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { checkInto, validateJob } from '../../../src/engine/validate.js';

const ctx = { stages: new Set(['supdem']) };
const data = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.sin(i) + 0.1 * i);

function refused(spec: unknown, field: string, message?: RegExp): void {
  let error: unknown;
  try {
    validateJob(spec as JobSpec, ctx);
  } catch (e) {
    error = e;
  }
  expect(error, `expected ${field} to be refused`).toBeInstanceOf(JobValidationError);
  expect((error as JobValidationError).field).toBe(field);
  expect((error as JobValidationError).message).toContain(`job.${field}`);
  if (message) expect((error as JobValidationError).message).toMatch(message);
}

describe('validateJob', () => {
  it('fills in the defaults', () => {
    const job = validateJob({ data: data(64), batch: 2, flags: ['stft'] }, ctx);
    expect(job).toMatchObject({
      batch: 2,
      length: 32,
      fs: 1,
      detrend: 'linear',
      window: { name: 'hann' },
      passBand: [0, 0.5],
      previewBins: 17,
      nCycles: 6,
      waveletBands: false,
      stft: true,
      cycles: false,
      wavelet: false,
      stages: [],
    });
    expect(validateJob({ data: data(4096), flags: ['stft'] }, ctx).previewBins).toBe(256);
  });

  it('accepts every field in range, registered stages and parametric windows', () => {
    const job = validateJob(
      {
        data: new Float64Array(400).fill(1),
        batch: 4,
        fs: 1000,
        flags: ['stft', 'cycles', 'wavelet', 'supdem'],
        detrend: false,
        window: ['kaiser', 8.6],
        passBand: [10, 200],
        previewBins: 51,
        bands: [
          [0, 50],
          [50, 500],
        ],
        freqs: [10, 20, 500],
        nCycles: 7,
        waveletBands: true,
        stageParams: { supdem: { k: 1 } },
        label: 'x',
        timeoutMs: 10,
        signal: new AbortController().signal,
      },
      ctx,
    );
    expect(job).toMatchObject({
      stft: true,
      cycles: true,
      wavelet: true,
      stages: ['supdem'],
      window: { name: 'kaiser', parameter: 8.6 },
      length: 100,
    });
    expect(validateJob({ data: data(64), flags: ['stft'], window: 'tukey' }, ctx).window).toEqual({
      name: 'tukey',
      parameter: 0.5,
    });
  });

  it('refuses bad data and batch', () => {
    refused({ flags: ['stft'] }, 'data', /Float32Array or Float64Array, got undefined/);
    refused({ data: [1, 2, 3, 4], flags: ['stft'] }, 'data', /got Array/);
    refused({ data: new Uint8Array(8), flags: ['stft'] }, 'data'); // Int16Array is i16 data now (sample-types.test.ts)
    refused({ data: new Float32Array(0), flags: ['stft'] }, 'data', /empty/);
    refused({ data: data(10), batch: 3, flags: ['stft'] }, 'batch', /10 samples do not split into 3/);
    refused({ data: data(10), batch: 0, flags: ['stft'] }, 'batch');
    refused({ data: data(10), batch: 2.5, flags: ['stft'] }, 'batch');
    refused({ data: data(6), batch: 2, flags: ['stft'] }, 'data', /too short/);
  });

  it('refuses NaN and Infinity parameters', () => {
    refused({ data: data(64), fs: Number.NaN, flags: ['stft'] }, 'fs', /finite/);
    refused({ data: data(64), fs: Infinity, flags: ['stft'] }, 'fs');
    refused({ data: data(64), fs: -1, flags: ['stft'] }, 'fs', /positive/);
    refused({ data: data(64), flags: ['wavelet'], freqs: [0.1], nCycles: Number.NaN }, 'nCycles');
    refused({ data: data(64), flags: ['wavelet'], freqs: [0.1, Number.NaN] }, 'freqs[1]');
    refused({ data: data(64), flags: ['stft'], window: ['kaiser', Number.NaN] }, 'window[1]');
    refused({ data: data(64), flags: ['stft'], timeoutMs: Number.NaN }, 'timeoutMs');
    refused({ data: data(64), flags: ['stft'], timeoutMs: 0 }, 'timeoutMs');
    // Past 2^31-1 ms a Node timer fires at once: "almost never" would have meant "now".
    refused(
      { data: data(64), flags: ['stft'], timeoutMs: 1e12 },
      'timeoutMs',
      /0\.\.2147483647 ms \(the most a Node timer holds\), got 1000000000000/,
    );
    refused({ data: data(64), flags: ['stft'], timeoutMs: 2 ** 31 }, 'timeoutMs', /got 2147483648/);
  });

  it('refuses empty, unknown and repeated flags', () => {
    refused({ data: data(64), flags: [] }, 'flags', /empty/);
    refused({ data: data(64), flags: 'stft' }, 'flags');
    refused({ data: data(64), flags: ['stft', 'fancy'] }, 'flags[1]', /unknown flag "fancy".*supdem/);
    refused({ data: data(64), flags: ['stft', 'stft'] }, 'flags[1]', /twice/);
    refused({ data: data(64), flags: [3] }, 'flags[0]');
  });

  it('refuses unknown windows and bad window parameters', () => {
    refused({ data: data(64), flags: ['stft'], window: 'hanningg' }, 'window', /window "hanningg" is unknown/);
    expect(validateJob({ data: data(64), flags: ['stft'], window: 'han' }, ctx).window).toEqual({
      name: 'hann',
      parameter: undefined,
    });
    refused({ data: data(64), flags: ['stft'], window: 'kaiser' }, 'window', /needs its parameter/);
    refused({ data: data(64), flags: ['stft'], window: ['hann', 3] }, 'window', /takes no parameter/);
    refused({ data: data(64), flags: ['stft'], window: ['gaussian', -1] }, 'window[1]', /std/);
    refused({ data: data(64), flags: ['stft'], window: ['tukey', '0.5'] }, 'window[1]');
    refused({ data: data(64), flags: ['stft'], window: ['nope', 1] }, 'window', /unknown/);
    refused({ data: data(64), flags: ['stft'], window: 42 }, 'window');
  });

  it('refuses bands outside [0, fs/2] or with low >= high', () => {
    const base = { data: data(64), fs: 100, flags: ['cycles'] };
    refused({ ...base }, 'bands', /at least one band/);
    refused({ ...base, bands: [[-1, 10]] }, 'bands[0][0]', /below 0/);
    refused({ ...base, bands: [[0, 51]] }, 'bands[0][1]', /above fs\/2 = 50/);
    refused(
      {
        ...base,
        bands: [
          [0, 10],
          [20, 20],
        ],
      },
      'bands[1]',
      /below the high edge/,
    );
    refused({ ...base, bands: [[30, 20]] }, 'bands[0]');
    refused({ ...base, bands: [[0, Infinity]] }, 'bands[0][1]', /finite/);
    refused({ ...base, bands: [[0, 10, 20]] }, 'bands[0]');
    refused({ data: data(64), fs: 100, flags: ['stft'], passBand: [0, 60] }, 'passBand[1]');
  });

  it('refuses wavelet jobs without frequencies, out-of-range frequencies and band reduction without bands', () => {
    refused({ data: data(64), flags: ['wavelet'] }, 'freqs');
    refused({ data: data(64), fs: 10, flags: ['wavelet'], freqs: [6] }, 'freqs[0]', /fs\/2/);
    refused({ data: data(64), fs: 10, flags: ['wavelet'], freqs: [0] }, 'freqs[0]');
    refused({ data: data(64), flags: ['wavelet'], freqs: [0.1], waveletBands: true }, 'bands');
  });

  it('refuses previewBins beyond N/2+1, unknown fields and stage params for unregistered stages', () => {
    refused({ data: data(64), flags: ['stft'], previewBins: 34 }, 'previewBins', /33 \(N\/2\+1\)/);
    refused({ data: data(64), flags: ['stft'], previewBins: 0 }, 'previewBins');
    refused({ data: data(64), flags: ['stft'], nfft: 16 }, 'nfft', /unknown field/);
    refused({ data: data(64), flags: ['stft'], stageParams: { other: 1 } }, 'stageParams.other');
    refused({ data: data(64), flags: ['stft'], detrend: 'quadratic' }, 'detrend');
    refused({ data: data(64), flags: ['stft'], signal: {} }, 'signal');
    refused(null, '(job)');
    refused([1], '(job)', /a job must be an object, got an array/);
  });
});

describe('validateJob: framed stft (nperseg)', () => {
  it("computes scipy's framing (boundary zeros, padded)", () => {
    const job = validateJob({ data: data(1000), flags: ['stft'], nperseg: 64 }, ctx);
    // extended 1000 + 64, padded to a whole number of 32-sample steps: 1088; frames (1088 - 32) / 32 = 33
    expect(job.framing).toMatchObject({
      nperseg: 64,
      noverlap: 32,
      hop: 32,
      extension: 32,
      extendedLength: 1088,
      frames: 33,
      freqs: 33,
    });
    expect(job.previewBins).toBe(33);
    expect(
      validateJob({ data: data(100), flags: ['stft'], nperseg: 15, noverlap: 5, window: 'boxcar' }, ctx).framing,
    ).toMatchObject({
      hop: 10,
      extension: 7,
      extendedLength: 115,
      frames: 11,
    });
  });

  it('refuses nperseg > N, bad noverlap, NOLA violations, other flags', () => {
    refused({ data: data(64), flags: ['stft'], nperseg: 65 }, 'nperseg', /greater than the signal length/);
    refused({ data: data(64), flags: ['stft'], nperseg: 1 }, 'nperseg');
    refused({ data: data(64), flags: ['stft'], nperseg: 16, noverlap: 16 }, 'noverlap');
    refused({ data: data(64), flags: ['stft'], nperseg: 16, noverlap: -1 }, 'noverlap');
    refused({ data: data(64), flags: ['stft'], nperseg: 16, noverlap: 0 }, 'noverlap', /NOLA/); // periodic hann: w[0] = 0
    refused({ data: data(64), flags: ['stft'], noverlap: 4 }, 'noverlap', /needs nperseg/);
    refused(
      { data: data(64), flags: ['stft', 'cycles'], bands: [[0, 0.1]], nperseg: 16 },
      'flags',
      /only the stft flag, not cycles/,
    );
    refused({ data: data(64), flags: ['stft'], nperseg: 16, previewBins: 10 }, 'previewBins', /nperseg\/2\+1/);
  });
});

describe('checkInto (caller-provided result arrays)', () => {
  const base = { data: data(64), batch: 2, flags: ['stft', 'cycles'], bands: [[0, 0.1]] as const, previewBins: 5 };
  const check = (into: Record<string, unknown>, precision: 'f32' | 'f64' = 'f32', extra: Partial<JobSpec> = {}): void =>
    checkInto(validateJob({ ...base, ...extra, into } as JobSpec, ctx), precision);

  it('accepts arrays of the exact length and type', () => {
    check({
      filtered: new Float32Array(64),
      spectrum: new Float32Array(10),
      bandPowers: new Float64Array(2),
      bandWaves: new Float32Array(64),
    });
    check({ filtered: new Float64Array(64) }, 'f64');
  });

  it('refuses a wrong length, a wrong type, a field the flags do not produce, an unknown field', () => {
    expect(() => check({ filtered: new Float32Array(63) })).toThrow(
      /into.filtered: holds 63 values, the result has 64/,
    );
    expect(() => check({ filtered: new Float32Array(64) }, 'f64')).toThrow(/into.filtered: must be a Float64Array/);
    expect(() => check({ bandPowers: new Float32Array(2) })).toThrow(/into.bandPowers: must be a Float64Array/);
    expect(() => check({ waveletPower: new Float32Array(64) })).toThrow(
      /into.waveletPower: this job's flags do not produce it/,
    );
    expect(() => check({ bandWaves: new Float32Array(64) }, 'f32', { bandWaves: false })).toThrow(/into.bandWaves/);
    expect(() => check({ other: new Float32Array(1) })).toThrow(/into.other/);
    expect(() => check({ filtered: [1, 2] })).toThrow(/into.filtered: must be a Float32Array or Float64Array/);
    refused({ ...base, bandWaves: 'yes' }, 'bandWaves');
  });
});

describe('validateJob: values that pass a type check but would give nothing or NaN', () => {
  it('holes in flags, bands and freqs are refused by index (forEach and map skipped them)', () => {
    // eslint-disable-next-line no-sparse-arrays
    refused({ data: data(64), flags: [, 'stft'] }, 'flags[0]', /must be a string, got undefined/);
    refused({ data: data(64), flags: new Array(3) }, 'flags[0]');
    // eslint-disable-next-line no-sparse-arrays
    refused({ data: data(64), flags: ['cycles'], bands: [, [0.1, 0.2]], bandWaves: false }, 'bands[0]');
    // eslint-disable-next-line no-sparse-arrays
    refused({ data: data(64), flags: ['wavelet'], freqs: [, 0.2] }, 'freqs[0]');
  });

  it('a gaussian window narrower than 0.1 samples, a wavelet of width 0 or of infinite width', () => {
    refused(
      { data: data(64), flags: ['stft'], window: ['gaussian', 1e-300] },
      'window[1]',
      /std must be at least 0\.1 samples/,
    );
    expect(validateJob({ data: data(64), flags: ['stft'], window: ['gaussian', 0.1] }, ctx).window).toEqual({
      name: 'gaussian',
      parameter: 0.1,
    });
    refused({ data: data(64), fs: 100, flags: ['wavelet'], freqs: [5], nCycles: 1e-200 }, 'nCycles', /width 0/);
    refused({ data: data(64), fs: 1e10, flags: ['wavelet'], freqs: [1e-300] }, 'freqs[0]', /infinitely wide/);
  });

  it('a value megabytes long is quoted, never echoed whole, and refused in linear time', () => {
    const long = 'x'.repeat(10_000_000);
    const t0 = performance.now();
    let error: JobValidationError | undefined;
    try {
      validateJob({ data: data(64), flags: [long] }, ctx);
    } catch (e) {
      error = e as JobValidationError;
    }
    expect(error?.field).toBe('flags[0]');
    expect(error!.message.length).toBeLessThan(1200);
    expect(error!.message).toMatch(/\.\.\. \(1000000\d characters\)/);
    expect(performance.now() - t0).toBeLessThan(3000);
    let keyError: JobValidationError | undefined;
    try {
      validateJob({ data: data(64), flags: ['supdem'], stageParams: { [long]: 1 } }, ctx);
    } catch (e) {
      keyError = e as JobValidationError;
    }
    expect(keyError?.field.length).toBeLessThan(200);
  });
});

describe('validateJob: its context', () => {
  it('a context without stages is a TypeError saying what it needs', () => {
    expect(() => validateJob({ data: data(64), flags: ['stft'] }, {} as never)).toThrow(
      /validateJob needs a context \{ stages/,
    );
  });
});
