import { beforeAll, describe, expect, it } from 'vitest';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import type { Kernel } from '../../../src/runtime/kernel.js';
import { Coordinator, StreamPool } from '../../../src/orchestration/index.js';
import type { Stream } from '../../../src/runtime/stream.js';
import { gpu } from '../gpu-available.js';
import { loadBasicModule, randomF32 } from '../helpers.js';

const NAN_BITS = 0xffffffff;

describe.skipIf(!gpu.available)(
  `Coordinator iterations captured as CUDA graphs${gpu.available ? '' : ` (skipped: ${gpu.reason})`}`,
  () => {
    let scale!: Kernel;
    let add!: Kernel;
    let saxpy!: Kernel;
    beforeAll(() => {
      const mod = loadBasicModule();
      scale = mod.kernel('scale_f32', ['ptr', 'ptr', 'f32', 'i32']);
      add = mod.kernel('add_f32', ['ptr', 'ptr', 'ptr', 'i32']);
      saxpy = mod.kernel('saxpy_f32', ['i32', 'f32', 'ptr', 'ptr']);
    });

    it('replays a diamond over three streams like the eager run, and takes a kernel argument update without re-capture', async () => {
      const n = 100_003;
      const xs = randomF32(n);
      const y0 = randomF32(n);
      const alpha = 1.5 + Math.random();
      const beta = 0.25 + Math.random();
      using pool = new StreamPool({
        streams: [{ purpose: 'ConfigUpload' }, { purpose: 'KernelExecution' }, { purpose: 'KernelExecution' }],
        label: 'capture',
      });
      const [s0, s1, s2] = pool.streams as [Stream, Stream, Stream];
      using dxs = DeviceBuffer.from('f32', xs);
      using dy0 = DeviceBuffer.from('f32', y0);
      using x = DeviceBuffer.alloc('f32', n);
      using b = DeviceBuffer.alloc('f32', n);
      using c = DeviceBuffer.alloc('f32', n);
      const cfg = (s: Stream): { grid: number; block: number; stream: Stream } => ({
        grid: 256,
        block: 256,
        stream: s,
      });
      // c = beta * (a * x) + (x + y0), with x copied in and the two middle branches on their own streams.
      const iteration = (coord: Coordinator, a: number): void => {
        coord.add({
          name: 'copy',
          kind: 'copy',
          stream: s0,
          bytes: 4 * n,
          run: (s) => void x.copyFrom(dxs, { stream: s }),
        });
        coord.add({
          name: 'left',
          kind: 'kernel',
          stream: s1,
          after: ['copy'],
          run: (s) => scale.launch(cfg(s), b, x, a, n),
        });
        coord.add({
          name: 'right',
          kind: 'kernel',
          stream: s2,
          after: ['copy'],
          run: (s) => add.launch(cfg(s), c, x, dy0, n),
        });
        coord.add({
          name: 'join',
          kind: 'kernel',
          stream: s0,
          after: ['left', 'right'],
          run: (s) => saxpy.launch(cfg(s), n, beta, b, c),
        });
      };
      const poisonAll = async (): Promise<void> => {
        for (const buf of [x, b, c]) buf.memset(NAN_BITS, { stream: s0 });
        await s0.done();
      };
      const expectMatches = (got: Float32Array, a: number): void => {
        let worst = 0;
        for (let i = 0; i < n; i++) {
          const want = Math.fround(beta) * Math.fround(Math.fround(a) * xs[i]!) + Math.fround(xs[i]! + y0[i]!);
          const err = Math.abs(got[i]! - want);
          if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
        }
        // FMA contraction in saxpy may round once instead of twice.
        expect(worst).toBeLessThanOrEqual(4e-6);
      };

      await poisonAll();
      const eager = new Coordinator(pool, { label: 'eager' });
      iteration(eager, alpha);
      await eager.run();
      const eagerOut = c.read();
      expectMatches(eagerOut, alpha);

      await poisonAll();
      const coord = new Coordinator(pool, { label: 'captured' });
      iteration(coord, alpha);
      using graph = coord.capture();
      expect(coord.state('join')).toBe('captured');
      await expect(coord.wait('join')).resolves.toBeUndefined();
      expect(coord.poll()).toEqual([]);
      expect(c.read().every((v) => Number.isNaN(v))).toBe(true);
      expect(graph.kernelNodes()).toHaveLength(3);
      using exec = graph.instantiate();
      exec.launch(s0);
      await s0.done();
      expect(c.read()).toEqual(eagerOut);

      // Any stream can launch it: the graph carries its own fork and join.
      await poisonAll();
      exec.launch(s2);
      await s2.done();
      expect(c.read()).toEqual(eagerOut);

      const scaleNodes = graph.kernelNodes(scale);
      expect(scaleNodes).toHaveLength(1);
      expect(graph.kernelNodes(saxpy)).toHaveLength(1);
      const alpha2 = alpha + 2;
      exec.setKernelArgs(scaleNodes[0]!, scale, b, x, alpha2, n);
      await poisonAll();
      exec.launch(s0);
      await s0.done();
      const updated = c.read();
      expectMatches(updated, alpha2);
      expect(updated[0]).not.toBe(eagerOut[0]);
    });

    it('refuses a dependency on work still in flight, and captures nothing when an enqueue throws', async () => {
      using pool = new StreamPool({
        streams: [{ purpose: 'KernelExecution' }, { purpose: 'KernelExecution' }],
        label: 'refuse',
      });
      const [s0, s1] = pool.streams as [Stream, Stream];
      using buf = DeviceBuffer.alloc('f32', 1024);
      const coord = new Coordinator(pool);
      coord.add({
        name: 'first',
        kind: 'kernel',
        stream: s0,
        run: (s) => scale.launch({ grid: 4, block: 256, stream: s }, buf, buf, 2, 1024),
      });
      coord.add({
        name: 'broken',
        kind: 'kernel',
        stream: s1,
        after: ['first'],
        run: () => {
          throw new Error('bad enqueue');
        },
      });
      expect(() => coord.capture()).toThrow('bad enqueue');
      // Nothing was captured or run; both streams left capture mode.
      expect(coord.state('first')).toBe('pending');
      expect(s0.query() && s1.query()).toBe(true);
      await coord.run().catch(() => undefined);
      expect(coord.state('first')).toBe('completed');
      expect(coord.state('broken')).toBe('failed');
    });
  },
);
