// NCCL all-reduce across two processes, one GPU each: the way to scale past one machine.
// The launcher makes the clique's id (ncclGetUniqueId) and starts one rank per GPU with four
// environment variables (docs/several-gpus.md): TSCUDA_NCCL_ID (the id, base64), RANK and
// WORLD_SIZE (torchrun's names), LOCAL_RANK (the GPU of this host). Each rank joins with
// Communicator.initRank({ id, rank, size, device }). On several machines, a launcher (Slurm,
// mpirun, a script over ssh) sets the same variables on every host.
// Run: npx tsx examples/nccl-allreduce-two-process.ts   (needs 2 GPUs and NCCL)
import { execFile } from 'node:child_process';
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

if (process.env.RANK === undefined) {
  // Launcher: NCCL_NVLS_ENABLE=0 is set by tscuda before NCCL loads, and the ranks inherit it.
  if (Device.count() < SIZE) {
    console.log(`skipped: this machine has ${Device.count()} GPU(s); the two-process example needs ${SIZE}`);
    process.exit(0);
  }
  const id = generateUniqueId();
  const self = fileURLToPath(import.meta.url);
  // One rank: this file again, in a child process with its variables (node:child_process, so the
  // example needs nothing beyond tscuda); bounded, so a rank that hangs fails the run.
  const runRank = (rank: number): Promise<{ ok: boolean; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const env = {
        ...process.env,
        TSCUDA_NCCL_ID: id.toBase64(),
        RANK: String(rank),
        WORLD_SIZE: String(SIZE),
        LOCAL_RANK: String(rank),
      };
      execFile(process.execPath, [...process.execArgv, self], { env, timeout: 120_000 }, (error, stdout, stderr) =>
        resolve({ ok: error === null, stdout, stderr }),
      );
    });
  const results = await Promise.all(Array.from({ length: SIZE }, (_, rank) => runRank(rank)));
  for (const r of results) process.stdout.write(`${r.stdout.trimEnd()}\n`);
  const failed = results.filter((r) => !r.ok);
  if (failed.length) {
    for (const r of failed) console.error(r.stderr);
    process.exit(1);
  }
} else {
  const rank = Number(process.env.RANK);
  const size = Number(process.env.WORLD_SIZE);
  const device = Number(process.env.LOCAL_RANK ?? rank);
  const comm = Communicator.initRank({ id: NcclUniqueId.fromBase64(process.env.TSCUDA_NCCL_ID!), rank, size, device });
  using stream = new Stream({ device, label: `rank ${rank}` });
  using data = DeviceBuffer.from('f32', new Float32Array(n).fill(rank + 1), { device });
  await comm.allReduce(data, data, { op: 'sum', stream });
  const out = data.read() as Float32Array;
  const expected = (size * (size + 1)) / 2;
  const ok = out.every((v) => v === expected);
  console.log(
    `rank ${rank} of ${size} on ${Device.get(device).name}: allReduce sum = ${out[0]} (expected ${expected}): ${ok ? 'correct' : 'WRONG'}`,
  );
  comm.dispose();
  if (!ok) process.exitCode = 1;
}
