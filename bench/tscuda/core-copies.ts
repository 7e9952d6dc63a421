/**
 * tscuda's side of bench/native/bench.cu's copy, allocation and FFT metrics (core.ts lists them with
 * the launch and event metrics), mirrored call for call with bench.cu's sizes.
 */
import { StreamOrderedAllocator } from '../../src/orchestration/index.js';
import { DeviceBuffer, Event, FftPlan, HostBuffer, Stream } from '../../src/runtime/index.js';
import type { FftType, LaunchConfig } from '../../src/runtime/index.js';
import { pairedWithFloor, pairedPerIterWithFloor, gbps, loopMetric, repeated } from './timing.js';
import { rawAllocFree, rawSmallCopy } from './floors.js';
import { disposeAll, type BenchContext, type MeasuredMetric } from './types.js';

/** bench.cu's size of a large pinned copy, bytes. */
export const BIG_BYTES = 256 * 2 ** 20;
/** bench.cu's size of a small copy, bytes. */
export const SMALL_BYTES = 4096;
/** bench.cu's size of an allocation, bytes. */
export const ALLOC_BYTES = 2 ** 20;
/** bench.cu's FFT length. */
export const FFT_N = 4096;
/** bench.cu's FFT batch. */
export const FFT_BATCH = 8192;

/** A pinned copy of BIG_BYTES one way, GB/s. */
export function pinnedCopy(ctx: BenchContext, direction: 'h2d' | 'd2h'): MeasuredMetric {
  const s = new Stream({ label: `bench ${direction}_pinned` });
  const host = HostBuffer.alloc('u8', BIG_BYTES, { label: 'bench pinned' });
  const dev = DeviceBuffer.alloc('u8', BIG_BYTES, { label: 'bench device' });
  const t0 = new Event({ timing: true, label: 'bench t0' });
  const t1 = new Event({ timing: true, label: 'bench t1' });
  try {
    host.array.fill(1);
    const opts = { stream: s };
    const one = (): number => {
      t0.record(s);
      if (direction === 'h2d') dev.write(host, opts);
      else dev.read(host, opts);
      t1.record(s);
      t1.synchronize();
      return gbps(BIG_BYTES, Event.elapsedMs(t0, t1));
    };
    return { pass: repeated(ctx.timing, 2, one) };
  } finally {
    disposeAll(s, host, dev, t0, t1);
  }
}

/** H2D on s1 and D2H on s2 at once, from an event on s1 that s2 waits for to one on s1 after s1 waited for s2. */
export function bidirPinned(ctx: BenchContext): MeasuredMetric {
  const s1 = new Stream({ label: 'bench bidir s1' });
  const s2 = new Stream({ label: 'bench bidir s2' });
  const hSrc = HostBuffer.alloc('u8', BIG_BYTES, { label: 'bench h_src' });
  const hDst = HostBuffer.alloc('u8', BIG_BYTES, { label: 'bench h_dst' });
  const dDst = DeviceBuffer.alloc('u8', BIG_BYTES, { label: 'bench d_dst' });
  const dSrc = DeviceBuffer.alloc('u8', BIG_BYTES, { label: 'bench d_src' });
  const start = new Event({ timing: true, label: 'bench start' });
  const end = new Event({ timing: true, label: 'bench end' });
  const s2Done = new Event({ label: 'bench s2 done' });
  try {
    hSrc.array.fill(1);
    hDst.array.fill(1);
    const on1 = { stream: s1 };
    const on2 = { stream: s2 };
    const one = (): number => {
      start.record(s1);
      s2.waitEvent(start);
      dDst.write(hSrc, on1);
      dSrc.read(hDst, on2);
      s2Done.record(s2);
      s1.waitEvent(s2Done);
      end.record(s1);
      end.synchronize();
      return gbps(2 * BIG_BYTES, Event.elapsedMs(start, end));
    };
    return { pass: repeated(ctx.timing, 2, one) };
  } finally {
    disposeAll(s1, s2, hSrc, hDst, dDst, dSrc, start, end, s2Done);
  }
}

/** A synchronous write from a plain Float32Array; the context is synchronised around it as in bench.cu. */
export function h2dPageable(ctx: BenchContext): MeasuredMetric {
  const n = BIG_BYTES / 4;
  const host = new Float32Array(n).fill(1); // every page touched before timing
  const dev = DeviceBuffer.alloc('f32', n, { label: 'bench pageable target' });
  try {
    const context = ctx.context;
    const one = (): number => {
      context.synchronize();
      const t0 = performance.now();
      dev.write(host);
      context.synchronize();
      return BIG_BYTES / 1e9 / ((performance.now() - t0) / 1e3);
    };
    return {
      pass: repeated(ctx.timing, 1, one),
      notes: ['DeviceBuffer.write(Float32Array) without a stream (cuMemcpyHtoD)'],
    };
  } finally {
    disposeAll(dev);
  }
}

