/** The queue's wire format without Redis: results pack and unpack exactly (aligned or not), and the size estimate at submit is the packed size. */
import { describe, expect, it } from 'vitest';
import type { JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import {
  joinPieces,
  packResult,
  resultLayout,
  samplesFromBuffer,
  samplesToBuffer,
  unpackResult,
} from '../../../src/queue/codec.js';
import { fakeResult } from '../server/fake-engine.js';

const random = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

describe('queue codec', () => {
  it('packs and unpacks every result array exactly, from an aligned or a misaligned buffer', () => {
    const spec: JobSpec = {
      data: random(3 * 100),
      batch: 3,
      fs: 50,
      flags: ['stft', 'cycles', 'wavelet'],
      bands: [[1, 5]],
      freqs: [2, 3],
      previewBins: 7,
    };
    const result = fakeResult(spec, 9, 'f32');
    result.spectrum = random(3 * 7); // odd length: the next array starts after padding
    const packed = packResult(result);
    const joined = joinPieces(packed.pieces);
    expect(joined.byteLength).toBe(packed.bytes);
    for (const buffer of [joined, Buffer.concat([Buffer.alloc(3), joined]).subarray(3)]) {
      const back = unpackResult(packed.scalars, packed.arrays, buffer);
      for (const f of ['filtered', 'spectrum', 'bandPowers', 'waveletPower'] as const) {
        expect(back[f]!.constructor).toBe(result[f]!.constructor);
        expect(Array.from(back[f]!)).toEqual(Array.from(result[f]!));
      }
      expect(back.dominant).toEqual(result.dominant);
      expect(back.timings).toEqual(result.timings);
    }
    expect(packed.arrays.every((a) => a.offset % 8 === 0)).toBe(true);
    expect(() => unpackResult(packed.scalars, packed.arrays, joined.subarray(0, 8))).toThrow(/ends at byte/);
  });

  it('carries samples bit for bit, and names a size mismatch', () => {
    const data = random(1001);
    const buffer = samplesToBuffer(data);
    expect(Array.from(samplesFromBuffer(buffer, 'f32', 1001))).toEqual(Array.from(data));
    const odd = Buffer.concat([Buffer.alloc(1), buffer]).subarray(1);
    expect(Array.from(samplesFromBuffer(odd, 'f32', 1001))).toEqual(Array.from(data));
    expect(() => samplesFromBuffer(buffer, 'f64', 1001)).toThrow(/expected 1001 f64 samples/);
  });

  it('estimates at submit exactly the bytes the packed result takes', () => {
    const specs: JobSpec[] = [
      { data: random(4 * 64), batch: 4, flags: ['stft'], previewBins: 5 },
      {
        data: random(2 * 64),
        batch: 2,
        flags: ['cycles', 'wavelet'],
        bands: [
          [0.01, 0.1],
          [0.1, 0.3],
        ],
        freqs: [0.05, 0.2, 0.3],
      },
      { data: random(64), flags: ['wavelet'], bands: [[0.01, 0.2]], freqs: [0.1], waveletBands: true },
    ];
    for (const precision of ['f32', 'f64'] as const)
      for (const spec of specs) {
        const job = validateJob(spec, { stages: new Set() });
        const result = fakeResult(spec, 1, precision);
        if (spec.flags.includes('cycles'))
          result.bandWaves =
            precision === 'f32'
              ? random(job.batch * job.bands.length * job.length)
              : Float64Array.from(random(job.batch * job.bands.length * job.length));
        if (spec.flags.includes('stft'))
          result.spectrum =
            precision === 'f32' ? random(job.batch * job.previewBins) : new Float64Array(job.batch * job.previewBins);
        const packed = packResult(result);
        expect(joinPieces(packed.pieces).byteLength).toBe(packed.bytes);
        // What the client checks at submit is what the worker measures.
        expect(resultLayout(job, precision).bytes).toBe(packed.bytes);
      }
  });
});
