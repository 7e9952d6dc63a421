import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ncclChecked } from '../../../src/ffi/checked.js';
import { Communicator } from '../../../src/runtime/nccl/communicator.js';
import { NcclDTypeError, NcclError, NcclOpError, NcclRangeError } from '../../../src/runtime/nccl/errors.js';
import { inGroup } from '../../../src/runtime/nccl/group.js';
import { generateUniqueId, NcclUniqueId } from '../../../src/runtime/nccl/unique-id.js';
import { Device } from '../../../src/runtime/device.js';
import { DeviceBuffer } from '../../../src/runtime/memory/device-buffer.js';
import { Stream } from '../../../src/runtime/stream.js';
import { poison, randomF32, randomF64, ROOT } from '../helpers.js';
import { ncclReady, titled, twoGpus } from './multi-available.js';

const n = 4099; // not a multiple of anything NCCL chunks by

function randomI32(count: number): Int32Array {
  const a = new Int32Array(count);
  for (let i = 0; i < count; i++) a[i] = ((Math.random() * 2 ** 20) | 0) - 2 ** 19 || 1;
  return a;
}

describe.skipIf(!ncclReady.ok)(titled('NCCL with one rank per communicator (in process)', ncclReady), () => {
  let comm: Communicator;
  let stream: Stream;
  beforeAll(() => {
    comm = Communicator.initAll([0])[0]!;
    stream = new Stream({ device: 0, label: 'nccl' });
  });
  afterAll(() => {
    comm?.dispose();
    stream?.dispose();
  });

  it('initAll and initRank (size 1, the 128-byte id by value) make communicators NCCL describes as asked', () => {
    expect(process.env.NCCL_NVLS_ENABLE).toBe('0');
    expect(Communicator.version()).toBeGreaterThanOrEqual(21800);
    expect(comm.describe()).toEqual({ count: 1, cudaDevice: 0, rank: 0 });
    const id = generateUniqueId();
    const again = NcclUniqueId.fromBase64(id.toBase64());
    using c = Communicator.initRank({ id: again, rank: 0, size: 1, device: 0 });
    expect(c.describe()).toEqual({ count: 1, cudaDevice: 0, rank: 0 });
    expect(c.asyncError()).toBeUndefined();
  });

  it('allReduce with every operator equals the CPU reduction over the one rank (f32, f64, i32, c64), out of place and in place', async () => {
    const cases = [
      ['f32', randomF32(n)],
      ['f64', randomF64(n)],
      ['i32', randomI32(n)],
    ] as const;
    for (const [dtype, host] of cases) {
      using send = DeviceBuffer.from(dtype, host as never, { device: 0 });
      for (const op of ['sum', 'prod', 'max', 'min', 'avg'] as const) {
        const out =
          host.constructor === Int32Array
            ? new Int32Array(n).fill(-7)
            : poison(new (host.constructor as Float32ArrayConstructor)(n));
        using recv = DeviceBuffer.from(dtype, out as never, { device: 0 });
        const done = comm.allReduce(send, recv, { op, stream });
        expect(done).toBeInstanceOf(Promise);
        await done;
        const got = recv.read() as ArrayLike<number>;
        // One rank: the reduction of one value is that value (avg divides by 1), exactly.
        expect(Array.from(got), `${dtype} ${op}`).toEqual(Array.from(host as ArrayLike<number>));
      }
    }
    const z = randomF32(2 * n);
    using c = DeviceBuffer.from('c64', z, { device: 0 });
    await comm.allReduce(c, c, { op: 'sum', stream });
    expect(c.read()).toEqual(z);
  });

  it('count limits the elements; the rest of recv keeps its poison', async () => {
    const host = randomF32(n);
    using send = DeviceBuffer.from('f32', host, { device: 0 });
    using recv = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 0 });
    await comm.allReduce(send, recv, { stream, count: 100 });
    const got = recv.read() as Float32Array;
    expect(Array.from(got.subarray(0, 100))).toEqual(Array.from(host.subarray(0, 100)));
    expect(got.subarray(100).every(Number.isNaN)).toBe(true);
  });

  it('broadcast, reduce, allGather, reduceScatter and send/recv to itself move the data exactly', async () => {
    const host = randomF64(n);
    using send = DeviceBuffer.from('f64', host, { device: 0 });
    const check = async (name: string, run: (recv: DeviceBuffer<'f64'>) => Promise<void>): Promise<void> => {
      using recv = DeviceBuffer.from('f64', poison(new Float64Array(n)), { device: 0 });
      await run(recv);
      expect(Array.from(recv.read() as Float64Array), name).toEqual(Array.from(host));
    };
    await check('broadcast', (r) => comm.broadcast(send, r, { root: 0, stream }));
    await check('reduce', (r) => comm.reduce(send, r, { root: 0, op: 'max', stream }));
    await check('allGather', (r) => comm.allGather(send, r, { stream }));
    await check('reduceScatter', (r) => comm.reduceScatter(send, r, { op: 'sum', stream }));
    await check('send/recv', async (r) => {
      let sent: Promise<void> | undefined;
      let received: Promise<void> | undefined;
      const group = Communicator.group(() => {
        expect(inGroup()).toBe(true);
        sent = comm.send(send, { peer: 0, stream });
        received = comm.recv(r, { peer: 0, stream });
      });
      expect(inGroup()).toBe(false);
      await Promise.all([group, sent, received]);
    });
    // i16 cannot be reduced, but it moves (as bytes).
    const shorts = Int16Array.from({ length: n }, (_, i) => ((i * 7919) % 30000) - 15000);
    using s16 = DeviceBuffer.from('i16', shorts, { device: 0 });
    using r16 = DeviceBuffer.from('i16', new Int16Array(n).fill(-1), { device: 0 });
    await comm.broadcast(s16, r16, { root: 0, stream });
    expect(r16.read()).toEqual(shorts);
  });

  it('groups nest (only the outermost launches) and a group that returns a promise is refused, leaving NCCL usable', async () => {
    const host = randomF32(n);
    using send = DeviceBuffer.from('f32', host, { device: 0 });
    using a = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 0 });
    using b = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 0 });
    let inner: Promise<void> | undefined;
    const outer = Communicator.group(() => {
      void comm.allReduce(send, a, { stream });
      inner = Communicator.group(() => void comm.allReduce(send, b, { stream }));
    });
    await Promise.all([outer, inner]);
    expect(a.read()).toEqual(host);
    expect(b.read()).toEqual(host);
    expect(() => Communicator.group((async () => undefined) as never)).toThrow(/returned a promise/);
    expect(inGroup()).toBe(false);
    using c = DeviceBuffer.from('f32', poison(new Float32Array(n)), { device: 0 });
    await comm.allReduce(send, c, { stream });
    expect(c.read()).toEqual(host);
  });

  it('checks dtypes, operators, ranks, sizes and streams before NCCL sees the call', () => {
    using f = DeviceBuffer.alloc('f32', 16, { device: 0 });
    using g = DeviceBuffer.alloc('f64', 16, { device: 0 });
    using small = DeviceBuffer.alloc('f32', 8, { device: 0 });
    using s16 = DeviceBuffer.alloc('i16', 16, { device: 0 });
    expect(() => comm.allReduce(f, f, { op: 'mean' as never, stream })).toThrow(NcclOpError);
    expect(() => comm.allReduce(s16, s16, { stream })).toThrow(NcclDTypeError);
    expect(() => comm.allReduce(f, g as never, { stream })).toThrow(/holds f32 but .* holds f64/);
    expect(() => comm.allReduce(f, small, { stream })).toThrow(NcclRangeError);
    expect(() => comm.broadcast(f, f, { root: 1, stream })).toThrow(/root must be an integer from 0 to 0, got 1/);
    expect(() => comm.send(f, { peer: -1, stream })).toThrow(NcclRangeError);
    expect(() => comm.allReduce(f, f, {} as never)).toThrow(/options.stream must be a Stream/);
    expect(() => Communicator.initAll([0, 0])).toThrow(/device 0 is listed twice/);
    expect(() => Communicator.initRank({ id: 'abc' as never, rank: 0, size: 1 })).toThrow(/must be an NcclUniqueId/);
    expect(() => Communicator.initRank({ id: generateUniqueId(), rank: 1, size: 1 })).toThrow(NcclRangeError);
  });

  it('an NCCL failure is an NcclError with its status and NCCL own last-error message', () => {
    using f = DeviceBuffer.alloc('f32', 16, { device: 0 });
    let error: unknown;
    try {
      stream.use();
      ncclChecked().ncclAllReduce(BigInt(f.address), BigInt(f.address), 16, 99 as never, 0, comm.handle, stream.handle);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NcclError);
    expect((error as NcclError).status).toBe('ncclInvalidArgument');
    expect((error as NcclError).lastError ?? '').not.toBe('');
    console.log(`NCCL error as thrown: ${(error as Error).message}`);
  });

  it('a disposed communicator refuses work', () => {
    const [c] = Communicator.initAll([Device.get(0)]);
    c!.dispose();
    using f = DeviceBuffer.alloc('f32', 4, { device: 0 });
    expect(() => c!.allReduce(f, f, { stream })).toThrow(/disposed/);
  });
});

