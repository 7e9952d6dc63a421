/**
 * The FFI floors of the per-call metrics (issue 26): the same driver calls a tscuda call makes,
 * through koffi directly with handles captured once, no tscuda code around them. What a
 * TypeScript wrapper can promise is this floor (the goal: tscuda <= 1.1x it); C's figure stays
 * beside it, as koffi alone costs >= 1.25x C on fast hosts.
 */
import { driver as driverApi, driverOutPointers } from '../../src/ffi/index.js';
import type { DeviceBuffer, HostBuffer, Kernel, Stream } from '../../src/runtime/index.js';

function check(status: number, call: string): void {
  if (status !== 0) throw new Error(`raw ${call} failed with CUresult ${status}`);
}

/** cuLaunchKernel on one block, with the arguments the kernel's parameter block holds (n calls, the first checked). */
export function rawLaunchLoop(k: Kernel, s: Stream): (n: number) => void {
  const launch = driverApi().cuLaunchKernel;
  const [fn, params, sh] = [k.function, k.parameterArray, s.handle];
  return (n) => {
    check(launch(fn, 1, 1, 1, 1, 1, 1, 0, sh, params as never, null), `cuLaunchKernel of "${k.name}"`);
    for (let i = 1; i < n; i++) launch(fn, 1, 1, 1, 1, 1, 1, 0, sh, params as never, null);
  };
}

/** cuLaunchKernel + cuStreamSynchronize: launch_sync_roundtrip_us's calls. */
export function rawLaunchSync(k: Kernel, s: Stream): () => void {
  const launch = driverApi().cuLaunchKernel;
  const sync = driverApi().cuStreamSynchronize;
  const [fn, params, sh] = [k.function, k.parameterArray, s.handle];
  return () => {
    launch(fn, 1, 1, 1, 1, 1, 1, 0, sh, params as never, null);
    sync(sh);
  };
}

/**
 * cuLaunchKernel, then cuStreamQuery once per event-loop turn (setImmediate) until the stream is
 * idle: what `await stream.done()` does (its poller queries on setImmediate while waits are
 * short), without the poller's bookkeeping or a promise per stream.
 */
export function rawLaunchAwait(k: Kernel, s: Stream): () => Promise<void> {
  const launch = driverApi().cuLaunchKernel;
  const query = driverApi().cuStreamQuery;
  const [fn, params, sh] = [k.function, k.parameterArray, s.handle];
  return () =>
    new Promise<void>((resolve, reject) => {
      launch(fn, 1, 1, 1, 1, 1, 1, 0, sh, params as never, null);
      const poll = (): void => {
        const status = query(sh);
        if (status === 0) resolve();
        else if (status === 600)
          setImmediate(poll); // CUDA_ERROR_NOT_READY
        else reject(new Error(`raw cuStreamQuery failed with CUresult ${status}`));
      };
      poll();
    });
}

/** cuMemcpyHtoDAsync + cuMemcpyDtoHAsync of `bytes` between pinned memory and the device, then cuStreamSynchronize. */
export function rawSmallCopy(
  src: HostBuffer<'u8'>,
  dst: HostBuffer<'u8'>,
  dev: DeviceBuffer<'u8'>,
  bytes: number,
  s: Stream,
): () => void {
  const { cuMemcpyHtoDAsync: memcpyHtoDAsync, cuMemcpyDtoHAsync: memcpyDtoHAsync } = driverApi();
  const sync = driverApi().cuStreamSynchronize;
  const [d, hs, hd, sh] = [dev.address, src.address, dst.address, s.handle];
  return () => {
    memcpyHtoDAsync(d, hs as never, bytes, sh);
    memcpyDtoHAsync(hd as never, d, bytes, sh);
    sync(sh);
  };
}

/** cuMemAllocAsync + cuMemFreeAsync of `bytes` on `s` (n pairs). */
export function rawAllocFree(bytes: number, s: Stream): (n: number) => void {
  // The out-parameter as a plain pointer, as the runtime's own allocations pass it.
  const memAllocAsync = driverOutPointers().cuMemAllocAsync as (
    dptr: BigUint64Array,
    bytes: number,
    stream: Stream['handle'],
  ) => number;
  const memFreeAsync = driverApi().cuMemFreeAsync;
  const cell = new BigUint64Array(1);
  const sh = s.handle;
  return (n) => {
    for (let i = 0; i < n; i++) {
      check(memAllocAsync(cell, bytes, sh), 'cuMemAllocAsync');
      memFreeAsync(Number(cell[0]), sh);
    }
  };
}
