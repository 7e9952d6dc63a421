import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_RESULT_BYTES } from '../../../src/engine/capacity.js';
import { EngineCore } from '../../../src/engine/engine-core.js';
import { ResultTooLargeError } from '../../../src/engine/errors.js';
import { ResultTooLargeError as QueueResultTooLargeError } from '../../../src/queue/errors.js';
import type { JobSpec } from '../../../src/engine/types.js';
import { FakeLane } from './fake-lane.js';

const rand = (n: number): Float32Array => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

describe('EngineCore: maxResultBytes bounds the result memory a job makes the engine allocate', () => {
  it('refuses by default a small request whose wavelet result would take 7.8 GiB, before anything is queued', () => {
    const lane = new FakeLane();
    const e = new EngineCore({ runners: [lane], label: 'test' });
    // 4 MiB of samples, 2000 frequencies: B x freqs x N float32 = 1024 * 2000 * 1024 * 4 bytes.
    const spec: JobSpec = {
      data: rand(1024 * 1024),
      batch: 1024,
      fs: 1000,
      flags: ['wavelet'],
      freqs: Array.from({ length: 2000 }, (_, i) => 1 + i * 0.2),
    };
    let caught: unknown;
    try {
      e.submit(spec);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ResultTooLargeError);
    expect((caught as ResultTooLargeError).bytes).toBe(1024 * 2000 * 1024 * 4);
    expect((caught as ResultTooLargeError).limit).toBe(DEFAULT_MAX_RESULT_BYTES);
    expect((caught as Error).message).toMatch(
      /^result: 8388608000 bytes \(estimated at submit\) exceed maxResultBytes = 1073741824; ask for fewer results/,
    );
    expect(e.stats()).toMatchObject({ queued: 0, running: 0 });
    expect(lane.runs).toHaveLength(0);
    // One class, whichever entry point a user catches it from.
    expect(caught).toBeInstanceOf(QueueResultTooLargeError);
  });

  it('counts only the arrays the engine allocates: those lent in `into` are the caller’s', async () => {
    const e = new EngineCore({ runners: [new FakeLane()], maxResultBytes: 1000, label: 'test' });
    const data = rand(256);
    const base: JobSpec = { data, batch: 2, fs: 100, flags: ['stft'], previewBins: 8 };
    // filtered 256 f32 (1024 B) + spectrum 16 f32 (64 B) = 1088 B > 1000.
    expect(() => e.submit(base)).toThrow(/result: 1088 bytes \(estimated at submit\) exceed maxResultBytes = 1000/);
    const filtered = new Float32Array(256);
    const job = e.submit({ ...base, into: { filtered } });
    const result = await job.result;
    expect(result.filtered).toBe(filtered);
    expect(e.validate({ ...base, previewBins: 4, data: rand(128), batch: 1 }).previewBins).toBe(4);
  });

  it('refuses a maxResultBytes that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => new EngineCore({ runners: [new FakeLane()], maxResultBytes: bad })).toThrow(
        /maxResultBytes must be a positive integer/,
      );
  });
});

describe('JobEngine checks its core options before it makes any lane', () => {
  it('a bad maxQueued or maxResultBytes is named, not hidden behind the driver or device check', async () => {
    const { JobEngine } = await import('../../../src/engine/job-engine.js');
    expect(() => new JobEngine({ maxQueued: -1 })).toThrow(/^maxQueued must be a positive integer, got -1$/);
    expect(() => new JobEngine({ maxResultBytes: Number.NaN })).toThrow(
      /^maxResultBytes must be a positive integer, got NaN$/,
    );
    expect(() => new JobEngine({ precision: 'f16' as never })).toThrow(/^precision must be 'f32' or 'f64'/);
    // A misspelt option is named (it meant its default: lanes 4).
    expect(() => new JobEngine({ lane: 8 } as never)).toThrow(
      /^JobEngine options\.lane: unknown option \(known: device, devices, context, lanes, /,
    );
  });
});
