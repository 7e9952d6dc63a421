// The checks and the normalized values a job's parameters get from their rows alone: each bound
// of a number row (a synthetic row with a max too: no row of the table has one yet), the range in
// words, and which rows the normalized job fills from the table (defaults and optionals only).
import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import { JOB_PARAMETER_TABLE, type ParameterDef } from '../../../src/engine/parameters.js';
import { checkByTable, rangeText, tableNumber, tableValues } from '../../../src/engine/table-checks.js';

const row = (extra: Partial<ParameterDef>): ParameterDef => ({
  name: 'x',
  field: 'x',
  type: 'number',
  default: '1',
  help: 'a test row',
  from: ['body'],
  ...extra,
});

/** The detail of the refusal of `v` by `def`, or 'accepted'. */
function verdict(v: unknown, def: ParameterDef): string {
  try {
    tableNumber(v, def, 'x');
    return 'accepted';
  } catch (e) {
    expect(e).toBeInstanceOf(JobValidationError);
    return (e as JobValidationError).detail;
  }
}

describe('a number row', { timeout: 10_000 }, () => {
  it('says its range in words', () => {
    expect(rangeText(row({}))).toBe('');
    expect(rangeText(row({ min: 0, exclusiveMin: true }))).toBe(' > 0 (positive)');
    expect(rangeText(row({ min: 0 }))).toBe(' >= 0');
    expect(rangeText(row({ type: 'integer', min: 1 }))).toBe(' >= 1 (positive)');
    expect(rangeText(row({ type: 'integer', min: 2 }))).toBe(' >= 2');
    expect(rangeText(row({ min: 1 }))).toBe(' >= 1');
    expect(rangeText(row({ min: 2, max: 8 }))).toBe(' >= 2 and <= 8');
    expect(rangeText(row({ max: 8 }))).toBe(' <= 8');
  });

  it('takes each bound at its edge and refuses past it', () => {
    const bounded = row({ type: 'integer', min: 2, max: 8 });
    expect(verdict(2, bounded)).toBe('accepted');
    expect(verdict(8, bounded)).toBe('accepted');
    expect(verdict(1, bounded)).toBe('must be an integer >= 2 and <= 8, got 1');
    expect(verdict(9, bounded)).toBe('must be an integer >= 2 and <= 8, got 9');
    expect(verdict(2.5, bounded)).toBe('must be an integer >= 2 and <= 8, got 2.5');
    const open = row({ min: 0, exclusiveMin: true });
    expect(verdict(0, open)).toBe('must be a finite number > 0 (positive), got 0');
    expect(verdict(Number.MIN_VALUE, open)).toBe('accepted');
    expect(verdict(Number.NaN, open)).toBe('must be a finite number > 0 (positive), got NaN');
    expect(verdict('1', row({}))).toBe('must be a finite number, got "1"');
    expect(verdict(1e300, row({}))).toBe('accepted');
  });
});

describe('the rows of the table', { timeout: 10_000 }, () => {
  it('check every scalar given, naming its field', () => {
    expect(() => checkByTable({ flags: ['stft'], nCycles: -1 })).toThrow(expect.objectContaining({ field: 'nCycles' }));
    expect(() => checkByTable({ flags: ['stft'], bandWaves: 1 as never })).toThrow(
      expect.objectContaining({ field: 'bandWaves' }),
    );
    expect(() => checkByTable({ flags: ['stft'], detrend: 'none' as never })).toThrow(
      expect.objectContaining({ field: 'detrend' }),
    );
    expect(() => checkByTable({ flags: ['stft'], label: 7 as never })).toThrow(
      expect.objectContaining({ field: 'label' }),
    );
    expect(() => checkByTable({ flags: ['stft'], q: 1 })).toThrow(expect.objectContaining({ field: 'q' }));
    expect(() => checkByTable({ flags: ['stft'], timeoutMs: 0 })).toThrow(
      expect.objectContaining({ field: 'timeoutMs' }),
    );
    expect(() => checkByTable({ flags: ['stft'], batch: 2, fs: 10, nCycles: 3, q: 2, label: 'a' })).not.toThrow();
  });

  it('fill exactly the default and optional rows: their value, else the row default', () => {
    const filled = (JOB_PARAMETER_TABLE as readonly ParameterDef[]).filter(
      (def) => def.normal === 'default' || def.normal === 'optional',
    );
    expect(filled.map((def) => def.field).sort()).toEqual(
      ['batch', 'bandWaves', 'detrend', 'fs', 'label', 'nCycles', 'q', 'timeoutMs', 'waveletBands'].sort(),
    );
    expect(tableValues({ flags: ['stft'] })).toEqual({
      batch: 1,
      fs: 1,
      detrend: 'linear',
      nCycles: 6,
      waveletBands: false,
      bandWaves: true,
      timeoutMs: undefined,
      label: undefined,
      q: undefined,
    });
    expect(
      tableValues({ flags: ['stft'], batch: 3, fs: 9, detrend: false, nCycles: 2, label: 'l', q: 5, timeoutMs: 7 }),
    ).toMatchObject({ batch: 3, fs: 9, detrend: false, nCycles: 2, label: 'l', q: 5, timeoutMs: 7 });
  });
});
