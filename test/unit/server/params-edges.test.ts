// The server's parameter coercion at its documented edges: every accepted spelling of a number, a
// boolean, an enum's false and a dtype, the longest number a query may spell, and each of
// parseJobParams' own checks alone (the others passing), so none hides behind a later one.
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/server/errors.js';
import {
  MAX_NUMBER_CHARS,
  SIXTEEN_BIT_DTYPES,
  headerParams,
  numberFromString,
  paramsFromStrings,
  parseJobParams,
  sampleDtype,
  type RawParams,
} from '../../../src/server/params.js';

const context = { extraFlags: ['supdem'], maxTimeoutMs: 10_000, defaultTimeoutMs: 1000 };

/** The HttpError `action` throws (fails the test when it throws nothing or something else). */
function httpErrorOf(action: () => unknown): HttpError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  return expect.unreachable('expected an HttpError');
}

describe('numberFromString', { timeout: 5_000 }, () => {
  it.each([
    ['1e3', 1000],
    ['1E3', 1000],
    ['2.5e-1', 0.25],
    ['1e+2', 100],
    ['1e10', 1e10],
    ['.5', 0.5],
    ['5.', 5],
    ['+5', 5],
    ['-5', -5],
    ['-.25', -0.25],
    ['  7  ', 7],
    ['0', 0],
  ])('reads %j as %d', (text, value) => {
    expect(numberFromString('fs', text)).toBe(value);
  });

  it.each([
    '',
    ' ',
    '.',
    '+',
    '-',
    'e3',
    '1e',
    '1e+',
    '1.2.3',
    '0x10',
    '0b1',
    'Infinity',
    'NaN',
    '1_000',
    '1,5',
    '5 5',
    '++5',
    '1e3x',
    'x1',
  ])('refuses %j, naming the field', (text) => {
    const error = httpErrorOf(() => numberFromString('fs', text));
    expect(error.statusCode).toBe(400);
    expect(error.field).toBe('fs');
    expect(error.message).toBe(`fs: must be a finite number, got ${JSON.stringify(text)}`);
  });

  it(`takes a number of exactly ${MAX_NUMBER_CHARS} characters and refuses one more`, () => {
    expect(MAX_NUMBER_CHARS).toBe(32);
    const longest = '1'.repeat(32);
    expect(numberFromString('fs', longest)).toBe(Number(longest));
    expect(httpErrorOf(() => numberFromString('fs', `${longest}1`)).message).toBe(
      `fs: must be a finite number, got "${longest}1"`,
    );
  });

  it('allows 8 characters of surrounding space before refusing on length alone', () => {
    const longest = '1'.repeat(32);
    expect(numberFromString('fs', `    ${longest}    `)).toBe(Number(longest));
    const error = httpErrorOf(() => numberFromString('fs', `    ${longest}     `));
    expect(error.message).toBe('fs: must be a finite number of at most 32 characters, got 41 characters');
  });
});

