import { beforeAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Graph } from '../../../src/runtime/graph.js';
import type { Module } from '../../../src/runtime/module.js';
import { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { loadBasicModule, randomF32 } from '../helpers.js';

describe.skipIf(!gpu.available)(`CUDA graphs${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`, () => {
  let mod!: Module;
  beforeAll(() => {
    mod = loadBasicModule();
  });

  it('replays a captured region with the same results as eager execution, and updates kernel arguments', async () => {
    const saxpy = mod.kernel('saxpy_f32', ['i32', 'f32', 'ptr', 'ptr']);
    const scale = mod.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']);
    const n = 65_537;
    const x = randomF32(n);
    const y0 = randomF32(n);
    const a = Math.random() + 0.5;
    const b = Math.random() - 2;
    using s = new Stream();
    using dx = DeviceBuffer.from('f32', x);
    using dy = DeviceBuffer.from('f32', y0);
    using dz = DeviceBuffer.alloc('f32', n);
    const cfg = { grid: 256, block: 256, stream: s };
    const region = (): void => {
      saxpy.launch(cfg, n, a, dx, dy);
      scale.launch(cfg, dz, dy, b, n);
    };
    region();
    await s.done();
    const eager = dz.read();
    dy.write(y0);
    dz.memset(0xffffffff);
    using graph = Graph.capture(s, region);
    expect(dz.read().every((v) => Number.isNaN(v))).toBe(true);
    expect(graph.kernelNodes().length).toBe(2);
    using exec = graph.instantiate();
    exec.launch(s);
    await s.done();
    expect(dz.read()).toEqual(eager);

    // New saxpy coefficient in the instantiated graph, no re-capture.
    const a2 = a + 1;
    const [saxpyNode] = graph.kernelNodes();
    dy.write(y0);
    exec.setKernelArgs(saxpyNode!, saxpy, n, a2, dx, dy);
    exec.launch(s);
    await s.done();
    const got = dz.read();
    for (let i = 0; i < n; i += 101) {
      const want = Math.fround(b) * (Math.fround(a2) * x[i]! + y0[i]!);
      expect(Math.abs(got[i]! - want)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(want)));
    }
  });

  it('discards a capture whose enqueue throws', () => {
    using s = new Stream();
    expect(() =>
      Graph.capture(s, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(s.query()).toBe(true);
  });
});
