// NCCL all-reduce in one process: one communicator per GPU (ncclCommInitAll), the ranks' shares
// enqueued together inside Communicator.group(). Works on any number of GPUs (one rank on one).
// Run: npx tsx examples/nccl-allreduce-single-process.ts   (needs NCCL: libnccl2, or pip install nvidia-nccl-cu13)
import { Device, DeviceBuffer, Stream } from '../src/index.js';
import { Communicator } from '../src/orchestration/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['nccl'] });
if (!gpu.ok) {
  console.error(`nccl-allreduce-single-process: ${gpu.reason}`);
  process.exit(1);
}

const n = 1 << 20;
const devices = Device.all();
const comms = Communicator.initAll(devices);
const streams = devices.map((device) => new Stream({ device, label: `allreduce on ${device.ordinal}` }));
// Rank r contributes r + 1 everywhere: the sum over ranks is size * (size + 1) / 2.
const buffers = devices.map((device, r) => DeviceBuffer.from('f32', new Float32Array(n).fill(r + 1), { device }));

await Communicator.group(() => {
  comms.forEach((comm, r) => comm.allReduce(buffers[r]!, buffers[r]!, { op: 'sum', stream: streams[r]! }));
});

const size = comms.length;
const expected = (size * (size + 1)) / 2;
const results = buffers.map((b) => b.read() as Float32Array);
const ok = results.every((a) => a.every((v) => v === expected));
console.log(
  `allReduce over ${size} GPU(s) (NCCL ${Communicator.version()}): every element = ${results[0]![0]} (expected ${expected}): ${ok ? 'correct' : 'WRONG'}`,
);

for (const b of buffers) b.dispose();
for (const c of comms) c.dispose();
for (const s of streams) s.dispose();
if (!ok) process.exitCode = 1;
