import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../../src/engine/errors.js';
import { allocateOutputs } from '../../../src/engine/lane-runner.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { checkInto, validateJob } from '../../../src/engine/validate.js';

const ctx = { stages: new Set(['supdem']) };
const i16 = (n: number): Int16Array =>
  Int16Array.from({ length: n }, () => Math.round((Math.random() * 2 - 1) * 32767));
const bits = (n: number): Uint16Array => Uint16Array.from({ length: n }, () => Math.floor(Math.random() * 0x7c00));

function refusal(spec: unknown, field: string): JobValidationError {
  let error: unknown;
  try {
    validateJob(spec as JobSpec, ctx);
  } catch (e) {
    error = e;
  }
  expect(error, `expected ${field} to be refused`).toBeInstanceOf(JobValidationError);
  expect((error as JobValidationError).field).toBe(field);
  return error as JobValidationError;
}

describe('16-bit job data (dtype, scale, outputDtype)', () => {
  it('reads an Int16Array as i16 with the audio scale 1/32768 by default', () => {
    const job = validateJob({ data: i16(64), batch: 2, flags: ['stft'] }, ctx);
    expect(job.dtype).toBe('i16');
    expect(job.scale).toBe(1 / 32768);
    expect(job.length).toBe(32);
    expect(job.outputDtype).toBeUndefined();
    expect(validateJob({ data: i16(64), flags: ['stft'], scale: 0.5, dtype: 'i16' }, ctx).scale).toBe(0.5);
  });

  it('reads a Uint16Array as the f16 or bf16 bits dtype names, scale 1 by default', () => {
    for (const dtype of ['f16', 'bf16'] as const) {
      const data = bits(32);
      const job = validateJob({ data, dtype, flags: ['stft', 'cycles'], bands: [[0.1, 0.2]] }, ctx);
      expect(job.dtype).toBe(dtype);
      expect(job.scale).toBe(1);
      expect(job.data).toBe(data);
    }
  });

  it('f32 and f64 data keep scale 1 and may name their own dtype', () => {
    const job = validateJob({ data: new Float32Array(32).fill(1.5), dtype: 'f32', flags: ['stft'] }, ctx);
    expect([job.dtype, job.scale]).toEqual(['f32', 1]);
    expect(validateJob({ data: new Float64Array(32).fill(2), flags: ['stft'] }, ctx).dtype).toBe('f64');
  });

  it('refuses a Uint16Array without f16/bf16, a dtype that contradicts the array, and unknown dtypes', () => {
    expect(refusal({ data: bits(32), flags: ['stft'] }, 'dtype').message).toMatch(
      /Uint16Array holds raw 16-bit float bits: name them with dtype 'f16' or 'bf16'/,
    );
    expect(refusal({ data: bits(32), dtype: 'i16', flags: ['stft'] }, 'dtype').message).toMatch(/got "i16"/);
    expect(refusal({ data: i16(32), dtype: 'f16', flags: ['stft'] }, 'dtype').message).toMatch(
      /is "f16" but data is an Int16Array \(i16\)/,
    );
    expect(refusal({ data: new Float32Array(32), dtype: 'f64', flags: ['stft'] }, 'dtype').message).toMatch(
      /Float32Array \(f32\)/,
    );
    expect(refusal({ data: i16(32), dtype: 'int16', flags: ['stft'] }, 'dtype').message).toMatch(
      /must be one of f32, f64, i16, f16, bf16, got "int16"/,
    );
    expect(refusal({ data: new Uint8Array(32), flags: ['stft'] }, 'data').message).toMatch(
      /Int16Array \(i16\).*got Uint8Array/,
    );
  });

  it('refuses a scale on float data, and a scale that is 0, infinite or not a number', () => {
    expect(refusal({ data: new Float32Array(32), scale: 2, flags: ['stft'] }, 'scale').message).toMatch(
      /applies to 16-bit data .* this data is f32/,
    );
    expect(refusal({ data: i16(32), scale: 0, flags: ['stft'] }, 'scale').message).toMatch(/must not be 0/);
    expect(refusal({ data: i16(32), scale: Infinity, flags: ['stft'] }, 'scale').message).toMatch(/finite number/);
    expect(refusal({ data: i16(32), scale: '1', flags: ['stft'] }, 'scale').message).toMatch(/finite number, got "1"/);
  });

  it('refuses wavelet and registered stages for 16-bit data (they read the f32/f64 series)', () => {
    expect(refusal({ data: i16(64), flags: ['wavelet'], freqs: [0.1] }, 'flags').message).toMatch(
      /i16 data takes the stft and cycles flags; wavelet need/,
    );
    expect(refusal({ data: bits(64), dtype: 'bf16', flags: ['stft', 'supdem'] }, 'flags').message).toMatch(
      /registered stages \(supdem\)/,
    );
  });

  it('takes outputDtype f16/bf16 (16-bit waves), f32/f64 only as the engine precision, never i16', () => {
    expect(validateJob({ data: i16(32), outputDtype: 'f16', flags: ['stft'] }, ctx).outputDtype).toBe('f16');
    expect(validateJob({ data: new Float32Array(32), outputDtype: 'bf16', flags: ['stft'] }, ctx).outputDtype).toBe(
      'bf16',
    );
    expect(refusal({ data: i16(32), outputDtype: 'i16', flags: ['stft'] }, 'outputDtype').message).toMatch(
      /i16 is an input type/,
    );
    expect(refusal({ data: i16(32), outputDtype: 'half', flags: ['stft'] }, 'outputDtype').message).toMatch(
      /got "half"/,
    );
    const f64 = validateJob({ data: i16(32), outputDtype: 'f64', flags: ['stft'] }, ctx);
    expect(f64.outputDtype).toBeUndefined();
    expect(() => checkInto(f64, 'f32')).toThrow(/outputDtype.*f64 is not this engine's precision \(f32\)/);
    expect(() => checkInto(f64, 'f64')).not.toThrow();
  });

  it('16-bit waves are Uint16Arrays: allocated so, and `into` must be one', () => {
    const job = validateJob(
      { data: i16(64), batch: 2, outputDtype: 'bf16', flags: ['stft', 'cycles'], bands: [[0.1, 0.2]] },
      ctx,
    );
    const out = allocateOutputs(job, 'f32');
    expect(out.filtered).toBeInstanceOf(Uint16Array);
    expect(out.filtered!.length).toBe(64);
    expect(out.bandWaves).toBeInstanceOf(Uint16Array);
    expect(out.spectrum).toBeInstanceOf(Float32Array);
    expect(out.bandPowers).toBeInstanceOf(Float64Array);
    const into = (filtered: unknown): ReturnType<typeof validateJob> =>
      validateJob(
        { data: i16(64), batch: 2, outputDtype: 'f16', flags: ['stft'], into: { filtered } } as unknown as JobSpec,
        ctx,
      );
    expect(() => checkInto(into(new Uint16Array(64)), 'f32')).not.toThrow();
    expect(() => checkInto(into(new Float32Array(64)), 'f32')).toThrow(
      /into.filtered: must be a Uint16Array \(outputDtype f16 bits\)/,
    );
    const plain = validateJob(
      { data: i16(64), batch: 2, flags: ['stft'], into: { filtered: new Uint16Array(64) } },
      ctx,
    );
    expect(() => checkInto(plain, 'f32')).toThrow(/into.filtered: must be a Float32Array/);
  });
});
