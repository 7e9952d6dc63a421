/**
 * What tscuda's wrappers add to a driver call, beside the same call made through koffi directly:
 * event record and query, a coordinator edge, launches (empty, 4 arguments) and a stream-ordered alloc+free,
 * alternating wrapper and raw loops (ROUNDS each, LOOP calls per loop), medians in µs.
 *
 *   tsx bench/probe/ffi-overhead.ts [--rounds 9] [--loop 20000]
 */
import { parseArgs } from 'node:util';
import { percentile } from '../harness/stats.js';
import { driverApi } from '../../src/runtime/cuda.js';
import { Event } from '../../src/runtime/event.js';
import { DeviceBuffer } from '../../src/runtime/memory/device-buffer.js';
import { StreamOrderedAllocator } from '../../src/orchestration/index.js';
import { Stream } from '../../src/runtime/stream.js';
import { loadBasicKernels } from '../../test/kernels/launchers.generated.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, loop: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 9);
const LOOP = Number(values.loop ?? 20000);

const d = driverApi();
const s1 = new Stream({ label: 'probe s1' });
const s2 = new Stream({ label: 'probe s2' });
const ev = new Event({ label: 'probe event' });
const kernels = loadBasicKernels({ path: 'test/kernels/build/basic.fatbin' });
const cfg = { grid: 1, block: 1, stream: s1 };
const allocator = new StreamOrderedAllocator({ label: 'probe allocator' });
const [eh, h1, h2] = [ev.handle, s1.handle, s2.handle];
const empty = kernels.kernels.empty;
const [fn, params] = [empty.function, empty.parameterArray];
const k4 = kernels.kernels.k4;
const a4 = DeviceBuffer.alloc('f32', 64, { label: 'probe k4 a' });
const b4 = DeviceBuffer.alloc('f32', 64, { label: 'probe k4 b' });
kernels.k4(cfg, a4, b4, 0, 2.0); // the parameter block now holds these arguments
const [fn4, params4] = [k4.function, k4.parameterArray];
const cell = new BigUint64Array(1);
const allocRaw = (d as unknown as Record<string, (...a: unknown[]) => number>).cuMemAllocAsync;

const sync = (): void => {
  s1.synchronize();
  s2.synchronize();
};

type Loop = (n: number) => void;
const pairs: [string, Loop, Loop][] = [
  [
    'event record',
    (n) => {
      for (let i = 0; i < n; i++) ev.record(s1);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuEventRecord(eh, h1);
    },
  ],
  [
    'event query',
    (n) => {
      for (let i = 0; i < n; i++) ev.query();
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuEventQuery(eh);
    },
  ],
  [
    'edge',
    (n) => {
      for (let i = 0; i < n; i++) {
        ev.record(s1);
        s2.waitEvent(ev);
      }
    },
    (n) => {
      for (let i = 0; i < n; i++) {
        d.cuEventRecord(eh, h1);
        d.cuStreamWaitEvent(h2, eh, 0);
      }
    },
  ],
  [
    'launch empty',
    (n) => {
      for (let i = 0; i < n; i++) kernels.empty(cfg);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, h1, params as never, null);
    },
  ],
  [
    'launch 4 args (typed)',
    (n) => {
      for (let i = 0; i < n; i++) kernels.k4(cfg, a4, b4, 0, 2.0);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuLaunchKernel(fn4, 1, 1, 1, 1, 1, 1, 0, h1, params4 as never, null);
    },
  ],
  [
    'launch 4 args (generic)',
    (n) => {
      for (let i = 0; i < n; i++) k4.launch(cfg, a4, b4, 0, 2.0);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuLaunchKernel(fn4, 1, 1, 1, 1, 1, 1, 0, h1, params4 as never, null);
    },
  ],
  [
    'allocator / raw alloc+free',
    (n) => {
      for (let i = 0; i < n; i++) allocator.freeForStream(allocator.allocate('u8', 1 << 20, s1), s1);
    },
    (n) => {
      for (let i = 0; i < n; i++) {
        allocRaw!(cell, 1 << 20, h1);
        d.cuMemFreeAsync(Number(cell[0]), h1);
      }
    },
  ],
];

const time = (loop: Loop): number => {
  const t0 = performance.now();
  loop(LOOP);
  sync();
  return ((performance.now() - t0) * 1000) / LOOP;
};

for (const [name, wrapped, raw] of pairs) {
  time(wrapped);
  time(raw);
  const w: number[] = [];
  const r: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    w.push(time(wrapped));
    r.push(time(raw));
  }
  console.log(
    `${name.padEnd(28)} tscuda ${percentile(w, 0.5).toFixed(3)} us   koffi direct ${percentile(r, 0.5).toFixed(3)} us   (min ${Math.min(...w).toFixed(3)} / ${Math.min(...r).toFixed(3)})`,
  );
}
allocator.dispose();
kernels.module.dispose();
for (const x of [ev, a4, b4, s1, s2]) x.dispose();
