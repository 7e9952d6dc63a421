// elementwise(): CuPy's ElementwiseKernel. Write the per-element operation, not the kernel;
// T is a type placeholder, so the same function runs on float32 and on half precision.
// Run: npx tsx examples/elementwise.ts   (in your project: import from 'tscuda')
import { Device, DeviceBuffer, Stream, elementwise, fromF16, toF16 } from '../src/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['nvrtc'] });
if (!gpu.ok) {
  console.error(`elementwise: ${gpu.reason}`);
  process.exit(1);
}

const axpy = elementwise({
  name: 'axpy',
  inputs: 'const T x, const T y',
  params: 'T a',
  outputs: 'T z',
  operation: 'z = a * x + y',
});

using stream = new Stream();
const xs = [1, 2, 3, 4];
const ys = [0.5, 0.25, 0.125, 0];

using x32 = DeviceBuffer.alloc('f32', 4, { stream }).write(Float32Array.from(xs), { stream });
using y32 = DeviceBuffer.alloc('f32', 4, { stream }).write(Float32Array.from(ys), { stream });
using z32 = DeviceBuffer.alloc('f32', 4, { stream });
axpy(x32, y32, 10, z32, { stream }); // compiled for float on first use, then cached

using x16 = DeviceBuffer.alloc('f16', 4, { stream }).write(toF16(xs), { stream });
using y16 = DeviceBuffer.alloc('f16', 4, { stream }).write(toF16(ys), { stream });
using z16 = DeviceBuffer.alloc('f16', 4, { stream });
axpy(x16, y16, 10, z16, { stream }); // compiled again for __half

const f32 = z32.read(new Float32Array(4), { stream });
const f16 = z16.read(toF16([0, 0, 0, 0]), { stream });
await stream.done();
console.log(`f32: ${Array.from(f32).join(' ')}`);
console.log(`f16: ${Array.from(fromF16(f16)).join(' ')}`);
