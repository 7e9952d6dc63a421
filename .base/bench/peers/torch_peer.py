"""PyTorch peer of the tscuda microbenchmarks.

Measures the metrics of bench/native/bench.cu through PyTorch's own API (torch.cuda
streams and events, pinned tensors with non_blocking copies, the caching allocator,
torch.cuda.CUDAGraph, torch.fft) and prints exactly one JSON line on stdout:
{"peer":"torch","available":true,"version":...,"metrics":{name:{median,spread,samples[,note]}}}
or {"peer":"torch","available":false,"reason":...} when PyTorch or a GPU is missing
(exit 0). Options: --only REGEX (re.search on metric names), --reps N, --iters N.
PyTorch cannot launch an arbitrary (empty) kernel, so the launch metrics time the
nearest trivial op on a 1-element tensor; every such metric carries a "note".
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

PEER = "torch"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402

peer_common.PEER = PEER
from peer_common import *  # noqa: E402,F401,F403

# ----------------------------------------------------------------------------------
# PyTorch metrics
# ----------------------------------------------------------------------------------

torch = None
DEV = None
LAUNCH_NOTE = "x.add_(1) on a 1-element tensor (PyTorch cannot launch an empty kernel)"


def new_stream():
    return torch.cuda.Stream(device=DEV)


def m_launch_empty(args):
    s = new_stream()
    x = torch.zeros(1, device=DEV)

    def run(n):
        for _ in range(n):
            x.add_(1)

    with torch.cuda.stream(s):
        return summarize(loop_samples(run, s.synchronize, args), LAUNCH_NOTE)


def m_launch_4args(args):
    s = new_stream()
    a, b, c = (torch.zeros(1, device=DEV) for _ in range(3))
    add = torch.add

    def run(n):
        for _ in range(n):
            add(a, b, alpha=2.0, out=c)

    with torch.cuda.stream(s):
        return summarize(loop_samples(run, s.synchronize, args),
                         "torch.add(a, b, alpha=2.0, out=c) on 1-element tensors "
                         "(PyTorch cannot launch an arbitrary kernel)")


def launch_then_sync(s):
    x = torch.zeros(1, device=DEV)
    sync = s.synchronize

    def body():
        x.add_(1)
        sync()

    return body


def m_launch_sync_roundtrip(args):
    s = new_stream()
    body = launch_then_sync(s)
    with torch.cuda.stream(s):
        return summarize(per_iter_samples(body, args), LAUNCH_NOTE + " + Stream.synchronize()")


def m_await_completion(args):
    s = new_stream()
    body = launch_then_sync(s)
    with torch.cuda.stream(s):
        return summarize(per_iter_samples(body, args),
                         "x.add_(1) + Stream.synchronize() (PyTorch has no awaitable completion)")


def m_event_record(args):
    s = new_stream()
    ev = torch.cuda.Event(enable_timing=False)
    rec = ev.record

    def run(n):
        for _ in range(n):
            rec(s)

    return summarize(loop_samples(run, s.synchronize, args))


def m_event_query(args):
    s = new_stream()
    ev = torch.cuda.Event(enable_timing=False)
    ev.record(s)
    ev.synchronize()
    query = ev.query

    def run(n):
        for _ in range(n):
            if not query():
                raise RuntimeError("event not complete")

    return summarize(loop_samples(run, lambda: None, args))


def timed_events():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def pinned(nbytes):
    h = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    h.fill_(1)
    return h


def device_bytes(nbytes, fill=None):
    d = torch.empty(nbytes, dtype=torch.uint8, device=DEV)
    if fill is not None:
        d.fill_(fill)
    return d


def m_h2d_pinned(args):
    s = new_stream()
    h, d = pinned(BIG_BYTES), device_bytes(BIG_BYTES)
    e0, e1 = timed_events()
    torch.cuda.synchronize()

    def one():
        with torch.cuda.stream(s):
            e0.record(s)
            d.copy_(h, non_blocking=True)
            e1.record(s)
        e1.synchronize()
        return gbps(BIG_BYTES, e0.elapsed_time(e1))

    return summarize(repeated(one, args))


def m_d2h_pinned(args):
    s = new_stream()
    h, d = pinned(BIG_BYTES), device_bytes(BIG_BYTES, 1)
    e0, e1 = timed_events()
    torch.cuda.synchronize()

    def one():
        with torch.cuda.stream(s):
            e0.record(s)
            h.copy_(d, non_blocking=True)
            e1.record(s)
        e1.synchronize()
        return gbps(BIG_BYTES, e0.elapsed_time(e1))

    return summarize(repeated(one, args))


def m_bidir_pinned(args):
    s1, s2 = new_stream(), new_stream()
    h_src, h_dst = pinned(BIG_BYTES), pinned(BIG_BYTES)
    d_dst, d_src = device_bytes(BIG_BYTES), device_bytes(BIG_BYTES, 1)
    start, end = timed_events()
    s2_done = torch.cuda.Event(enable_timing=False)
    torch.cuda.synchronize()

    def one():
        start.record(s1)
        s2.wait_event(start)
        with torch.cuda.stream(s1):
            d_dst.copy_(h_src, non_blocking=True)
        with torch.cuda.stream(s2):
            h_dst.copy_(d_src, non_blocking=True)
        s2_done.record(s2)
        s1.wait_event(s2_done)
        end.record(s1)
        end.synchronize()
        return gbps(2 * BIG_BYTES, start.elapsed_time(end))

    return summarize(repeated(one, args))


def m_h2d_pageable(args):
    s = new_stream()
    h = torch.ones(BIG_BYTES, dtype=torch.uint8)  # pageable, every page touched
    d = device_bytes(BIG_BYTES)

    def one():
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        with torch.cuda.stream(s):
            d.copy_(h)
        s.synchronize()
        return BIG_BYTES / 1e9 / ((time.perf_counter_ns() - t0) / 1e9)

    return summarize(repeated(one, args, warmup=1))


def m_small_copy_roundtrip(args):
    s = new_stream()
    h_src, h_dst = pinned(SMALL_BYTES), pinned(SMALL_BYTES)
    d = device_bytes(SMALL_BYTES)
    sync = s.synchronize

    def body():
        d.copy_(h_src, non_blocking=True)
        h_dst.copy_(d, non_blocking=True)
        sync()

    with torch.cuda.stream(s):
        return summarize(per_iter_samples(body, args))


def m_alloc_free_async(args):
    s = new_stream()
    empty, u8 = torch.empty, torch.uint8
    try:
        backend = torch.cuda.get_allocator_backend()
    except Exception:  # noqa: BLE001 - older PyTorch
        backend = "native"

    def run(n):
        for _ in range(n):
            t = empty(ALLOC_BYTES, dtype=u8, device=DEV)
            del t

    with torch.cuda.stream(s):
        xs = loop_samples(run, s.synchronize, args)
    if backend == "cudaMallocAsync":
        note = "torch.empty(1 MiB) + del with PYTORCH_CUDA_ALLOC_CONF backend:cudaMallocAsync"
    else:
        note = ("torch.empty(1 MiB) + del through PyTorch's caching allocator (backend "
                f"{backend}), not cudaMallocAsync")
    return summarize(xs, note)


def m_graph_replay_per_kernel(args):
    s = new_stream()
    x = torch.zeros(1, device=DEV)
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # warm-up before capture, as PyTorch asks
            x.add_(1)
    s.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for _ in range(GRAPH_KERNELS):
            x.add_(1)
    torch.cuda.synchronize()
    replay = g.replay

    def one():
        with torch.cuda.stream(s):
            t0 = time.perf_counter_ns()
            for _ in range(GRAPH_LAUNCHES):
                replay()
            s.synchronize()
            return (time.perf_counter_ns() - t0) / 1e3 / (GRAPH_LAUNCHES * GRAPH_KERNELS)

    return summarize(repeated(one, args, warmup=1),
                     "CUDAGraph.replay() of 100 captured x.add_(1) kernels")


def m_coordinator_edge(args):
    s1, s2 = new_stream(), new_stream()
    ev = torch.cuda.Event(enable_timing=False)
    rec, wait = ev.record, s2.wait_event

    def run(n):
        for _ in range(n):
            rec(s1)
            wait(ev)

    def sync():
        s1.synchronize()
        s2.synchronize()

    return summarize(loop_samples(run, sync, args))


def fft_metric(args, dtype):
    s = new_stream()
    gen = torch.Generator(device=DEV)
    gen.manual_seed(1)
    x = torch.randn(FFT_BATCH, FFT_N, dtype=dtype, device=DEV, generator=gen)
    e0, e1 = timed_events()
    torch.cuda.synchronize()

    def one():
        with torch.cuda.stream(s):
            e0.record(s)
            y = torch.fft.fft(x, dim=-1)
            e1.record(s)
        e1.synchronize()
        del y
        return e0.elapsed_time(e1)

    return summarize(repeated(one, args, warmup=3),
                     "torch.fft.fft, out-of-place (output from the caching allocator), "
                     "cached plan")


def m_fft_c2c(args):
    return fft_metric(args, torch.complex64)


def m_fft_z2z(args):
    return fft_metric(args, torch.complex128)


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
    torch.cuda.synchronize()
    gc.collect()
    torch.cuda.empty_cache()


def main():
    global torch, DEV
    args = parse_args()
    out = json_channel()
    try:
        import torch as torch_mod

        torch = torch_mod
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        DEV = torch.device("cuda", 0)
        torch.cuda.set_device(DEV)
        torch.zeros(1, device=DEV)  # creates the context
        name = torch.cuda.get_device_name(DEV)
    except Exception as e:  # noqa: BLE001 - any failure here means "not available"
        log(f"[{PEER}] not available: {type(e).__name__}: {e}")
        emit(out, {"peer": PEER, "available": False, "reason": f"{type(e).__name__}: {e}"})
        return 0
    version = f"torch {torch.__version__}, CUDA {torch.version.cuda}, {name}"
    run_metrics(out, version, TABLE, args, between=release_memory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
