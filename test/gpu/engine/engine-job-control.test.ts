import { describe, expect, it } from 'vitest';
import {
  EngineClosedError,
  EngineFullError,
  JobCancelledError,
  JobEngine,
  JobError,
  JobValidationError,
} from '../../../src/engine/index.js';
import { loadBasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';
import { engineFactory } from './engines.js';
import { testSeries } from './reference.js';
import { skip, referenceOf, expectMatches } from './engine-fixture.js';

const engine = engineFactory('test');

describe.skipIf(!gpu.available)(`JobEngine on the GPU: refusals, timeouts, cancellation, close${skip}`, () => {
  it('a bad job is refused at submit; a stage that throws fails only its own job', async () => {
    const e = engine({ lanes: 2 });
    e.registerStage('broken', {
      after: 'fft',
      run() {
        throw new Error('stage bug');
      },
    });
    const data = testSeries(2, 512, 10) as Float32Array;
    expect(() => e.submit({ data, batch: 3, flags: ['stft'] })).toThrow(JobValidationError);
    expect(() => e.submit({ data, batch: 2, flags: ['stft'], bands: [[0, 0.7]] })).toThrow(/bands\[0\]\[1\]/);
    expect(e.stats()).toMatchObject({ queued: 0, running: 0 });
    const bad = e.submit({ data, batch: 2, flags: ['stft', 'broken'] });
    const good = e.submit({ data, batch: 2, flags: ['stft'] });
    const error = await bad.result.catch((x: unknown) => x);
    expect(error).toBeInstanceOf(JobError);
    expect(error).toMatchObject({ jobId: bad.id, stage: 'broken', sticky: false });
    expect((error as JobError).message).toMatch(/stage bug/);
    expect((await good.result).filtered).toHaveLength(1024);
    // The lane that failed is healthy: later jobs on every lane run.
    const after = await Promise.all(
      [0, 1, 2, 3].map(() => e.submit({ data, batch: 2, flags: ['cycles'], bands: [[0, 0.2]] }).result),
    );
    expect(new Set(after.map((r) => r.lane)).size).toBe(2);
  });

  it('timeoutMs, cancel() and AbortSignal with real jobs: a running job times out, queued ones cancel, the lane goes on', async () => {
    const kernels = loadBasicKernels();
    const e = engine({ lanes: 1 });
    try {
      e.registerStage('slow', {
        after: 'fft',
        run: (ctx) => kernels.spin_ns({ grid: 1, block: 1, stream: ctx.stream }, 300_000_000n),
      });
      const data = testSeries(2, 2048, 40) as Float32Array;
      const slow = e.submit({ data, batch: 2, flags: ['stft', 'slow'], timeoutMs: 50 });
      const cancelled = e.submit({ data, batch: 2, flags: ['stft'] });
      const ac = new AbortController();
      const aborted = e.submit({ data, batch: 2, flags: ['stft'], signal: ac.signal });
      const later = e.submit({ data, batch: 2, flags: ['stft'] });
      expect(slow.status).toBe('running');
      expect(cancelled.cancel()).toBe(true);
      ac.abort();
      await expect(slow.result).rejects.toThrow(/did not finish within 50 ms \(it was running\)/);
      await expect(cancelled.result).rejects.toBeInstanceOf(JobCancelledError);
      await expect(aborted.result).rejects.toBeInstanceOf(JobCancelledError);
      expect(aborted.status).toBe('cancelled');
      const r = await later.result;
      expect(r.timings.queuedMs).toBeGreaterThan(250); // it waited for the slow job's GPU work
      expectMatches(r, referenceOf({ data, batch: 2, flags: ['stft'] }), 5e-5, 'after a timeout');
      expect(e.stats()).toMatchObject({ jobs: 1, errors: 1 });
    } finally {
      await e.idle();
      kernels.module.dispose();
    }
  });

  it('backpressure and close() draining with real jobs', async () => {
    const e = new JobEngine({ lanes: 2, maxQueued: 3, label: 'drain' });
    const data = testSeries(8, 1 << 16, 1000) as Float32Array;
    const accepted = [];
    let full: unknown;
    for (let i = 0; i < 20 && !full; i++) {
      try {
        accepted.push(e.submit({ data, batch: 8, fs: 65536, flags: ['stft', 'cycles'], bands: [[0, 1000]] }));
      } catch (x) {
        full = x;
      }
    }
    expect(full).toBeInstanceOf(EngineFullError);
    expect(accepted.length).toBeGreaterThanOrEqual(5); // 2 running + 3 queued
    const waited = await e.submit({ data, batch: 8, fs: 65536, flags: ['stft'] }, { wait: true });
    accepted.push(waited);
    const closing = e.close();
    expect(() => e.submit({ data, batch: 8, flags: ['stft'] })).toThrow(EngineClosedError);
    await closing;
    for (const j of accepted) expect(j.status).toBe('ready');
    const results = await Promise.all(accepted.map((j) => j.result));
    expect(results.every((r) => r.filtered!.length === data.length)).toBe(true);
  });
});
