"""CuPy peer of the tscuda microbenchmarks.

Measures the same metrics as bench/native/bench.cu through CuPy's own API (RawModule
kernels, cupy.cuda streams and events, cupyx pinned arrays, MemoryAsyncPool, stream
capture into cupy.cuda.graph, cupy.fft) and prints exactly one JSON line on stdout:
{"peer":"cupy","available":true,"version":...,"metrics":{name:{median,spread,samples[,note]}}}
or {"peer":"cupy","available":false,"reason":...} when CuPy or a GPU is missing (exit 0).
Options: --only REGEX (re.search on metric names), --reps N, --iters N. Progress goes
to stderr. Where CuPy's nearest operation differs from the C one, the metric has "note".
"""

import argparse
import gc
import json
import math
import os
import re
import sys
import time
import traceback

PEER = "cupy"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.PEER = PEER
from peer_common import *  # noqa: E402,F401,F403

KERNELS = r"""
extern "C" __global__ void empty() {}
extern "C" __global__ void k4(float* a, float* b, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = b[i] * s;
}
"""

# ----------------------------------------------------------------------------------
# CuPy metrics
# ----------------------------------------------------------------------------------

np = cp = cupyx = None
_kernels = {}


def kernel(name):
    if not _kernels:
        mod = cp.RawModule(code=KERNELS)
        _kernels["empty"] = mod.get_function("empty")
        _kernels["k4"] = mod.get_function("k4")
    return _kernels[name]


def new_stream():
    return cp.cuda.Stream(non_blocking=True)


def m_launch_empty(args):
    s = new_stream()
    f, grid, block, kargs = kernel("empty"), (1,), (1,), ()

    def run(n):
        for _ in range(n):
            f(grid, block, kargs)

    with s:
        return summarize(loop_samples(run, s.synchronize, args))


def m_launch_4args(args):
    s = new_stream()
    a = cp.zeros(64, dtype=cp.float32)
    b = cp.zeros(64, dtype=cp.float32)
    f, grid, block = kernel("k4"), (1,), (1,)
    kargs = (a, b, np.int32(0), np.float32(2.0))  # built once

    def run(n):
        for _ in range(n):
            f(grid, block, kargs)

    with s:
        return summarize(loop_samples(run, s.synchronize, args),
                         "RawKernel call; CuPy packs the argument tuple on every launch")


def m_launch_sync_roundtrip(args):
    s = new_stream()
    f, grid, block, kargs = kernel("empty"), (1,), (1,), ()
    sync = s.synchronize

    def body():
        f(grid, block, kargs)
        sync()

    with s:
        return summarize(per_iter_samples(body, args))


def m_await_completion(args):
    s = new_stream()
    f, grid, block, kargs = kernel("empty"), (1,), (1,), ()
    sync = s.synchronize

    def body():
        f(grid, block, kargs)
        sync()

    with s:
        return summarize(per_iter_samples(body, args),
                         "launch + Stream.synchronize() (CuPy has no awaitable completion)")


def m_event_record(args):
    s = new_stream()
    ev = cp.cuda.Event(block=False, disable_timing=True)
    rec = ev.record

    def run(n):
        for _ in range(n):
            rec(s)

    return summarize(loop_samples(run, s.synchronize, args))


def m_event_query(args):
    s = new_stream()
    ev = cp.cuda.Event(block=False, disable_timing=True)
    ev.record(s)
    ev.synchronize()
    # CuPy's Event has no query(); its `done` property calls cudaEventQuery.
    def run(n):
        for _ in range(n):
            if not ev.done:
                raise RuntimeError("event not complete")

    return summarize(loop_samples(run, lambda: None, args))


def timed_events():
    return cp.cuda.Event(), cp.cuda.Event()


def pinned(nbytes):
    h = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
    h.fill(1)
    return h


def m_h2d_pinned(args):
    s = new_stream()
    h = pinned(BIG_BYTES)
    d = cp.empty(BIG_BYTES, dtype=cp.uint8)
    e0, e1 = timed_events()

    def one():
        e0.record(s)
        d.set(h, stream=s)
        e1.record(s)
        e1.synchronize()
        return gbps(BIG_BYTES, cp.cuda.get_elapsed_time(e0, e1))

    return summarize(repeated(one, args))


def m_d2h_pinned(args):
    s = new_stream()
    h = pinned(BIG_BYTES)
    d = cp.ones(BIG_BYTES, dtype=cp.uint8)
    e0, e1 = timed_events()

    def one():
        e0.record(s)
        d.get(stream=s, out=h, blocking=False)
        e1.record(s)
        e1.synchronize()
        return gbps(BIG_BYTES, cp.cuda.get_elapsed_time(e0, e1))

    return summarize(repeated(one, args))


def m_bidir_pinned(args):
    s1, s2 = new_stream(), new_stream()
    h_src, h_dst = pinned(BIG_BYTES), pinned(BIG_BYTES)
    d_dst = cp.empty(BIG_BYTES, dtype=cp.uint8)
    d_src = cp.ones(BIG_BYTES, dtype=cp.uint8)
    start, end = timed_events()
    s2_done = cp.cuda.Event(block=False, disable_timing=True)

    def one():
        start.record(s1)
        s2.wait_event(start)
        d_dst.set(h_src, stream=s1)
        d_src.get(stream=s2, out=h_dst, blocking=False)
        s2_done.record(s2)
        s1.wait_event(s2_done)
        end.record(s1)
        end.synchronize()
        return gbps(2 * BIG_BYTES, cp.cuda.get_elapsed_time(start, end))

    return summarize(repeated(one, args))


