/**
 * A StageManager's own profiler stays bounded (issue 22): it keeps the stage runs of the
 * iterations stats() can still report (the latest statsWindow) and reuses the timing events of
 * older ones, instead of one record and two CUDA events per stage run forever.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { StageManager } from '../../../src/pipeline/stages/stage-manager.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { loadBasicKernels, type BasicKernels } from '../../kernels/launchers.generated.js';
import { gpu } from '../gpu-available.js';

describe.skipIf(!gpu.available)(`StageManager memory${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let k!: BasicKernels;
  beforeAll(() => {
    k = loadBasicKernels();
  });

  it('3,000 iterations keep the records of the latest statsWindow only, with a bounded number of timing events', async () => {
    const n = 256;
    using buf = DeviceBuffer.alloc('f32', n);
    const statsWindow = 200;
    using sm = new StageManager({ label: 'bounded', statsWindow });
    const b = sm.addBuffer(buf);
    sm.addStage({
      name: 'fill',
      outputs: [b],
      run: ({ stream, outputs, iteration }) =>
        k.fill_f32({ grid: 1, block: n, stream }, outputs[0] as DeviceBuffer<'f32'>, iteration, n),
    });
    sm.addStage({
      name: 'scale',
      inputs: [b],
      outputs: [b],
      run: ({ stream, outputs }) =>
        k.scale_f32(
          { grid: 1, block: n, stream },
          outputs[0] as DeviceBuffer<'f32'>,
          outputs[0] as DeviceBuffer<'f32'>,
          2,
          n,
        ),
    });
    const iterations = 3000;
    const stagesPer = 2;
    const bound = (statsWindow + 8) * stagesPer + 64;
    let peakRecords = 0;
    let peakEvents = 0;
    for (let i = 0; i < iterations; i += 8) {
      // Eight at a time in flight, as a pipelined caller would.
      await Promise.all(Array.from({ length: Math.min(8, iterations - i) }, () => sm.executeIteration()));
      peakRecords = Math.max(peakRecords, sm.profiler.operationCount);
      peakEvents = Math.max(peakEvents, sm.profiler.eventCount);
    }
    // Before issue 22: 6,000 records (one per stage run) and 12,001 events.
    expect(peakRecords).toBeLessThanOrEqual(bound);
    expect(peakEvents).toBeLessThanOrEqual(2 * bound + 1);
    const last = buf.read();
    for (let i = 0; i < n; i++) expect(last[i]).toBe(2 * (iterations - 1));

    // The iterations stats() reports still have every record.
    const stats = await sm.stats();
    expect(stats.iterations).toBe(statsWindow);
    const names = new Set((await sm.profiler.collect()).map((r) => r.name));
    for (let it = iterations - statsWindow; it < iterations; it++) {
      expect(names.has(`fill #${it}`), `fill #${it}`).toBe(true);
      expect(names.has(`scale #${it}`), `scale #${it}`).toBe(true);
    }
    expect(stats.avgIterationMs).toBeGreaterThan(0);
    expect(stats.spanMs).toBeGreaterThan(0);
  });
});
