/**
 * What koffi itself costs per driver call, by how a handle crosses the boundary: cuEventRecord and
 * cuEventQuery declared with opaque pointer parameters (tscuda's generated bindings) and with
 * uintptr_t parameters given plain numbers, interleaved, medians in µs:
 *   tsx bench/probe/handle-abi.ts [--rounds 7] [--loop 50000]
 */
import koffi from 'koffi';
import { parseArgs } from 'node:util';
import { percentile } from '../harness/stats.js';
import { driver as driverApi } from '../../src/ffi/index.js';
import { Event, Stream } from '../../src/runtime/index.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, loop: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 7);
const LOOP = Number(values.loop ?? 50000);

const stream = new Stream({ label: 'abi probe' });
const event = new Event({ label: 'abi probe' });
const d = driverApi() as unknown as Record<string, (...a: unknown[]) => number>;
const lib = koffi.load('libcuda.so.1');
const recordNum = lib.func('int cuEventRecord(uintptr_t, uintptr_t)');
const queryNum = lib.func('int cuEventQuery(uintptr_t)');
const addr = (h: unknown): number => Number(koffi.address(h));
const [eh, sh] = [event.handle, stream.handle];
const [en, sn] = [addr(eh), addr(sh)];

const time = (body: () => void): number => {
  const t0 = performance.now();
  for (let i = 0; i < LOOP; i++) body();
  const us = ((performance.now() - t0) * 1000) / LOOP;
  stream.synchronize();
  return us;
};
const cases: Record<string, () => void> = {
  'record, opaque pointers (generated binding)': () => d.cuEventRecord!(eh, sh),
  'record, uintptr_t numbers': () => recordNum(en, sn),
  'query, opaque pointer (generated binding)': () => d.cuEventQuery!(eh),
  'query, uintptr_t number': () => queryNum(en),
};
const results = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
for (const body of Object.values(cases)) time(body); // warm-up
for (let r = 0; r < ROUNDS; r++) for (const [name, body] of Object.entries(cases)) results.get(name)!.push(time(body));
for (const [name, xs] of results)
  console.log(`${name}: ${percentile(xs, 0.5).toFixed(3)} us (min ${Math.min(...xs).toFixed(3)})`);
event.dispose();
stream.dispose();
