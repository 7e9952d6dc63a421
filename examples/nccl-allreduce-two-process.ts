// NCCL all-reduce across two processes, one GPU each: the way to scale past one machine.
// The launcher makes the clique's id (ncclGetUniqueId), passes it to both ranks as base64 in an
// environment variable, and each rank joins with Communicator.initRank({ id, rank, size, device }).
// On several machines, send the id over any channel you have and start one rank per GPU.
// Run: npx tsx examples/nccl-allreduce-two-process.ts   (needs 2 GPUs and NCCL)
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { Device, DeviceBuffer, Stream } from '../src/index.js';
import { Communicator, generateUniqueId, NcclUniqueId } from '../src/orchestration/index.js';

// Without a GPU (or the library this example needs), say what is missing in one line.
const gpu = Device.available({ needs: ['nccl'] });
if (!gpu.ok) {
  console.error(`nccl-allreduce-two-process: ${gpu.reason}`);
  process.exit(1);
}

const SIZE = 2;
const n = 1 << 20;
const role = process.env.TSCUDA_NCCL_RANK;

if (role === undefined) {
  // Launcher: NCCL_NVLS_ENABLE=0 is set by tscuda before NCCL loads, and the ranks inherit it.
  if (Device.count() < SIZE) {
    console.log(`skipped: this machine has ${Device.count()} GPU(s); the two-process example needs ${SIZE}`);
    process.exit(0);
  }
  const id = generateUniqueId();
  const self = fileURLToPath(import.meta.url);
  const ranks = Array.from({ length: SIZE }, (_, rank) =>
    execa(process.execPath, [...process.execArgv, self], { env: { TSCUDA_NCCL_RANK: String(rank), TSCUDA_NCCL_ID: id.toBase64() }, timeout: 120_000, reject: false }),
  );
  const results = await Promise.all(ranks);
  for (const r of results) process.stdout.write(`${r.stdout}\n`);
  const failed = results.filter((r) => r.exitCode !== 0);
  if (failed.length) {
    for (const r of failed) console.error(r.stderr);
    process.exit(1);
  }
} else {
  const rank = Number(role);
  const comm = Communicator.initRank({ id: NcclUniqueId.fromBase64(process.env.TSCUDA_NCCL_ID!), rank, size: SIZE, device: rank });
  using stream = new Stream({ device: rank, label: `rank ${rank}` });
  using data = DeviceBuffer.from('f32', new Float32Array(n).fill(rank + 1), { device: rank });
  await comm.allReduce(data, data, { op: 'sum', stream });
  const out = data.read() as Float32Array;
  const expected = (SIZE * (SIZE + 1)) / 2;
  const ok = out.every((v) => v === expected);
  console.log(`rank ${rank} of ${SIZE} on ${Device.get(rank).name}: allReduce sum = ${out[0]} (expected ${expected}): ${ok ? 'correct' : 'WRONG'}`);
  comm.dispose();
  if (!ok) process.exitCode = 1;
}
