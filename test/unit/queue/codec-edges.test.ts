// The queue's wire format at its edges, with byte layouts written out by hand: the padding after
// each array and after the last (to 8 bytes), exactly which keys become scalars, each type an array
// may travel as (and each it may not, on packing and on unpacking), and views that share memory.
import { describe, expect, it } from 'vitest';
import type { JobResult } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import {
  dtypeOf,
  joinPieces,
  layoutViews,
  packResult,
  resultLayout,
  samplesFromBuffer,
  samplesToBuffer,
  unpackResult,
  wireBytes,
  type WireArray,
  type WireDtype,
} from '../../../src/queue/codec.js';

const base = (): JobResult => ({
  id: 7,
  lane: 1,
  device: 0,
  batch: 1,
  length: 8,
  fs: 2,
  timings: { queuedMs: 1, runMs: 2, gpuMs: 3 },
});

describe('packResult layout', { timeout: 5_000 }, () => {
  it('pads between arrays and after the last one to 8 bytes, with zeros', () => {
    const spectrum = Float32Array.of(1, 2, 3); // 12 bytes
    const bandPowers = Float64Array.of(4); // at 16
    const waveletPower = Float32Array.of(5); // at 24, 4 bytes, padded to 32
    const packed = packResult({ ...base(), spectrum, bandPowers, waveletPower });
    expect(packed.arrays).toEqual([
      { field: 'spectrum', dtype: 'f32', length: 3, offset: 0 },
      { field: 'bandPowers', dtype: 'f64', length: 1, offset: 16 },
      { field: 'waveletPower', dtype: 'f32', length: 1, offset: 24 },
    ]);
    expect(packed.bytes).toBe(32);
    expect(packed.pieces.map((p) => p.byteLength)).toEqual([12, 4, 8, 4, 4]);
    const bytes = joinPieces(packed.pieces);
    expect(bytes.byteLength).toBe(32);
    expect([...bytes.subarray(12, 16), ...bytes.subarray(28, 32)]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(bytes.readFloatLE(8)).toBe(3);
    expect(bytes.readDoubleLE(16)).toBe(4);
    expect(bytes.readFloatLE(24)).toBe(5);
  });

  it('adds no padding where the arrays end on 8 bytes', () => {
    const packed = packResult({ ...base(), filtered: Float32Array.of(1, 2), spectrum: Float64Array.of(3) });
    expect(packed.bytes).toBe(16);
    expect(packed.pieces.map((p) => p.byteLength)).toEqual([8, 8]);
    expect(packed.arrays.map((a) => a.offset)).toEqual([0, 8]);
  });

  it('packs the arrays as views of their own memory, in the binary order of the fields', () => {
    const buffer = new Float32Array(6);
    const filtered = buffer.subarray(2, 4);
    const packed = packResult({ ...base(), waveletPower: Float32Array.of(9, 9), filtered });
    expect(packed.arrays.map((a) => a.field)).toEqual(['filtered', 'waveletPower']);
    filtered[0] = 42;
    expect(new Float32Array(packed.pieces[0]!.buffer, packed.pieces[0]!.byteOffset, 2)[0]).toBe(42);
  });

  it('keeps as scalars exactly the defined fields that are not arrays', () => {
    const packed = packResult({
      ...base(),
      spectrum: Float32Array.of(1, 2),
      dominant: undefined,
      frames: 3,
      stages: { s: 1 },
    });
    expect(packed.scalars).toEqual({ ...base(), frames: 3, stages: { s: 1 } });
    expect(Object.keys(packed.scalars).sort()).toEqual([
      'batch',
      'device',
      'frames',
      'fs',
      'id',
      'lane',
      'length',
      'stages',
      'timings',
    ]);
  });

  it.each([
    ['bandPowers', Float32Array.of(1), 'result.bandPowers must be a Float64Array, got a Float32Array'],
    [
      'filtered',
      Int16Array.of(1),
      'result.filtered must be a Float32Array or Float64Array or Uint16Array, got a Int16Array',
    ],
    ['bandWaves', [1, 2], 'result.bandWaves must be a Float32Array or Float64Array or Uint16Array, got a plain array'],
    ['spectrum', Uint16Array.of(1), 'result.spectrum must be a Float32Array or Float64Array, got a Uint16Array'],
    ['waveletPower', 3, 'result.waveletPower must be a Float32Array or Float64Array, got number'],
  ] as const)('refuses %s as %o', (field, value, message) => {
    expect(() => packResult({ ...base(), [field]: value } as unknown as JobResult)).toThrow(new TypeError(message));
  });

  it.each([
    ['filtered', Uint16Array.of(1, 2)],
    ['bandWaves', Uint16Array.of(3)],
    ['filtered', Float64Array.of(1)],
    ['spectrum', Float64Array.of(1)],
  ] as const)('takes %s as %o', (field, value) => {
    const packed = packResult({ ...base(), [field]: value });
    const back = unpackResult(packed.scalars, packed.arrays, joinPieces(packed.pieces));
    expect(back[field]).toEqual(value);
  });
});

describe('unpackResult guards', { timeout: 5_000 }, () => {
  const bytes = Buffer.alloc(64);
  const one = (field: WireArray['field'], dtype: WireDtype): WireArray[] => [{ field, dtype, length: 2, offset: 0 }];

  it.each([
    ['bandPowers', 'f32', 'result: bandPowers must be f64'],
    ['filtered', 'i16', 'result: filtered cannot be i16'],
    ['spectrum', 'i16', 'result: spectrum cannot be i16'],
    ['spectrum', 'u16', 'result: spectrum cannot be 16-bit'],
    ['waveletPower', 'u16', 'result: waveletPower cannot be 16-bit'],
  ] as const)('refuses %s stored as %s', (field, dtype, message) => {
    expect(() => unpackResult(base(), one(field, dtype), bytes)).toThrow(new Error(message));
  });

  it('names an unknown stored element type (a newer writer, a corrupted record) instead of failing inside', () => {
    expect(() => unpackResult(base(), one('spectrum', 'x8' as WireDtype), bytes)).toThrow(
      new Error('stored array: unknown element type "x8"'),
    );
    expect(() => unpackResult(base(), one('spectrum', 'constructor' as WireDtype), bytes)).toThrow(
      /unknown element type "constructor"/,
    );
    expect(() => samplesFromBuffer(bytes, 'toString' as WireDtype, 8)).toThrow(/unknown element type "toString"/);
  });

  it('reads an array that ends exactly at the end of the buffer; one byte short is refused', () => {
    const arrays: WireArray[] = [{ field: 'spectrum', dtype: 'f64', length: 2, offset: 8 }];
    expect(unpackResult(base(), arrays, Buffer.alloc(24)).spectrum).toEqual(new Float64Array(2));
    expect(() => unpackResult(base(), arrays, Buffer.alloc(23))).toThrow(
      new Error('result: array spectrum ends at byte 24, the stored result has 23'),
    );
  });

  it('returns a view of an array at an aligned offset past the start', () => {
    const bytes = Buffer.alloc(24);
    const view = unpackResult(base(), [{ field: 'spectrum', dtype: 'f64', length: 2, offset: 8 }], bytes).spectrum!;
    bytes.writeDoubleLE(7, 16);
    expect(view[1]).toBe(7);
  });

  it('returns views of an aligned buffer and copies of a misaligned one', () => {
    const aligned = Buffer.alloc(16);
    const view = unpackResult(
      base(),
      [{ field: 'bandPowers', dtype: 'f64', length: 2, offset: 0 }],
      aligned,
    ).bandPowers!;
    aligned.writeDoubleLE(6, 8);
    expect(view[1]).toBe(6);
    const misaligned = Buffer.alloc(17).subarray(1);
    misaligned.writeDoubleLE(5, 8);
    const copy = unpackResult(
      base(),
      [{ field: 'bandPowers', dtype: 'f64', length: 2, offset: 0 }],
      misaligned,
    ).bandPowers!;
    expect(copy[1]).toBe(5);
    misaligned.writeDoubleLE(6, 8);
    expect(copy[1]).toBe(5);
  });
});

describe('samples and sizes', { timeout: 5_000 }, () => {
  it('dtypeOf and wireBytes name each element type and its size', () => {
    expect([new Float32Array(1), new Float64Array(1), new Int16Array(1), new Uint16Array(1)].map(dtypeOf)).toEqual([
      'f32',
      'f64',
      'i16',
      'u16',
    ]);
    expect((['f32', 'f64', 'i16', 'u16'] as const).map((d) => wireBytes(d, 3))).toEqual([12, 24, 6, 6]);
    expect(wireBytes('x8' as WireDtype, 3)).toBe(0);
  });

  it('samplesToBuffer is a view of exactly the samples, not of the whole buffer', () => {
    const whole = Float32Array.of(1, 2, 3, 4);
    const bytes = samplesToBuffer(whole.subarray(1, 3));
    expect(bytes.byteLength).toBe(8);
    whole[1] = 7;
    expect(bytes.readFloatLE(0)).toBe(7);
  });

  it('samplesFromBuffer reads 16-bit samples and names a size mismatch by bytes', () => {
    const bytes = Buffer.from(Int16Array.of(-3, 4).buffer);
    expect(samplesFromBuffer(bytes, 'i16', 2)).toEqual(Int16Array.of(-3, 4));
    expect(() => samplesFromBuffer(bytes, 'i16', 3)).toThrow(
      new Error('input: 4 bytes stored, expected 3 i16 samples (6 bytes)'),
    );
  });
});

describe('resultLayout and layoutViews', { timeout: 5_000 }, () => {
  it('lays out a job as packResult packs its result, each slot on 8 bytes', () => {
    const job = validateJob(
      { data: new Float32Array(2 * 9), batch: 2, flags: ['stft', 'cycles'], bands: [[0.1, 0.2]], previewBins: 3 },
      { stages: new Set() },
    );
    const { slots, bytes } = resultLayout(job, 'f32');
    // filtered 18 f32 (72 B), spectrum 6 f32 (24 B), bandPowers 2 f64 (16 B), bandWaves 18 f32 (72 B).
    expect(slots).toEqual([
      { field: 'filtered', dtype: 'f32', length: 18, offset: 0 },
      { field: 'spectrum', dtype: 'f32', length: 6, offset: 72 },
      { field: 'bandPowers', dtype: 'f64', length: 2, offset: 96 },
      { field: 'bandWaves', dtype: 'f32', length: 18, offset: 112 },
    ]);
    expect(bytes).toBe(184);
    const odd = resultLayout(
      validateJob({ data: new Float32Array(5), flags: ['stft'], previewBins: 1 }, { stages: new Set() }),
      'f32',
    );
    expect(odd).toEqual({
      slots: [
        { field: 'filtered', dtype: 'f32', length: 5, offset: 0 },
        { field: 'spectrum', dtype: 'f32', length: 1, offset: 24 },
      ],
      bytes: 32,
    });
  });

  it('layoutViews gives typed views of the slots in the one buffer', () => {
    const buffer = Buffer.alloc(40);
    const views = layoutViews(buffer, [
      { field: 'filtered', dtype: 'u16', length: 3, offset: 0 },
      { field: 'bandPowers', dtype: 'f64', length: 2, offset: 8 },
      { field: 'spectrum', dtype: 'f32', length: 4, offset: 24 },
    ]);
    expect(views.filtered).toBeInstanceOf(Uint16Array);
    expect([views.filtered!.length, views.bandPowers!.length, views.spectrum!.length]).toEqual([3, 2, 4]);
    views.bandPowers![1] = 2.5;
    expect(buffer.readDoubleLE(16)).toBe(2.5);
    views.spectrum![3] = 1.5;
    expect(buffer.readFloatLE(36)).toBe(1.5);
  });
});
