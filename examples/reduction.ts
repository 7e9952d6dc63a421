// reduction(): CuPy's ReductionKernel. A map expression, a reduce expression and its identity;
// one output element per row. Here: the L2 norm of each of 3 rows of 1,000,000 values.
// Run: npx tsx examples/reduction.ts   (in your project: import from 'tscuda')
import { Device, DeviceBuffer, Stream, reduction } from '../src/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['nvrtc'] });
if (!gpu.ok) {
  console.error(`reduction: ${gpu.reason}`);
  process.exit(1);
}

const l2norm = reduction({
  name: 'l2norm',
  inputs: 'const float x',
  output: 'float y',
  map: 'x * x',
  reduce: 'a + b',
  identity: '0',
  post: 'y = sqrtf(a)',
});

const rows = 3;
const k = 1_000_000;
const values = new Float32Array(rows * k);
for (let r = 0; r < rows; r++) values.fill(r + 1, r * k, (r + 1) * k); // row r is all (r + 1)

using stream = new Stream();
using x = DeviceBuffer.alloc('f32', rows * k, { stream }).write(values, { stream });
using norms = DeviceBuffer.alloc('f32', rows, { stream });
l2norm(x, norms, { stream });
const out = norms.read(new Float32Array(rows), { stream });
await stream.done();
console.log(
  `norms: ${Array.from(out, (v) => v.toFixed(1)).join(' ')} (expected ${[1, 2, 3].map((v) => (v * Math.sqrt(k)).toFixed(1)).join(' ')})`,
);
