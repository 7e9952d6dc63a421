// A diamond DAG over four streams with the Coordinator: upload, two branches that may overlap,
// a join that waits for both (cuStreamWaitEvent: the host never waits between them), a download.
// The profiler's timeline is written as SVG. Run: npx tsx examples/coordinator-dag.ts [out.svg]
// (in your project: import from 'tscuda' and 'tscuda/orchestration')
import { writeFileSync } from 'node:fs';
import { Device, DeviceBuffer, HostBuffer, elementwise } from '../src/index.js';
import { Coordinator, Profiler, StreamPool } from '../src/orchestration/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['nvrtc'] });
if (!gpu.ok) {
  console.error(`coordinator-dag: ${gpu.reason}`);
  process.exit(1);
}

const scale = elementwise({
  name: 'scale',
  inputs: 'const float x',
  params: 'float s',
  outputs: 'float y',
  operation: 'y = s * x',
});
const add = elementwise({
  name: 'add',
  inputs: 'const float a1, const float a2',
  outputs: 'float y',
  operation: 'y = a1 + a2',
});

const n = 1 << 22;
using profiler = new Profiler({ label: 'diamond' }); // declared first: disposed last, after the pool
using pool = new StreamPool({
  streams: [
    { purpose: 'ConfigUpload' },
    { purpose: 'KernelExecution' },
    { purpose: 'KernelExecution' },
    { purpose: 'TelemetryDownload' },
  ],
  profiler,
  label: 'diamond',
});
type PoolStream = (typeof pool.streams)[number];
const [up, left, right, down] = pool.streams as readonly [PoolStream, PoolStream, PoolStream, PoolStream];
using input = HostBuffer.alloc('f32', n);
using output = HostBuffer.alloc('f32', n);
for (let i = 0; i < n; i++) input.array[i] = i % 1000;
using x = DeviceBuffer.alloc('f32', n);
using b = DeviceBuffer.alloc('f32', n);
using c = DeviceBuffer.alloc('f32', n);
using d = DeviceBuffer.alloc('f32', n);

const coordinator = new Coordinator(pool);
coordinator.add({
  name: 'upload',
  kind: 'upload',
  stream: up,
  bytes: 4 * n,
  run: (s) => void x.write(input, { stream: s }),
});
coordinator.add({
  name: 'left',
  kind: 'kernel',
  stream: left,
  after: ['upload'],
  run: (s) => scale(x, 2, b, { stream: s }),
});
coordinator.add({
  name: 'right',
  kind: 'kernel',
  stream: right,
  after: ['upload'],
  run: (s) => scale(x, 3, c, { stream: s }),
});
coordinator.add({
  name: 'join',
  kind: 'kernel',
  stream: down,
  after: ['left', 'right'],
  run: (s) => add(b, c, d, { stream: s }),
});
coordinator.add({
  name: 'download',
  kind: 'download',
  stream: down,
  bytes: 4 * n,
  after: ['join'],
  run: (s) => void d.read(output, { stream: s }),
});
await coordinator.run();

let wrong = 0;
for (let i = 0; i < n; i++) if (output.array[i] !== 5 * input.array[i]!) wrong++;
const records = await profiler.collect();
const file = process.argv[2] ?? 'diamond-timeline.svg';
writeFileSync(file, await profiler.svg('diamond DAG over four streams'));
console.log(
  `d = 2x + 3x: ${wrong === 0 ? 'correct' : `${wrong} wrong`}; ${coordinator.poll().length} operations settled`,
);
for (const r of records)
  console.log(`  ${r.name.padEnd(8)} on ${r.stream.padEnd(24)} ${r.startMs.toFixed(3)} - ${r.endMs.toFixed(3)} ms`);
console.log(`timeline: ${file}`);
