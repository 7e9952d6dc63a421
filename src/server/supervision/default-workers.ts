/**
 * How many worker processes `tscuda serve` runs when `--workers` is not given, from the host.
 * CUDA-free: the caller counts the GPUs.
 *
 * One Node process moves at most about one core's worth of HTTP: past a few hundred 4 MiB
 * requests or a few thousand small ones per second a worker's event loop is the bound (measured
 * against a bare node:http server doing the same moves: one process is at Node's transport limit,
 * two move twice as much), while the GPU behind it is mostly idle. So the default spreads the
 * workers over the host's cores: half of them, leaving the other half to the kernel's network
 * stack, the garbage collector's threads and each worker's completion poller. Each worker also
 * holds a CUDA context, its lanes' pinned buffers and device memory on its GPU, so there are at
 * most WORKERS_PER_GPU per GPU the server runs on. At least one.
 */

/** The most workers the default puts on one GPU: each holds a CUDA context and its lanes' memory there. */
export const WORKERS_PER_GPU = 8;

/** The default worker count for a host of `cpus` logical CPUs serving on `gpus` GPUs (0: none visible; the server still starts one worker). */
export function defaultWorkerCount(cpus: number, gpus: number): number {
  for (const [name, v] of [
    ['cpus', cpus],
    ['gpus', gpus],
  ] as const)
    if (!Number.isSafeInteger(v) || v < 0)
      throw new RangeError(`defaultWorkerCount: ${name} must be an integer >= 0, got ${String(v)}`);
  return Math.max(1, Math.min(Math.floor(cpus / 2), WORKERS_PER_GPU * Math.max(1, gpus)));
}