describe.skipIf(!(ncclReady.ok && twoGpus.ok))(titled('NCCL across GPUs', ncclReady.ok ? twoGpus : ncclReady), () => {
  it('every collective over all GPUs in one process equals the CPU reduction', async () => {
    const devices = Device.all();
    const size = devices.length;
    const comms = Communicator.initAll(devices);
    const streams = devices.map((device) => new Stream({ device }));
    try {
      const inputs = devices.map(() => randomF64(n));
      const sends = devices.map((device, r) => DeviceBuffer.from('f64', inputs[r]!, { device }));
      const sum = new Float64Array(n);
      const max = new Float64Array(n).fill(-Infinity);
      for (const x of inputs) for (let i = 0; i < n; i++) ((sum[i]! += x[i]!), (max[i] = Math.max(max[i]!, x[i]!)));
      const recvs = devices.map((device) => DeviceBuffer.from('f64', poison(new Float64Array(n * size)), { device }));
      await Communicator.group(() =>
        comms.forEach((c, r) => c.allReduce(sends[r]!, recvs[r]!, { op: 'sum', stream: streams[r]! })),
      );
      for (const r of recvs) {
        const got = (r.read() as Float64Array).subarray(0, n);
        for (let i = 0; i < n; i++) expect(Math.abs(got[i]! - sum[i]!)).toBeLessThan(1e-12 * size);
      }
      await Communicator.group(() =>
        comms.forEach((c, r) => c.allReduce(sends[r]!, recvs[r]!, { op: 'max', stream: streams[r]! })),
      );
      for (const r of recvs) expect(Array.from((r.read() as Float64Array).subarray(0, n))).toEqual(Array.from(max));
      const root = size - 1;
      await Communicator.group(() =>
        comms.forEach((c, r) => c.broadcast(sends[r]!, recvs[r]!, { root, stream: streams[r]!, count: n })),
      );
      for (const r of recvs)
        expect(Array.from((r.read() as Float64Array).subarray(0, n))).toEqual(Array.from(inputs[root]!));
      await Communicator.group(() =>
        comms.forEach((c, r) => c.allGather(sends[r]!, recvs[r]!, { stream: streams[r]! })),
      );
      const gathered = new Float64Array(n * size);
      inputs.forEach((x, r) => gathered.set(x, r * n));
      for (const r of recvs) expect(Array.from(r.read() as Float64Array)).toEqual(Array.from(gathered));
      // Ring: every rank sends to the next and receives from the previous.
      await Communicator.group(() =>
        comms.forEach((c, r) => {
          c.send(sends[r]!, { peer: (r + 1) % size, stream: streams[r]! });
          c.recv(recvs[r]!, { peer: (r + size - 1) % size, stream: streams[r]!, count: n });
        }),
      );
      recvs.forEach((b, r) =>
        expect(Array.from((b.read() as Float64Array).subarray(0, n))).toEqual(
          Array.from(inputs[(r + size - 1) % size]!),
        ),
      );
      for (const b of [...sends, ...recvs]) b.dispose();
    } finally {
      for (const c of comms) c.dispose();
      for (const s of streams) s.dispose();
    }
  });

  it('a stream of another device is refused before NCCL sees it', () => {
    const [c] = Communicator.initAll([0]);
    using other = new Stream({ device: 1 });
    using f = DeviceBuffer.alloc('f32', 4, { device: 0 });
    expect(() => c!.allReduce(f, f, { stream: other })).toThrow(/belongs to .*not to device 0/);
    c!.dispose();
  });

  it('every collective across two processes (initRank, id as base64) equals the CPU reduction', async () => {
    const id = generateUniqueId();
    const fixture = join(ROOT, 'test/gpu/multi/fixtures/nccl-rank.ts');
    const seed = (Math.random() * 2 ** 31) | 0;
    const ranks = [0, 1].map((rank) =>
      execa('node', ['--import', 'tsx', fixture], {
        cwd: ROOT,
        env: {
          TSCUDA_NCCL_ID: id.toBase64(),
          TSCUDA_NCCL_RANK: String(rank),
          TSCUDA_NCCL_SIZE: '2',
          TSCUDA_NCCL_SEED: String(seed),
        },
        timeout: 120_000,
        reject: false,
      }),
    );
    const results = await Promise.all(ranks);
    for (const r of results) {
      if (r.exitCode !== 0) throw new Error(`rank exited ${r.exitCode}:\n${r.stdout}\n${r.stderr}`);
      const line = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
        rank: number;
        nvls: string;
        errors: Record<string, number | null>;
      };
      expect(line.nvls).toBe('0');
      // A NaN in the output is worst = Infinity, which JSON prints as null.
      for (const [name, err] of Object.entries(line.errors))
        expect(err ?? Infinity, `rank ${line.rank} ${name}`).toBeLessThan(1e-12);
      console.log(`two-process NCCL rank ${line.rank}: ${JSON.stringify(line.errors)}`);
    }
  }, 180_000);
});
