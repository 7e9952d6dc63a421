// validateJob at the edge of each documented limit, with each check reached on its own (everything
// else valid).
import { describe, expect, it } from 'vitest';
import { MIN_SERIES_LENGTH, validateJob } from '../../../src/engine/validate.js';
import { ctx, data, refusal, job } from './validate-edges-fixture.js';

describe('validateJob at each limit, each check on its own', { timeout: 10_000 }, () => {
  it(`series of ${MIN_SERIES_LENGTH} samples are the shortest taken`, () => {
    expect(MIN_SERIES_LENGTH).toBe(4);
    expect(validateJob({ data: data(8), batch: 2, flags: ['stft'] }, ctx).length).toBe(4);
    expect(refusal({ data: data(6), batch: 2 })).toEqual({
      field: 'data',
      detail: 'series of 3 samples are too short (at least 4)',
    });
  });

  it('samples must split into batch series of equal length', () => {
    expect(refusal({ data: data(10), batch: 3 })).toEqual({
      field: 'batch',
      detail: '10 samples do not split into 3 series of equal length',
    });
  });

  it('nperseg equal to N is taken; N + 1 is refused', () => {
    expect(job({ nperseg: 64, noverlap: 32 }).framing?.frames).toBeGreaterThan(0);
    expect(refusal({ nperseg: 65 })).toEqual({
      field: 'nperseg',
      detail: '65 is greater than the signal length 64',
    });
  });

  it('noverlap up to nperseg - 1; nperseg, fractions and negatives refused; noverlap alone needs nperseg', () => {
    expect(job({ nperseg: 16, noverlap: 15 }).framing?.hop).toBe(1);
    for (const noverlap of [16, 1.5, -1, '4' as never])
      expect(refusal({ nperseg: 16, noverlap }).field, String(noverlap)).toBe('noverlap');
    expect(refusal({ nperseg: 16, noverlap: 16 }).detail).toBe('16 must be less than nperseg = 16');
    expect(refusal({ noverlap: 4 })).toEqual({ field: 'noverlap', detail: 'needs nperseg (a framed stft)' });
  });

  it('a framed job takes the stft flag alone', () => {
    expect(refusal({ nperseg: 16, flags: ['stft', 'cycles'], bands: [[0.1, 0.2]] })).toEqual({
      field: 'flags',
      detail: 'a framed job (nperseg) takes only the stft flag, not cycles; submit those as a separate job',
    });
    expect(refusal({ nperseg: 16, flags: ['supdem'] }).detail).toBe(
      'a framed job (nperseg) takes only the stft flag, not supdem; submit those as a separate job',
    );
    expect(refusal({ nperseg: 16, flags: ['stft', 'wavelet', 'supdem'], freqs: [0.1] }).detail).toBe(
      'a framed job (nperseg) takes only the stft flag, not wavelet, supdem; submit those as a separate job',
    );
  });

  it('previewBins up to N/2 + 1 (a frame: nperseg/2 + 1); one more is refused', () => {
    expect(job({ previewBins: 33 }).previewBins).toBe(33);
    expect(refusal({ previewBins: 34 })).toEqual({
      field: 'previewBins',
      detail: '34 bins asked, a series of 64 samples has 33 (N/2+1)',
    });
    expect(job({ nperseg: 16, previewBins: 9 }).previewBins).toBe(9);
    expect(refusal({ nperseg: 16, previewBins: 10 })).toEqual({
      field: 'previewBins',
      detail: '10 bins asked, a frame of 16 samples has 9 (nperseg/2+1)',
    });
    expect(job({ nperseg: 16 }).previewBins).toBe(9);
    expect(validateJob({ data: data(1024), flags: ['stft'] }, ctx).previewBins).toBe(256);
  });

  it('a band may touch 0 and fs/2; beyond either edge, or empty, it is refused naming the edge', () => {
    expect(job({ fs: 10, passBand: [0, 5] }).passBand).toEqual([0, 5]);
    expect(job({ fs: 10 }).passBand).toEqual([0, 5]);
    expect(refusal({ fs: 10, passBand: [-0.5, 5] })).toEqual({
      field: 'passBand[0]',
      detail: 'low edge -0.5 Hz is below 0',
    });
    expect(refusal({ fs: 10, passBand: [0, 5.5] })).toEqual({
      field: 'passBand[1]',
      detail: 'high edge 5.5 Hz is above fs/2 = 5 Hz',
    });
    expect(refusal({ fs: 10, passBand: [2, 2] })).toEqual({
      field: 'passBand',
      detail: 'low edge 2 Hz must be below the high edge 2 Hz',
    });
    expect(refusal({ passBand: [0, 0.1, 0.2] as never }).field).toBe('passBand');
    expect(refusal({ passBand: ['0', 0.2] as never }).field).toBe('passBand[0]');
  });

  it('bands: an array of bands, each checked by index; cycles and waveletBands need one', () => {
    expect(
      refusal({
        flags: ['cycles'],
        bands: [
          [0.1, 0.2],
          [0.3, 0.6],
        ],
      }).field,
    ).toBe('bands[1][1]');
    expect(refusal({ bands: 'a' as never })).toEqual({
      field: 'bands',
      detail: 'must be an array of [low, high] pairs, got "a"',
    });
    expect(refusal({ flags: ['cycles'], bands: [] })).toEqual({
      field: 'bands',
      detail: 'the cycles flag needs at least one band',
    });
    expect(refusal({ flags: ['wavelet'], freqs: [0.1], waveletBands: true })).toEqual({
      field: 'bands',
      detail: 'waveletBands needs at least one band',
    });
    expect(refusal({ waveletBands: 1 as never }).field).toBe('waveletBands');
    expect(refusal({ bandWaves: 'no' as never }).field).toBe('bandWaves');
  });

  it('freqs in (0, fs/2]: 0 refused, fs/2 taken, above refused; the wavelet flag needs one', () => {
    expect(job({ flags: ['wavelet'], fs: 10, freqs: [5] }).freqs).toEqual([5]);
    expect(refusal({ flags: ['wavelet'], fs: 10, freqs: [1, 0] })).toEqual({
      field: 'freqs[1]',
      detail: '0 Hz is outside (0, fs/2 = 5]',
    });
    expect(refusal({ flags: ['wavelet'], fs: 10, freqs: [5.01] }).field).toBe('freqs[0]');
    expect(refusal({ flags: ['wavelet'], freqs: 0.1 as never }).field).toBe('freqs');
    expect(refusal({ flags: ['wavelet'], freqs: [] })).toEqual({
      field: 'freqs',
      detail: 'the wavelet flag needs at least one frequency',
    });
    expect(refusal({ flags: ['wavelet'], freqs: ['0.1' as never] }).field).toBe('freqs[0]');
  });

  it('the NOLA check uses the window with its parameter', () => {
    // tukey with alpha 0 is a boxcar (NOLA holds without overlap); tukey's default alpha 0.5 is zero at its ends.
    expect(job({ window: ['tukey', 0], nperseg: 8, noverlap: 0 }).framing?.frames).toBeGreaterThan(0);
    expect(refusal({ window: 'tukey', nperseg: 8, noverlap: 0 }).field).toBe('noverlap');
  });

  it('an unknown field is named, with the fields a job takes', () => {
    expect(refusal({ nfft: 8 } as never)).toEqual({
      field: 'nfft',
      detail:
        'unknown field (known: data, dtype, into, signal, batch, fs, flags, detrend, window, nperseg, noverlap, passBand, previewBins, bands, freqs, nCycles, waveletBands, bandWaves, timeoutMs, label, stageParams, scale, outputDtype, filter, q)',
    });
  });

  it('a Morlet wavelet as wide as a double holds is taken (sigma = nCycles fs / (2 pi f))', () => {
    // 6 / (2 pi 1e-308) is 9.5e307, finite.
    expect(job({ flags: ['wavelet'], freqs: [1e-308] }).freqs).toEqual([1e-308]);
  });

  it('a Morlet wavelet of infinite width names the frequency; of width 0 names nCycles', () => {
    expect(refusal({ flags: ['wavelet'], freqs: [1e-320] }).field).toBe('freqs[0]');
    expect(refusal({ flags: ['wavelet'], freqs: [0.1], nCycles: 1e-200 }).field).toBe('nCycles');
    expect(job({ flags: ['wavelet'], freqs: [0.1], nCycles: 1e-100 }).nCycles).toBe(1e-100);
  });

  it('timeoutMs up to 2^31 - 1 ms (what a Node timer holds); one more is refused', () => {
    expect(job({ timeoutMs: 2 ** 31 - 1 }).timeoutMs).toBe(2 ** 31 - 1);
    expect(refusal({ timeoutMs: 2 ** 31 }).field).toBe('timeoutMs');
    expect(job({}).timeoutMs).toBeUndefined();
  });

  it('16-bit data takes stft and cycles; wavelet and registered stages need f32 or f64', () => {
    const i16 = Int16Array.from({ length: 64 }, (_, i) => i);
    expect(validateJob({ data: i16, flags: ['stft', 'cycles'], bands: [[0.1, 0.2]] }, ctx).dtype).toBe('i16');
    expect(() => validateJob({ data: i16, flags: ['wavelet'], freqs: [0.1] }, ctx)).toThrow(
      /i16 data takes the stft and cycles flags; wavelet need f32 or f64 data/,
    );
    expect(() => validateJob({ data: i16, flags: ['supdem'] }, ctx)).toThrow(
      /i16 data takes the stft and cycles flags; registered stages \(supdem\) need f32 or f64 data/,
    );
    const two = { stages: new Set(['a', 'b']) };
    expect(() => validateJob({ data: i16, flags: ['a', 'b'] }, two)).toThrow(
      /registered stages \(a, b\) need f32 or f64 data/,
    );
  });

  it('into: result arrays only, typed arrays of floats (16-bit bits for waves only)', () => {
    expect(job({ into: { filtered: new Uint16Array(64), spectrum: undefined } }).into.filtered).toBeInstanceOf(
      Uint16Array,
    );
    expect(
      job({ flags: ['cycles'], bands: [[0.1, 0.2]], into: { bandWaves: new Uint16Array(64) } }).into.bandWaves,
    ).toBeInstanceOf(Uint16Array);
    expect(refusal({ into: { spectrum: new Uint16Array(1) as never } })).toMatchObject({
      field: 'into.spectrum',
      detail: expect.stringMatching(/^must be a Float32Array or Float64Array, got /),
    });
    expect(refusal({ into: { extra: new Float32Array(1) } as never }).field).toBe('into.extra');
    expect(refusal({ into: [] as never }).field).toBe('into');
    expect(refusal({ into: 'x' as never }).field).toBe('into');
    expect(job({ into: null as never }).into).toEqual({});
  });

  it('stageParams: an object keyed by registered stages; signal: an AbortSignal', () => {
    expect(refusal({ stageParams: [] as never }).field).toBe('stageParams');
    expect(refusal({ stageParams: 5 as never }).field).toBe('stageParams');
    expect(job({ stageParams: null as never }).stageParams).toEqual({});
    expect(refusal({ stageParams: { other: 1 } })).toEqual({
      field: 'stageParams.other',
      detail: 'no stage "other" is registered',
    });
    expect(refusal({ signal: {} as never })).toEqual({ field: 'signal', detail: 'must be an AbortSignal' });
  });

  it('names each range of the table in its message', () => {
    expect(refusal({ batch: 0 }).detail).toBe('must be an integer >= 1 (positive), got 0');
    expect(refusal({ fs: 0 }).detail).toBe('must be a finite number > 0 (positive), got 0');
    expect(refusal({ nperseg: 1 }).detail).toBe('must be an integer >= 2, got 1');
    expect(refusal({ nperseg: 16, noverlap: -1 }).detail).toBe('must be an integer >= 0, got -1');
    expect(refusal({ nCycles: -1 }).detail).toBe('must be a finite number > 0 (positive), got -1');
    expect(refusal({ previewBins: 'x' as never }).detail).toBe('must be an integer >= 1 (positive), got "x"');
    expect(refusal({ scale: Number.NaN }).field).toBe('scale');
  });

  it('a flag given twice or unknown is named by index, listing the registered stages', () => {
    expect(refusal({ flags: ['stft', 'stft'] })).toEqual({ field: 'flags[1]', detail: '"stft" is given twice' });
    expect(refusal({ flags: ['stft', 'nope'] })).toEqual({
      field: 'flags[1]',
      detail:
        'unknown flag "nope": not one of stft, cycles, wavelet, envelope, decimate nor a registered stage (supdem)',
    });
    expect(() => validateJob({ data: data(64), flags: ['nope'] }, { stages: new Set() })).toThrow(
      /unknown flag "nope": not one of stft, cycles, wavelet, envelope, decimate nor a registered stage$/,
    );
    expect(refusal({ flags: [] }).detail).toBe(
      'is empty: ask for at least one of stft, cycles, wavelet, envelope, decimate or a registered stage',
    );
    expect(refusal({ flags: 'stft' as never })).toEqual({
      field: 'flags',
      detail: 'must be an array of flags (stft, cycles, wavelet, envelope, decimate or a registered stage), got "stft"',
    });
  });
});