describe('paramsFromStrings spellings', { timeout: 5_000 }, () => {
  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('waveletBands=%s is %s', (text, value) => {
    expect(paramsFromStrings({ waveletBands: text })).toEqual({ waveletBands: value });
    expect(paramsFromStrings({ bandWaves: text })).toEqual({ bandWaves: value });
  });

  it.each(['yes', 'no', 'TRUE', 'True', '', ' true', '2'])('waveletBands=%j is refused', (text) => {
    const error = httpErrorOf(() => paramsFromStrings({ waveletBands: text }));
    expect(error.field).toBe('waveletBands');
    expect(error.message).toBe(`waveletBands: must be true or false, got ${JSON.stringify(text)}`);
  });

  it('an enum that allows false reads false and none as false; other enums keep the text', () => {
    expect(paramsFromStrings({ detrend: 'none' })).toEqual({ detrend: false });
    expect(paramsFromStrings({ detrend: 'false' })).toEqual({ detrend: false });
    expect(paramsFromStrings({ detrend: 'constant' })).toEqual({ detrend: 'constant' });
    expect(paramsFromStrings({ outputDtype: 'false' })).toEqual({ outputDtype: 'false' });
    expect(paramsFromStrings({ dtype: 'none' })).toEqual({ dtype: 'none' });
  });

  it('a string parameter keeps its text', () => {
    expect(paramsFromStrings({ label: 'run 7, left' })).toEqual({ label: 'run 7, left' });
  });

  it('flags: trimmed, empty names dropped', () => {
    expect(paramsFromStrings({ flags: ' stft , ,cycles,' })).toEqual({ flags: ['stft', 'cycles'] });
  });

  it('window: a name, or name,parameter with the parameter a number; more commas stay one name', () => {
    expect(paramsFromStrings({ window: 'hann' })).toEqual({ window: 'hann' });
    expect(paramsFromStrings({ window: 'gaussian,.5' })).toEqual({ window: ['gaussian', 0.5] });
    expect(paramsFromStrings({ window: 'a,1,2' })).toEqual({ window: 'a,1,2' });
    expect(httpErrorOf(() => paramsFromStrings({ window: 'kaiser,x' })).field).toBe('window[1]');
  });

  it('band, bands, numbers and objects read JSON when the text starts with [ or { (after spaces)', () => {
    expect(paramsFromStrings({ passBand: ' [1, 2]' })).toEqual({ passBand: [1, 2] });
    expect(paramsFromStrings({ freqs: '[0.5]' })).toEqual({ freqs: [0.5] });
    expect(paramsFromStrings({ stageParams: ' {"supdem": {"k": 1}}' })).toEqual({ stageParams: { supdem: { k: 1 } } });
    expect(paramsFromStrings({ passBand: '1e1,.5e2' })).toEqual({ passBand: [10, 50] });
    expect(paramsFromStrings({ freqs: '+1,2.' })).toEqual({ freqs: [1, 2] });
    const bad = httpErrorOf(() => paramsFromStrings({ bands: '[[1,2]' }));
    expect(bad.message).toBe('bands: is not valid JSON: "[[1,2]"');
    expect(httpErrorOf(() => paramsFromStrings({ stageParams: '{' })).message).toBe(
      'stageParams: is not valid JSON: "{"',
    );
    expect(httpErrorOf(() => paramsFromStrings({ stageParams: 'k=1' })).message).toBe(
      'stageParams: must be a JSON object',
    );
  });

  it('bands: each pair low:high; a pair without exactly one colon is refused by index', () => {
    expect(paramsFromStrings({ bands: '1:2,3:4' })).toEqual({
      bands: [
        [1, 2],
        [3, 4],
      ],
    });
    expect(httpErrorOf(() => paramsFromStrings({ bands: '1:2,1:2:3' })).message).toBe(
      'bands[1]: must be low:high, got "1:2:3"',
    );
    expect(httpErrorOf(() => paramsFromStrings({ bands: '1:x' })).field).toBe('bands[0][1]');
    expect(httpErrorOf(() => paramsFromStrings({ bands: 'x:1' })).field).toBe('bands[0][0]');
  });

  it('an unknown name is refused with its name as the field', () => {
    const error = httpErrorOf(() => paramsFromStrings({ fs: '1', nfft: '8' }));
    expect(error.code).toBe('unknown_field');
    expect(error.field).toBe('nfft');
    expect(error.message).toMatch(/^nfft: unknown parameter \(known: signal, dtype, batch, fs, /);
  });
});

describe('sampleDtype', { timeout: 5_000 }, () => {
  it.each([
    ['f32', 'f32'],
    ['f64', 'f64'],
    ['i16', 'i16'],
    ['f16', 'f16'],
    ['bf16', 'bf16'],
    ['float32', 'f32'],
    ['float64', 'f64'],
    ['int16', 'i16'],
    ['float16', 'f16'],
    ['bfloat16', 'bf16'],
  ])('%s is %s', (name, dtype) => {
    expect(sampleDtype(name)).toBe(dtype);
  });

  it.each([
    ['F32', '"F32"'],
    ['toString', '"toString"'],
    ['hasOwnProperty', '"hasOwnProperty"'],
    ['', '""'],
    [32, '32'],
    [null, 'null'],
    [['float32'], 'an array'],
    [{}, 'object'],
    [true, 'boolean'],
  ])('%j is refused naming the field and the value', (value, shown) => {
    const error = httpErrorOf(() => sampleDtype(value, 'x-tscuda-dtype'));
    expect(error.field).toBe('x-tscuda-dtype');
    expect(error.message).toBe(`x-tscuda-dtype: must be one of f32, f64, i16, f16, bf16, got ${shown}`);
  });

  it('the 16-bit sample types are i16, f16 and bf16', () => {
    expect(SIXTEEN_BIT_DTYPES).toEqual(['i16', 'f16', 'bf16']);
  });
});

describe('headerParams', { timeout: 5_000 }, () => {
  it('reads x-tscuda-<lower-case name> headers, given once as a string or as one header line', () => {
    expect(
      headerParams({
        'x-tscuda-passband': '1,2',
        'x-tscuda-ncycles': ['5'],
        'x-tscuda-fs': undefined,
        'content-type': 'x',
      }),
    ).toEqual({ passBand: '1,2', nCycles: '5' });
    // Node gives header names in lower case: any other x-tscuda-* name is not a parameter.
    const error = httpErrorOf(() => headerParams({ 'x-tscuda-passBand': '1,2' }));
    expect([error.statusCode, error.code, error.field]).toEqual([400, 'unknown_field', 'x-tscuda-passBand']);
    expect(error.message).toBe(
      'x-tscuda-passBand: not a job parameter (x-tscuda-<parameter>: x-tscuda-dtype, x-tscuda-batch, x-tscuda-fs, x-tscuda-flags, x-tscuda-detrend, x-tscuda-window, x-tscuda-nperseg, x-tscuda-noverlap, x-tscuda-passband, x-tscuda-previewbins, x-tscuda-bands, x-tscuda-freqs, x-tscuda-ncycles, x-tscuda-waveletbands, x-tscuda-bandwaves, x-tscuda-timeout, x-tscuda-label, x-tscuda-stageparams, x-tscuda-scale, x-tscuda-outputdtype, x-tscuda-filter, x-tscuda-q)',
    );
  });

  it('refuses a parameter header given more than once (or as no line at all), naming the header', () => {
    for (const lines of [['1', '2'], []]) {
      const error = httpErrorOf(() => headerParams({ 'x-tscuda-fs': lines }));
      expect(error.field).toBe('x-tscuda-fs');
      expect(error.message).toBe('x-tscuda-fs: is given more than once');
    }
  });
});

describe('parseJobParams, each check on its own', { timeout: 5_000 }, () => {
  it.each([
    [null, 'null'],
    [[], 'an array'],
    ['fs=1', 'string'],
  ])('refuses parameters that are not an object (%j)', (raw, what) => {
    const error = httpErrorOf(() => parseJobParams(raw as unknown as RawParams, 64, context, 'stft'));
    expect(error.field).toBe('body');
    expect(error.message).toBe(`body: parameters must be an object, got ${what}`);
  });

  it('an unknown name is refused with its name as the field', () => {
    const error = httpErrorOf(() => parseJobParams({ nfft: 8 } as RawParams, 64, context, 'stft'));
    expect([error.code, error.field]).toEqual(['unknown_field', 'nfft']);
  });

  it('an undefined value is left out (the default applies), and dtype never reaches the spec', () => {
    const { spec } = parseJobParams({ fs: undefined, dtype: 'f64' }, 64, context, 'stft');
    expect(spec).toStrictEqual({ flags: ['stft'], timeoutMs: 1000 });
  });

  it("the endpoint's flag is added last, once", () => {
    expect(parseJobParams({ flags: ['supdem'] }, 64, context, 'stft').spec.flags).toEqual(['supdem', 'stft']);
    expect(parseJobParams({ flags: ['stft', 'supdem'] }, 64, context, 'stft').spec.flags).toEqual(['stft', 'supdem']);
    expect(parseJobParams({}, 64, context, 'stft').spec.flags).toEqual(['stft']);
  });

  it('flags that are not an array go to the engine as given, and are refused there', () => {
    expect(httpErrorOf(() => parseJobParams({ flags: 'stft' }, 64, context, 'stft')).field).toBe('flags');
  });

  it('without an endpoint, flags are needed; the message lists the registered stages', () => {
    const error = httpErrorOf(() => parseJobParams({ fs: 2 }, 64, context));
    expect(error.field).toBe('flags');
    expect(error.message).toBe(
      'flags: at least one flag is needed (stft, cycles, wavelet, envelope, decimate, supdem)',
    );
    expect(parseJobParams({ flags: ['supdem'] }, 64, context).spec.flags).toEqual(['supdem']);
  });

  it('timeout: the default when absent, the maximum itself accepted, one more refused as timeout', () => {
    expect(parseJobParams({}, 64, context, 'stft').timeoutMs).toBe(1000);
    expect(parseJobParams({ timeout: 10_000 }, 64, context, 'stft')).toMatchObject({
      timeoutMs: 10_000,
      spec: { timeoutMs: 10_000 },
    });
    const error = httpErrorOf(() => parseJobParams({ timeout: 10_001 }, 64, context, 'stft'));
    expect(error.field).toBe('timeout');
    expect(error.message).toBe('timeout: must be at most 10000 ms, got 10001');
  });

  it('timeout that is not a number is refused by the engine, named as the request spells it', () => {
    const error = httpErrorOf(() => parseJobParams({ timeout: '99999' }, 64, context, 'stft'));
    expect(error.statusCode).toBe(400);
    expect(error.field).toBe('timeout');
    expect(error.message).toBe('timeout: must be a finite number > 0 (positive), got "99999"');
  });

  it('a bad dtype is refused on its own, naming dtype', () => {
    const error = httpErrorOf(() => parseJobParams({ dtype: 'f8' }, 64, context, 'stft'));
    expect(error.field).toBe('dtype');
  });

  it('the engine validates with the registered stages as its context', () => {
    expect(parseJobParams({ stageParams: { supdem: { k: 1 } } }, 64, context, 'stft').spec.stageParams).toEqual({
      supdem: { k: 1 },
    });
    expect(httpErrorOf(() => parseJobParams({ flags: ['other'] }, 64, context, 'stft')).field).toBe('flags[0]');
  });
});
