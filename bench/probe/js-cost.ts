/**
 * What tscuda's JavaScript adds to a call path, without a GPU: run against a driver whose every
 * function returns at once (LD_LIBRARY_PATH to a stub libcuda.so.1), so the time left is koffi's
 * call plus tscuda's code, and tscuda minus the raw koffi loop is tscuda's own cost, resolved to
 * nanoseconds (on a GPU the driver's own time and its jitter hide it).
 *   LD_LIBRARY_PATH=/tmp/fakecuda tsx bench/probe/js-cost.ts [--rounds 15] [--loop 200000]
 */
import { parseArgs } from 'node:util';
import { percentile } from '../harness/stats.js';
import { driver as driverApi } from '../../src/ffi/index.js';
import { DeviceBuffer, Event, HostBuffer, Stream } from '../../src/runtime/index.js';
import { hot } from '../../src/runtime/cuda.js'; // private-path: the raw hot call table, as floors.ts uses it

const { values } = parseArgs({ options: { rounds: { type: 'string' }, loop: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 15);
const LOOP = Number(values.loop ?? 200000);

const d = driverApi();
const s1 = new Stream({ label: 'js-cost s1' });
const s2 = new Stream({ label: 'js-cost s2' });
const ev = new Event({ label: 'js-cost event' });
const hSrc = HostBuffer.alloc('u8', 4096, { label: 'src' });
const hDst = HostBuffer.alloc('u8', 4096, { label: 'dst' });
const dev = DeviceBuffer.alloc('u8', 4096, { label: 'dev' });
const { memcpyHtoDAsync, memcpyDtoHAsync } = hot();
const [eh, h1, h2, da, hs, hd] = [ev.handle, s1.handle, s2.handle, dev.address, hSrc.address, hDst.address];
const opts = { stream: s1 };

type Loop = (n: number) => void;
const pairs: [string, Loop, Loop][] = [
  [
    'small copy (write + read + sync)',
    (n) => {
      for (let i = 0; i < n; i++) {
        dev.write(hSrc, opts);
        dev.read(hDst, opts);
        s1.synchronize();
      }
    },
    (n) => {
      for (let i = 0; i < n; i++) {
        memcpyHtoDAsync(da, hs as never, 4096, h1);
        memcpyDtoHAsync(hd as never, da, 4096, h1);
        d.cuStreamSynchronize(h1);
      }
    },
  ],
  [
    'write',
    (n) => {
      for (let i = 0; i < n; i++) dev.write(hSrc, opts);
    },
    (n) => {
      for (let i = 0; i < n; i++) memcpyHtoDAsync(da, hs as never, 4096, h1);
    },
  ],
  [
    'read',
    (n) => {
      for (let i = 0; i < n; i++) dev.read(hDst, opts);
    },
    (n) => {
      for (let i = 0; i < n; i++) memcpyDtoHAsync(hd as never, da, 4096, h1);
    },
  ],
  [
    'stream synchronize',
    (n) => {
      for (let i = 0; i < n; i++) s1.synchronize();
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuStreamSynchronize(h1);
    },
  ],
  [
    'coordinator edge (record + wait)',
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
    'event record',
    (n) => {
      for (let i = 0; i < n; i++) ev.record(s1);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuEventRecord(eh, h1);
    },
  ],
  [
    'stream waitEvent',
    (n) => {
      for (let i = 0; i < n; i++) s2.waitEvent(ev);
    },
    (n) => {
      for (let i = 0; i < n; i++) d.cuStreamWaitEvent(h2, eh, 0);
    },
  ],
];

const perCall = (f: Loop): number => {
  const t0 = process.hrtime.bigint();
  f(LOOP);
  return Number(process.hrtime.bigint() - t0) / LOOP;
};
console.log(`per call, ns (median of ${ROUNDS} alternating rounds of ${LOOP}); driver: a stub that returns at once`);
console.log(`${'path'.padEnd(36)} ${'tscuda'.padStart(8)} ${'raw'.padStart(8)} ${'added'.padStart(8)}`);
for (const [name, ours, raw] of pairs) {
  ours(LOOP);
  raw(LOOP);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) (a.push(perCall(ours)), b.push(perCall(raw)));
    else (b.push(perCall(raw)), a.push(perCall(ours)));
  }
  const [ma, mb] = [percentile(a, 0.5), percentile(b, 0.5)];
  console.log(`${name.padEnd(36)} ${ma.toFixed(1).padStart(8)} ${mb.toFixed(1).padStart(8)} ${(ma - mb).toFixed(1).padStart(8)}`);
}
