/** A worker's pooled memory without Redis: result arrays laid out as the result is packed, reused after release, pinned where the engine lends it. */
import { describe, expect, it } from 'vitest';
import { allocateOutputs } from '../../../src/engine/lane-runner.js';
import type { JobEngineLike, JobSpec } from '../../../src/engine/types.js';
import { validateJob } from '../../../src/engine/validate.js';
import { layoutViews, packResult, resultLayout } from '../../../src/queue/codec.js';
import { WorkerMemory } from '../../../src/queue/worker-memory.js';

const random = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

const specs: JobSpec[] = [
  { data: random(4 * 64), batch: 4, flags: ['stft'], previewBins: 5 },
  {
    data: random(3 * 64),
    batch: 3,
    flags: ['stft', 'cycles', 'wavelet'],
    bands: [[0.01, 0.1]],
    freqs: [0.05, 0.2, 0.3],
    previewBins: 7,
  },
  { data: random(2 * 64), batch: 2, flags: ['stft', 'cycles'], bands: [[0.01, 0.1]], outputDtype: 'f16' },
];

/** An engine as the worker sees it (only what WorkerMemory reads). */
const engineOf = (precision: 'f32' | 'f64', extra: Partial<JobEngineLike> = {}): JobEngineLike =>
  ({ precision, ...extra }) as JobEngineLike;

describe('worker memory', () => {
  it('lays a result out as packResult packs it: the engine writes into it, and the packed pieces are that memory, in order', () => {
    for (const precision of ['f32', 'f64'] as const)
      for (const spec of specs) {
        const job = validateJob(spec, { stages: new Set() });
        const layout = resultLayout(job, precision);
        const buffer = Buffer.alloc(layout.bytes);
        const outputs = allocateOutputs({ ...job, into: layoutViews(buffer, layout.slots) }, precision);
        const packed = packResult({
          id: 1,
          lane: 0,
          device: 0,
          batch: job.batch,
          length: job.length,
          fs: job.fs,
          ...outputs,
          timings: { queuedMs: 0, runMs: 0, gpuMs: 0 },
        });
        expect(packed.bytes).toBe(layout.bytes);
        expect(packed.arrays.map((a) => [a.field, a.offset, a.length, a.dtype])).toEqual(
          layout.slots.map((s) => [s.field, s.offset, s.length, s.dtype]),
        );
        // Every array piece is a view of the pooled memory at its offset: nothing is copied to send it.
        for (const piece of packed.pieces.filter((p) => p.byteLength > 0 && p.buffer === buffer.buffer))
          expect(piece.byteOffset % 8).toBe(0);
        expect(packed.pieces.filter((p) => p.buffer === buffer.buffer)).toHaveLength(layout.slots.length);
      }
  });

  it('hands out result arrays of the job in pooled memory, and reuses that memory once released', () => {
    const memory = new WorkerMemory(engineOf('f32'));
    const out = memory.outputs(specs[1]!)!;
    expect(out.into.filtered).toBeInstanceOf(Float32Array);
    expect(out.into.bandPowers).toBeInstanceOf(Float64Array);
    expect(out.into.waveletPower!.length).toBe(3 * 3 * 64);
    const backing = out.buffer.buffer;
    memory.release(out.buffer);
    expect(memory.outputs(specs[1]!)!.buffer.buffer).toBe(backing);
    const samples = memory.take(1000);
    expect(samples.byteLength).toBe(1000);
    memory.release(samples);
    expect(memory.take(900).buffer).toBe(samples.buffer);
    // A job that does not validate here gets no pooled arrays: the engine says what is wrong with it.
    expect(memory.outputs({ data: random(64), flags: ['stft'], previewBins: -1 })).toBeUndefined();
    // Buffers the pool did not hand out are ignored.
    memory.release(Buffer.alloc(64));
    memory.release(null);
  });

  it("takes its memory from the engine's pinned arrays when it lends them", () => {
    const lent: Float32Array[] = [];
    const engine = engineOf('f32', {
      hostBuffer: ((dtype: string, length: number) => {
        expect(dtype).toBe('f32');
        const a = new Float32Array(length);
        lent.push(a);
        return a;
      }) as JobEngineLike['hostBuffer'],
      releaseHostBuffer: () => true,
    });
    const memory = new WorkerMemory(engine);
    const samples = memory.take(4096);
    expect(lent).toHaveLength(1);
    expect(samples.buffer).toBe(lent[0]!.buffer);
  });
});
