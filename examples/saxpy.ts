// saxpy: y = a * x + y on the GPU, with a kernel compiled at run time by NVRTC.
// Run: npx tsx examples/saxpy.ts   (in your project: import from 'tscuda')
import { Device, DeviceBuffer, HostBuffer, Program, Stream } from '../src/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['nvrtc'] });
if (!gpu.ok) {
  console.error(`saxpy: ${gpu.reason}`);
  process.exit(1);
}

const n = 1 << 20;
using stream = new Stream({ priority: 'high', label: 'compute' });
using hostX = HostBuffer.alloc('f32', n); // pinned: .array is a zero-copy Float32Array
using hostY = HostBuffer.alloc('f32', n);
using x = DeviceBuffer.alloc('f32', n, { stream });
using y = DeviceBuffer.alloc('f32', n, { stream });

for (let i = 0; i < n; i++) hostX.array[i] = i;
hostY.array.fill(1);
// Asynchronous (pinned source + stream): the copies read the pinned pages later, so each source
// stays unchanged until the stream is past its copy.
x.write(hostX, { stream });
y.write(hostY, { stream });

using program = new Program({
  source: `
  extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
  }`,
});
// The parameter list types the launch: swapped arguments are a tsc error.
const saxpy = program.kernel('saxpy', ['i32', 'f32', 'ptr', 'ptr']);
saxpy.launch({ grid: Math.ceil(n / 256), block: 256, stream }, n, 2.0, x, y);

y.read(hostY, { stream });
await stream.done(); // the event loop stays free meanwhile
console.log(
  `saxpy on ${Device.get(0).name}: y[0..4] = ${Array.from(hostY.array.subarray(0, 5)).join(' ')}, y[${n - 1}] = ${hostY.array[n - 1]}`,
);
