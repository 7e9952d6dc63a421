// The whole-series flow's buffers are one list: what a lane allocates for a chunk (a recording
// stand-in for its BufferCache, no GPU), what it counts per series to size chunks, and what it
// copies back all come from it. Checked here for jobs of every flag, with and without a filter.
import { describe, expect, it } from 'vitest';
import { resultArrays } from '../../../src/engine/result-arrays.js';
import {
  fetchedBuffers,
  seriesBuffers,
  seriesBytesPerRow,
  SERIES_BUFFERS,
} from '../../../src/engine/series-buffers.js';
import type { LaneResources } from '../../../src/engine/lane-resources.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import { dtypeInfo, type DType } from '../../../src/runtime/memory/dtype.js';

interface Allocation {
  purpose: string;
  dtype: DType;
  length: number;
  slot: number | undefined;
}

/** A lane whose BufferCache records each device buffer asked for and hands back a stand-in of that size. */
function recordingLane(precision: 'f32' | 'f64'): { lane: LaneResources; made: Allocation[] } {
  const made: Allocation[] = [];
  const buffers = {
    device(purpose: string, dtype: DType, length: number, options?: { slot: number }) {
      made.push({ purpose, dtype, length, slot: options?.slot });
      return { purpose, dtype, length };
    },
  };
  const lane = { buffers, real: precision, complex: precision === 'f32' ? 'c64' : 'c128' } as unknown as LaneResources;
  return { lane, made };
}

const data = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.sin(i / 5) + Math.random());
const job = (extra: Partial<JobSpec>) =>
  validateJob(
    {
      data: data(4 * 500),
      batch: 4,
      fs: 1000,
      flags: ['stft', 'cycles', 'wavelet', 'envelope', 'decimate'],
      bands: [
        [10, 50],
        [50, 200],
      ],
      freqs: [20, 80],
      q: 3,
      ...extra,
    },
    { stages: new Set() },
  );

describe('the series buffer list', { timeout: 10_000 }, () => {
  for (const precision of ['f32', 'f64'] as const)
    for (const filter of [undefined, { btype: 'lowpass', cutoff: 100, zeroPhase: true }] as const)
      it(`${precision}, ${filter ? 'a zero-phase filter' : 'no filter'}: allocated bytes are the bytes counted, less the signal layer's scratch`, () => {
        const j = job(filter ? { filter } : {});
        const needs = { inverse: true, precision };
        const rows = 3;
        const { lane, made } = recordingLane(precision);
        seriesBuffers(lane, j, rows, 1, needs);
        // The non-finite index cell is one per chunk (non-finite-check.ts), not per series: apart.
        const cell = made.filter((a) => a.purpose === 'non-finite');
        expect(cell).toEqual([{ purpose: 'non-finite', dtype: 'u64', length: 1, slot: 1 }]);
        const allocated = made
          .filter((a) => a.purpose !== 'non-finite')
          .reduce((sum, a) => sum + a.length * dtypeInfo(a.dtype).bytes, 0);
        const scratchRows = SERIES_BUFFERS.filter((row) => 'scratch' in row && row.scratch);
        expect(scratchRows.map((r) => r.name)).toEqual(['filterScratch', 'waveletScratch', 'envelopeScratch']);
        // The counted bytes per series, times the rows, are the allocations plus the scratch rows' bytes.
        const total = seriesBytesPerRow(j, needs) * rows;
        expect(total).toBeGreaterThan(allocated);
        const withoutScratch = seriesBytesPerRow(j, needs) - scratchBytes(j, needs);
        expect(withoutScratch * rows).toBe(allocated);
        // The input, the prefiltered copy only with a filter, and every output of the slot.
        expect(made.some((a) => a.purpose === 'filtered input')).toBe(filter !== undefined);
        for (const purpose of [
          'input',
          'preview',
          'powers',
          'dominant',
          'band waves',
          'wavelet power',
          'envelope',
          'decimated',
        ])
          expect(made.find((a) => a.purpose === purpose)?.slot, purpose).toBe(1);
      });

  it('copies back exactly the result arrays the job returns, each of its length', () => {
    for (const outputDtype of [undefined, 'f16'] as const) {
      const j = job(outputDtype ? { outputDtype } : {});
      const needs = { inverse: true, precision: 'f32' as const };
      const { lane } = recordingLane('f32');
      const rows = j.batch;
      const b = seriesBuffers(lane, j, rows, 0, needs);
      const fetched = fetchedBuffers(j, b, needs).map((f) => ({ field: f.row.output, length: rows * f.perSeries }));
      expect(fetched).toEqual(resultArrays(j, 'f32').map(({ field, length }) => ({ field, length })));
    }
  });
});

/** Bytes per series of the list's scratch rows (what the signal layer allocates itself). */
function scratchBytes(j: ReturnType<typeof job>, needs: { inverse: boolean; precision: 'f32' | 'f64' }): number {
  const el = needs.precision === 'f32' ? 4 : 8;
  let bytes = 0;
  for (const row of SERIES_BUFFERS) {
    if (!('scratch' in row)) continue;
    const count = (row.perSeries as (job: unknown, needs: unknown) => number)(j, needs);
    bytes += count * (row.element === 'u8' ? 1 : row.element === 'f64' ? 8 : row.element === 'complex' ? 2 * el : el);
  }
  return bytes;
}
