/**
 * What tscuda's wrappers add to a driver call, beside the same call made through koffi directly:
 * event record and query, a coordinator edge, launches (empty, 4 arguments), a stream-ordered
 * alloc+free and the copy path (a 4 KiB write, read and their round trip with a synchronize),
 * alternating wrapper and raw loops (ROUNDS each, LOOP calls per loop), medians in µs.
 *
 * Then, for event record and launch (issue 26), where the time above the floor goes: the call
 * path rebuilt one part at a time from the raw koffi call (status check and bookkeeping, the
 * stream's liveness and current context, brand and context checks of the arguments, launch
 * configuration checks, stream-use bookkeeping of buffer arguments, argument writes), each row
 * the cumulative cost and what that part added. Parts that are private are re-enacted with the
 * same checks the runtime makes, so a row is what that part costs, not a copy of its code.
 *
 * On a GPU host the driver's own time and its jitter hide a few ns of JavaScript; over the stub
 * driver of bench/probe/stub-libcuda.ts (every call returns at once, no GPU needed) what is left
 * is koffi plus tscuda's own code, resolved to nanoseconds:
 *   tsx bench/probe/ffi-overhead.ts [--rounds 9] [--loop 20000]
 *   LD_LIBRARY_PATH=$(tsx bench/probe/stub-libcuda.ts) tsx bench/probe/ffi-overhead.ts
 */
import { parseArgs } from 'node:util';
import { percentile } from '../harness/stats.js';
import { driver as driverApi } from '../../src/ffi/index.js';
import { Event, DeviceBuffer, HostBuffer, Stream } from '../../src/runtime/index.js';
// private-path: the runtime's hot table of checked calls and liveness check, re-enacted part by part to cost each
import { hot } from '../../src/runtime/cuda.js';
import { isLive } from '../../src/runtime/resource.js'; // private-path: as above
import { StreamOrderedAllocator } from '../../src/orchestration/index.js';
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
const h = hot();
const allocRaw = (d as unknown as Record<string, (...a: unknown[]) => number>).cuMemAllocAsync;

