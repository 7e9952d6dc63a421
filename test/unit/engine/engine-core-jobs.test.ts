import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../src/engine/engine-core.js';
import { JobValidationError } from '../../../src/engine/errors.js';
import { FakeLane, tick } from './fake-lane.js';
import { rand, spec, engine } from './engine-core-fixture.js';

describe('EngineCore: submit, state machine, results', () => {
  it('queued -> running -> ready with results written by the lane, timings and stats', async () => {
    const lane = new FakeLane();
    lane.hold = true;
    const e = engine([lane]);
    const data = rand(64);
    const job = e.submit({
      data,
      batch: 2,
      fs: 10,
      flags: ['stft', 'cycles', 'supdem'],
      bands: [
        [0, 1],
        [1, 2],
      ],
      label: 'first',
    });
    expect(job.id).toBe(1);
    expect(job.label).toBe('first');
    expect(job.status).toBe('running'); // an idle lane takes it at once
    const second = e.submit(spec());
    expect(second.status).toBe('queued');
    expect(e.stats()).toMatchObject({ queued: 1, running: 1 });
    await tick();
    lane.release();
    const r = await job.result;
    expect(job.status).toBe('ready');
    expect(r).toMatchObject({ id: 1, lane: 0, device: 0, batch: 2, length: 32, fs: 10 });
    expect(Array.from(r.filtered!)).toEqual(Array.from(data, (v) => Math.fround(2 * v)));
    expect(r.spectrum).toHaveLength(2 * 17);
    expect(r.bandPowers).toBeInstanceOf(Float64Array);
    expect(r.dominant).toHaveLength(2);
    expect(r.stages).toEqual({ supdem: { rows: 2, rowStart: 0 } });
    expect(r.timings.gpuMs).toBe(1);
    expect(r.timings.runMs).toBeGreaterThanOrEqual(0);
    await tick();
    expect(second.status).toBe('running');
    lane.release();
    await second.result;
    const s = e.stats();
    expect(s).toMatchObject({ jobs: 2, errors: 0, queued: 0, running: 0, bytesMoved: 2 * 64 * 8 });
    expect(s.lanes[0]!.jobs).toBe(2);
    await e.close();
    expect(lane.disposed).toBe(true);
  });

  it('writes into caller-provided arrays (into) and leaves out band waves when asked', async () => {
    const e = engine([new FakeLane()]);
    const filtered = new Float32Array(64);
    const r = await e.submit({
      data: rand(64),
      batch: 2,
      flags: ['stft', 'cycles'],
      bands: [[0, 0.1]],
      bandWaves: false,
      into: { filtered },
    }).result;
    expect(r.filtered).toBe(filtered);
    expect(filtered.some((v) => v !== 0)).toBe(true);
    expect(r.bandWaves).toBeUndefined();
    expect(r.bandPowers).toHaveLength(2);
    expect(() =>
      e.submit({ data: rand(64), batch: 2, flags: ['stft'], into: { filtered: new Float64Array(64) } }),
    ).toThrow(/into.filtered/);
  });

  it('refuses a bad job at submit and queues nothing', () => {
    const lane = new FakeLane();
    const e = engine([lane]);
    expect(() => e.submit(spec({ flags: ['nope'] }))).toThrow(JobValidationError);
    expect(() => e.submit(spec({ batch: 3 }))).toThrow(/batch/);
    expect(e.stats()).toMatchObject({ queued: 0, running: 0 });
    expect(lane.runs).toHaveLength(0);
  });

  it('refuses a series longer than a lane can hold', () => {
    const e = engine([new FakeLane(0, 100)]);
    expect(() => e.submit({ data: rand(128), flags: ['stft'] })).toThrow(/does not fit in a lane/);
  });

  it('a job bigger than the lane capacity runs in row chunks whose stitched results equal the one-shot ones', async () => {
    const data = rand(7 * 50);
    const oneShot = await engine([new FakeLane()]).submit({
      data,
      batch: 7,
      flags: ['stft', 'cycles', 'supdem'],
      bands: [[0, 0.2]],
    }).result;
    const small = new FakeLane(0, 2 * 50 + 10); // 2 rows per chunk
    const chunked = await engine([small]).submit({
      data,
      batch: 7,
      flags: ['stft', 'cycles', 'supdem'],
      bands: [[0, 0.2]],
    }).result;
    expect(small.runs.map(([, start, rows]) => [start, rows])).toEqual([
      [0, 2],
      [2, 2],
      [4, 2],
      [6, 1],
    ]);
    expect(chunked.filtered).toEqual(oneShot.filtered);
    expect(chunked.spectrum).toEqual(oneShot.spectrum);
    expect(chunked.bandPowers).toEqual(oneShot.bandPowers);
    expect(chunked.dominant).toEqual(oneShot.dominant);
    expect(chunked.stages!.supdem).toEqual([
      { rows: 2, rowStart: 0 },
      { rows: 2, rowStart: 2 },
      { rows: 2, rowStart: 4 },
      { rows: 1, rowStart: 6 },
    ]);
  });
});

describe('EngineCore: framed stft (nperseg) streams one long series in chunks of whole frames', () => {
  it('the stitched result equals the one-shot result for several framings and chunk sizes', async () => {
    for (const [n, nperseg, noverlap] of [
      [1000, 64, 32],
      [777, 50, 37],
      [513, 16, 0],
    ] as const) {
      const data = rand(2 * n);
      const spec = { data, batch: 2, flags: ['stft'], nperseg, noverlap, window: 'boxcar', previewBins: 3 };
      const one = await engine([new FakeLane()]).submit(spec).result;
      expect(one.frames).toBeGreaterThan(1);
      expect(one.filtered!.every((v) => Number.isFinite(v))).toBe(true);
      for (const framesPerChunk of [Math.ceil(nperseg / (nperseg - noverlap)), 7, 20]) {
        const lane = new FakeLane(0, 2 * nperseg * framesPerChunk);
        const chunked = await engine([lane]).submit(spec).result;
        expect(lane.runs.length).toBeGreaterThan(1);
        let worst = 0;
        for (let i = 0; i < one.filtered!.length; i++)
          worst = Math.max(worst, Math.abs(chunked.filtered![i]! - one.filtered![i]!));
        expect(
          worst,
          `N ${n}, nperseg ${nperseg}, noverlap ${noverlap}, ${framesPerChunk} frames per chunk`,
        ).toBeLessThan(1e-5);
        expect(chunked.spectrum).toEqual(one.spectrum);
        expect(chunked.frames).toBe(one.frames);
      }
    }
  });

  it('refuses a framed job when a lane cannot hold the frames covering one sample', () => {
    const e = engine([new FakeLane(0, 2 * 64 * 1)]);
    expect(() => e.submit({ data: rand(2000), batch: 2, flags: ['stft'], nperseg: 64, window: 'boxcar' })).toThrow(
      /need 2 frames per chunk, a lane holds 1/,
    );
  });
});