def m_h2d_pageable(args):
    s = new_stream()
    h = np.ones(BIG_BYTES, dtype=np.uint8)  # pageable, every page touched
    d = cp.empty(BIG_BYTES, dtype=cp.uint8)

    def one():
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter_ns()
        d.set(h, stream=s)
        s.synchronize()
        return BIG_BYTES / 1e9 / ((time.perf_counter_ns() - t0) / 1e9)

    return summarize(repeated(one, args, warmup=1))


def m_small_copy_roundtrip(args):
    s = new_stream()
    h_src, h_dst = pinned(SMALL_BYTES), pinned(SMALL_BYTES)
    d = cp.empty(SMALL_BYTES, dtype=cp.uint8)
    sync = s.synchronize

    def body():
        d.set(h_src, stream=s)
        d.get(stream=s, out=h_dst, blocking=False)
        sync()

    return summarize(per_iter_samples(body, args))


def m_alloc_free_async(args):
    s = new_stream()
    pool = cp.cuda.MemoryAsyncPool()
    malloc = pool.malloc

    def run(n):
        for _ in range(n):
            p = malloc(ALLOC_BYTES)
            del p  # frees with cudaFreeAsync on the current stream

    with s:
        return summarize(loop_samples(run, s.synchronize, args),
                         "MemoryAsyncPool.malloc + release (cudaMallocAsync/cudaFreeAsync, "
                         "with CuPy's pool-usage queries)")


def m_graph_replay_per_kernel(args):
    s = new_stream()
    f, grid, block, kargs = kernel("empty"), (1,), (1,), ()
    with s:
        f(grid, block, kargs)  # loaded before capture
        s.synchronize()
        s.begin_capture()
        for _ in range(GRAPH_KERNELS):
            f(grid, block, kargs)
        g = s.end_capture()
    g.upload(s)
    launch = g.launch

    def one():
        t0 = time.perf_counter_ns()
        for _ in range(GRAPH_LAUNCHES):
            launch(s)
        s.synchronize()
        return (time.perf_counter_ns() - t0) / 1e3 / (GRAPH_LAUNCHES * GRAPH_KERNELS)

    return summarize(repeated(one, args, warmup=1))


def m_coordinator_edge(args):
    s1, s2 = new_stream(), new_stream()
    ev = cp.cuda.Event(block=False, disable_timing=True)
    rec, wait = ev.record, s2.wait_event

    def run(n):
        for _ in range(n):
            rec(s1)
            wait(ev)

    def sync():
        s1.synchronize()
        s2.synchronize()

    return summarize(loop_samples(run, sync, args))


def fft_metric(args, dtype, real):
    s = new_stream()
    rs = cp.random.RandomState(1)
    x = rs.standard_normal((FFT_BATCH, FFT_N), dtype=real).astype(dtype)
    e0, e1 = timed_events()
    cp.cuda.Device().synchronize()

    def one():
        with s:
            e0.record(s)
            y = cp.fft.fft(x, axis=-1)
            e1.record(s)
            e1.synchronize()
            del y
        return cp.cuda.get_elapsed_time(e0, e1)

    return summarize(repeated(one, args, warmup=3),
                     "cupy.fft.fft, out-of-place (output from the memory pool), cached plan")


def m_fft_c2c(args):
    return fft_metric(args, cp.complex64, cp.float32)


def m_fft_z2z(args):
    return fft_metric(args, cp.complex128, cp.float64)


TABLE = [
    ("launch_empty_us", m_launch_empty),
    ("launch_4args_us", m_launch_4args),
    ("launch_sync_roundtrip_us", m_launch_sync_roundtrip),
    ("await_completion_us", m_await_completion),
    ("event_record_us", m_event_record),
    ("event_query_us", m_event_query),
    ("h2d_pinned_gbps", m_h2d_pinned),
    ("d2h_pinned_gbps", m_d2h_pinned),
    ("bidir_pinned_gbps", m_bidir_pinned),
    ("h2d_pageable_gbps", m_h2d_pageable),
    ("small_copy_roundtrip_us", m_small_copy_roundtrip),
    ("alloc_free_async_us", m_alloc_free_async),
    ("graph_replay_per_kernel_us", m_graph_replay_per_kernel),
    ("coordinator_edge_us", m_coordinator_edge),
    ("fft_c2c_4096x8192_ms", m_fft_c2c),
    ("fft_z2z_4096x8192_ms", m_fft_z2z),
]


def release_memory():
    cp.cuda.Device().synchronize()
    gc.collect()
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()


def main():
    global np, cp, cupyx
    args = parse_args()
    out = json_channel()
    try:
        import numpy
        import cupy
        import cupyx as cupyx_mod

        np, cp, cupyx = numpy, cupy, cupyx_mod
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
        cp.cuda.Device(0).use()
        name = cp.cuda.runtime.getDeviceProperties(0)["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        rt = cp.cuda.runtime.runtimeGetVersion()
        drv = cp.cuda.runtime.driverGetVersion()
    except Exception as e:  # noqa: BLE001 - any failure here means "not available"
        log(f"[{PEER}] not available: {type(e).__name__}: {e}")
        emit(out, {"peer": PEER, "available": False, "reason": f"{type(e).__name__}: {e}"})
        return 0
    version = (f"cupy {cp.__version__}, CUDA runtime {rt // 1000}.{rt % 1000 // 10}, "
               f"driver {drv // 1000}.{drv % 1000 // 10}, {name}")
    run_metrics(out, version, TABLE, args, between=release_memory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