const hostSrc = HostBuffer.alloc('u8', 4096, { label: 'probe copy src' });
const hostDst = HostBuffer.alloc('u8', 4096, { label: 'probe copy dst' });
const devCopy = DeviceBuffer.alloc('u8', 4096, { label: 'probe copy dev' });
const onS1 = { stream: s1 };
const [dc, hs, hd] = [devCopy.address, hostSrc.address, hostDst.address];

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
    'write 4 KiB',
    (n) => {
      for (let i = 0; i < n; i++) devCopy.write(hostSrc, onS1);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuMemcpyHtoDAsync(dc, hs as never, 4096, h1);
    },
  ],
  [
    'read 4 KiB',
    (n) => {
      for (let i = 0; i < n; i++) devCopy.read(hostDst, onS1);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuMemcpyDtoHAsync(hd as never, dc, 4096, h1);
    },
  ],
  [
    'write + read + synchronize',
    (n) => {
      for (let i = 0; i < n; i++) {
        devCopy.write(hostSrc, onS1);
        devCopy.read(hostDst, onS1);
        s1.synchronize();
      }
    },
    (n) => {
      for (let i = 0; i < n; i++) {
        d.cuMemcpyHtoDAsync(dc, hs as never, 4096, h1);
        d.cuMemcpyDtoHAsync(hd as never, dc, 4096, h1);
        d.cuStreamSynchronize(h1);
      }
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

// ---- where the time above the floor goes (issue 26) -------------------------------------

const fail = (status: number): never => {
  throw new Error(`CUresult ${status}`);
};
let recordedOn: unknown = 0;
// The raw koffi functions (the floor), and what the runtime's checked calls are told they were doing.
const [rawRecord, rawLaunch] = [d.cuEventRecord, d.cuLaunchKernel];
const recordDuring = (event: Event, stream: Stream): string => `event "${event.label}" on stream "${stream.label}"`;
const launchDuring = (kernel: { readonly name: string }, stream: Stream): string =>
  `kernel "${kernel.name}" on stream "${stream.label}"`;

/** Event.record(stream), rebuilt part by part. */
const recordParts: [string, Loop][] = [
  [
    'floor: cuEventRecord',
    (n) => {
      for (let i = 0; i < n; i++) rawRecord(eh, h1);
    },
  ],
  [
    '+ checked call, #recordedOn',
    (n) => {
      for (let i = 0; i < n; i++) {
        h.eventRecord(eh, h1, recordDuring, ev, s1);
        recordedOn = h1 ?? 0;
      }
    },
  ],
  [
    '+ stream.use() (alive, current ctx)',
    (n) => {
      for (let i = 0; i < n; i++) {
        h.eventRecord(eh, s1.use(), recordDuring, ev, s1);
        recordedOn = s1.handle ?? 0;
      }
    },
  ],
  [
    "+ isLive(stream, 'Stream'), same ctx",
    (n) => {
      for (let i = 0; i < n; i++) {
        if (!isLive<Stream>(s1, 'Stream')) fail(-1);
        if (s1.context !== ev.context) fail(-2);
        h.eventRecord(eh, s1.use(), recordDuring, ev, s1);
        recordedOn = s1.handle ?? 0;
      }
    },
  ],
  [
    '+ event alive (= Event.record)',
    (n) => {
      for (let i = 0; i < n; i++) {
        ev.checkAlive();
        if (!isLive<Stream>(s1, 'Stream')) fail(-1);
        if (s1.context !== ev.context) fail(-2);
        h.eventRecord(eh, s1.use(), recordDuring, ev, s1);
        recordedOn = s1.handle ?? 0;
      }
    },
  ],
  [
    'Event.record (tscuda)',
    (n) => {
      for (let i = 0; i < n; i++) ev.record(s1);
    },
  ],
];

/** The launch config checks Kernel.#prepare makes (dims of block and grid against the device limits, threads, shared memory). */
const MAX = 1 << 30;
const dimsOk = (d: number | readonly number[]): boolean => {
  const [x, y, z] = typeof d === 'number' ? [d, 1, 1] : [d[0]!, d[1] ?? 1, d[2] ?? 1];
  return (
    Number.isInteger(x) &&
    Number.isInteger(y) &&
    Number.isInteger(z) &&
    x > 0 &&
    y > 0 &&
    z > 0 &&
    x <= MAX &&
    y <= 1024 &&
    z <= 64
  );
};
const configOk = (c: typeof cfg): boolean => {
  if (typeof c !== 'object' || c === null || !dimsOk(c.block) || c.block > 1024 || !dimsOk(c.grid)) return false;
  const shared = (c as { sharedMemBytes?: number }).sharedMemBytes ?? 0;
  return typeof shared === 'number' && Number.isInteger(shared) && shared >= 0 && shared <= 48 * 1024;
};

/** The typed 4-argument launch (kernels.k4(cfg, a, b, 0, 2)), rebuilt part by part. */
const launchParts: [string, Loop][] = [
  [
    'floor: cuLaunchKernel',
    (n) => {
      for (let i = 0; i < n; i++) rawLaunch(fn4, 1, 1, 1, 1, 1, 1, 0, h1, params4 as never, null);
    },
  ],
  [
    '+ checked call',
    (n) => {
      for (let i = 0; i < n; i++)
        h.launchKernel(fn4, 1, 1, 1, 1, 1, 1, 0, h1, params4 as never, null, launchDuring, k4, s1);
    },
  ],
  [
    '+ stream isLive, same ctx, use()',
    (n) => {
      for (let i = 0; i < n; i++) {
        if (!isLive(s1, Stream)) fail(-1);
        if (s1.context !== k4.context) fail(-2);
        h.launchKernel(fn4, 1, 1, 1, 1, 1, 1, 0, s1.use(), params4 as never, null, launchDuring, k4, s1);
      }
    },
  ],
  [
    '+ config checks (block, grid, smem)',
    (n) => {
      for (let i = 0; i < n; i++) {
        if (!configOk(cfg)) fail(-3);
        if (!isLive(s1, Stream)) fail(-1);
        if (s1.context !== k4.context) fail(-2);
        h.launchKernel(fn4, 1, 1, 1, 1, 1, 1, 0, s1.use(), params4 as never, null, launchDuring, k4, s1);
      }
    },
  ],
  [
    '+ recordUse of 2 buffer args',
    (n) => {
      for (let i = 0; i < n; i++) {
        if (!configOk(cfg)) fail(-3);
        if (!isLive(s1, Stream)) fail(-1);
        if (s1.context !== k4.context) fail(-2);
        h.launchKernel(fn4, 1, 1, 1, 1, 1, 1, 0, s1.use(), params4 as never, null, launchDuring, k4, s1);
        a4.recordUse(s1);
        b4.recordUse(s1);
      }
    },
  ],
  [
    'Kernel.launchPrepared (tscuda)',
    (n) => {
      for (let i = 0; i < n; i++) k4.launchPrepared(cfg);
    },
  ],
  [
    '+ 4 x setArg (checks, writes)',
    (n) => {
      for (let i = 0; i < n; i++) {
        k4.setArg(0, a4);
        k4.setArg(1, b4);
        k4.setArg(2, 0);
        k4.setArg(3, 2.0);
        k4.launchPrepared(cfg);
      }
    },
  ],
  [
    'typed launcher k4 (tscuda)',
    (n) => {
      for (let i = 0; i < n; i++) kernels.k4(cfg, a4, b4, 0, 2.0);
    },
  ],
];

/** Each part's median over ROUNDS (loops of the parts interleaved, so drift spreads evenly), and what it adds to the row before. */
function breakdown(title: string, parts: [string, Loop][]): void {
  for (const [, loop] of parts) time(loop);
  const xs = parts.map((): number[] => []);
  for (let r = 0; r < ROUNDS; r++) parts.forEach(([, loop], i) => xs[i]!.push(time(loop)));
  const medians = xs.map((x) => percentile(x, 0.5));
  const floor = medians[0]!;
  console.log(`\n${title}: where the time above the floor goes (median of ${ROUNDS} rounds of ${LOOP} calls)`);
  medians.forEach((m, i) => {
    const added = i === 0 ? '' : `  ${(m - medians[i - 1]! >= 0 ? '+' : '') + (m - medians[i - 1]!).toFixed(3)} us`;
    console.log(`  ${parts[i]![0].padEnd(40)} ${m.toFixed(3)} us  ${(m / floor).toFixed(2)}x floor${added}`);
  });
}

breakdown('event record', recordParts);
breakdown('launch, 4 arguments (typed launcher)', launchParts);
if (recordedOn === undefined) console.log(''); // keeps the bookkeeping store observable

allocator.dispose();
kernels.module.dispose();
for (const x of [ev, a4, b4, s1, s2]) x.dispose();