/** SMALL_BYTES to the device and back on one stream, then a stream synchronize, µs (beside the raw driver floor). */
export function smallCopyRoundtrip(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench small_copy' });
  const hSrc = HostBuffer.alloc('u8', SMALL_BYTES, { label: 'bench small src' });
  const hDst = HostBuffer.alloc('u8', SMALL_BYTES, { label: 'bench small dst' });
  const dev = DeviceBuffer.alloc('u8', SMALL_BYTES, { label: 'bench small dev' });
  try {
    hSrc.array.fill(1);
    const opts = { stream: s };
    const body = (): void => {
      dev.write(hSrc, opts);
      dev.read(hDst, opts);
      s.synchronize();
    };
    const raw = rawSmallCopy(hSrc, hDst, dev, SMALL_BYTES, s);
    const f = pairedPerIterWithFloor(
      ctx.timing,
      'small_copy_roundtrip_us',
      body,
      raw,
      'cuMemcpyHtoDAsync + cuMemcpyDtoHAsync + cuStreamSynchronize',
      ctx.log,
    );
    return { pass: f.pass, floor: f.floor, notes: f.notes };
  } finally {
    disposeAll(s, hSrc, hDst, dev);
  }
}

/**
 * tscuda's stream-ordered allocator (size classes over a MemoryPool, reuse in stream order)
 * against C's cuMemAllocAsync/cuMemFreeAsync; the raw DeviceBuffer.alloc({ stream }) path,
 * one driver allocation and one owning object per call, is measured too and given in the notes.
 */
export function allocFreeAsync(ctx: BenchContext): MeasuredMetric {
  const s = new Stream({ label: 'bench alloc_free' });
  const allocator = new StreamOrderedAllocator({ label: 'bench allocator' });
  try {
    const descriptor = { stream: s };
    const raw = loopMetric(
      ctx.timing,
      (n) => {
        for (let i = 0; i < n; i++) DeviceBuffer.alloc('u8', ALLOC_BYTES, descriptor).dispose();
      },
      () => s.synchronize(),
    );
    const f = pairedWithFloor(
      ctx.timing,
      'alloc_free_async_us',
      (n) => {
        for (let i = 0; i < n; i++) allocator.freeForStream(allocator.allocate('u8', ALLOC_BYTES, s), s);
      },
      rawAllocFree(ALLOC_BYTES, s),
      () => s.synchronize(),
      'cuMemAllocAsync + cuMemFreeAsync (1 MiB)',
      ctx.log,
    );
    return {
      pass: f.pass,
      floor: f.floor,
      notes: [
        ...f.notes,
        'StreamOrderedAllocator.allocate(u8, 1 MiB, stream) + freeForStream on the same stream (size-class reuse, no driver call once warm)',
        `raw DeviceBuffer.alloc(u8, 1 MiB, { stream }).dispose() (cuMemAllocAsync/cuMemFreeAsync + an owning object): ${raw.median.toFixed(3)} us`,
      ],
    };
  } finally {
    allocator.dispose();
    disposeAll(s);
  }
}

/**
 * Batched 1D FFT, 8192 transforms of 4096 points, forward, in place; the input is refilled
 * (untimed, one fill kernel, as bench.cu does) before each timed execution.
 */
export function fft(ctx: BenchContext, type: Extract<FftType, 'C2C' | 'Z2Z'>): MeasuredMetric {
  const elems = FFT_N * FFT_BATCH;
  const reals = elems * 2;
  const s = new Stream({ label: `bench fft ${type}` });
  const data = DeviceBuffer.alloc(type === 'C2C' ? 'c64' : 'c128', elems, { label: `bench fft ${type} data` });
  const t0 = new Event({ timing: true, label: 'bench fft t0' });
  const t1 = new Event({ timing: true, label: 'bench fft t1' });
  let plan: FftPlan | undefined;
  try {
    plan = FftPlan.create({
      shape: [FFT_N],
      type,
      batch: FFT_BATCH,
      stream: s,
      label: `bench ${type} ${FFT_N}x${FFT_BATCH}`,
    });
    const fillCfg: LaunchConfig = { grid: 1024, block: 256, stream: s };
    const fill =
      type === 'C2C'
        ? () => ctx.kernels.fillF32.launch(fillCfg, data, 0.01, reals)
        : () => ctx.kernels.fillF64.launch(fillCfg, data, 0.01, reals);
    const p = plan;
    const one = (): number => {
      fill();
      t0.record(s);
      p.forward(data);
      t1.record(s);
      t1.synchronize();
      return Event.elapsedMs(t0, t1);
    };
    return {
      pass: repeated(ctx.timing, 3, one),
      notes: [
        'FftPlan.create({ shape: [4096], batch: 8192 }).forward(data), in place; refilled with a constant (bench.cu: a pattern) before each run',
      ],
    };
  } finally {
    disposeAll(s, data, t0, t1, plan);
  }
}
