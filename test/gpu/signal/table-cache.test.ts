/**
 * The signal layer's tables stay within their byte bound (src/signal/table-cache.ts): windows of
 * many lengths through a workspace of a small bound; the tables used longest ago are freed, the
 * generation moves (graphs captured with them are captured again), and every table read back,
 * before and after being freed and built again, equals its float64 window.
 */
import { describe, expect, it } from 'vitest';
import { Device } from '../../../src/runtime/device.js';
import { Stream } from '../../../src/runtime/stream.js';
import { SignalWorkspace } from '../../../src/signal/workspace.js';
import { getWindow } from '../../../src/signal/window.js';
import { gpu } from '../gpu-available.js';

const skip = gpu.available ? '' : ` (skipped: ${gpu.reason})`;

describe.skipIf(!gpu.available)(`signal tables within their byte bound${skip}`, () => {
  it('frees the tables used longest ago past maxTableBytes, moves the generation, and rebuilds them right', async () => {
    const context = Device.get(0).context;
    using stream = new Stream({ label: 'tables' });
    const maxTableBytes = 4 * 2 ** 20;
    const ws = new SignalWorkspace({ maxTableBytes });
    try {
      const check = async (n: number): Promise<void> => {
        const table = ws.window(context, 'hann', n, 'f32', stream);
        await stream.done();
        const got = table.read();
        const want = getWindow('hann', n);
        let worst = 0;
        for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
        expect(worst, `window of ${n}`).toBeLessThan(1e-7);
      };
      // 24 windows of 64k+ points, 256 KiB each: 6 MiB asked for, 4 MiB kept.
      const lengths = Array.from({ length: 24 }, (_, i) => 65536 + 7 * i);
      const generation = ws.generation(stream);
      for (const n of lengths) await check(n);
      const tables = ws.tables(context);
      expect(tables.bytes).toBeLessThanOrEqual(maxTableBytes);
      expect(tables.evictions).toBeGreaterThanOrEqual(8);
      expect(ws.generation(stream)).toBeGreaterThan(generation);
      // The first lengths were freed: asked again, they are built again, right.
      const evictions = tables.evictions;
      for (const n of lengths.slice(0, 4)) await check(n);
      expect(tables.evictions).toBeGreaterThan(evictions);
      expect(tables.bytes).toBeLessThanOrEqual(maxTableBytes);
    } finally {
      ws.clear();
    }
    expect(() => new SignalWorkspace({ maxTableBytes: -1 })).toThrow(
      'SignalWorkspace maxTableBytes must be a positive integer, got -1',
    );
  }, 60_000);
});
