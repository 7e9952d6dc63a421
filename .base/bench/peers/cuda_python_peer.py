"""cuda-python peer of the tscuda microbenchmarks.

Mirrors bench/native/bench.cu call for call through cuda.bindings (driver and nvrtc):
the same kernels compiled with NVRTC and loaded with cuModuleLoadData, launched with
cuLaunchKernel and a pre-built void*[] parameter array, the same copies, events, pool
allocations and graphs. Prints exactly one JSON line on stdout:
{"peer":"cudaPython","available":true,"version":...,"metrics":{...}} or
{"peer":"cudaPython","available":false,"reason":...} when cuda.bindings or a GPU is
missing (exit 0). Options: --only REGEX, --reps N, --iters N. The FFT metrics are left
out: cuda.bindings has no cuFFT binding.
"""

import argparse
import ctypes
import gc
import json
import math
import os
import re
import sys
import time
import traceback

PEER = "cudaPython"

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
# cuda.bindings metrics
# ----------------------------------------------------------------------------------

driver = nvrtc = None
OK = NOT_READY = None
FN = {}  # kernel name -> CUfunction
_kernel_error = None  # why compile_kernels failed, if it did
_owned = []  # (free function, handle) of what the current metric made, freed after it


class CudaError(RuntimeError):
    pass


def ck(result, what):
    """Checks a cuda.bindings result tuple (err, *values); returns the values."""
    err = result[0]
    if err != OK:
        raise CudaError(f"{what} failed: {error_name(err)}")
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


def error_name(err):
    try:
        e, name = driver.cuGetErrorName(err)
        if e == OK:
            return f"{name.decode()} ({getattr(err, 'value', err)})"
    except Exception:  # noqa: BLE001
        pass
    return str(err)


def ck_nvrtc(result, what, prog=None):
    err = result[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        log_text = ""
        if prog is not None:
            try:
                size = nvrtc.nvrtcGetProgramLogSize(prog)[1]
                buf = b" " * size
                nvrtc.nvrtcGetProgramLog(prog, buf)
                log_text = buf.decode(errors="replace")
            except Exception:  # noqa: BLE001
                pass
        raise CudaError(f"{what} failed: {err} {log_text}")
    return result[1] if len(result) == 2 else None


def own(free, handle):
    _owned.append((free, handle))
    return handle


def free_owned():
    while _owned:
        free, h = _owned.pop()
        try:
            free(h)
        except Exception:  # noqa: BLE001
            pass


def new_stream():
    flags = driver.CUstream_flags.CU_STREAM_NON_BLOCKING.value
    return own(driver.cuStreamDestroy, ck(driver.cuStreamCreate(flags), "cuStreamCreate"))


def new_event(timing):
    flags = 0 if timing else driver.CUevent_flags.CU_EVENT_DISABLE_TIMING.value
    return own(driver.cuEventDestroy, ck(driver.cuEventCreate(flags), "cuEventCreate"))


def device_mem(nbytes):
    return own(driver.cuMemFree, ck(driver.cuMemAlloc(nbytes), "cuMemAlloc"))


def pinned_mem(nbytes):
    p = own(driver.cuMemFreeHost, ck(driver.cuMemHostAlloc(nbytes, 0), "cuMemHostAlloc"))
    ctypes.memset(p, 1, nbytes)
    return p


def sync_stream(s):
    ck(driver.cuStreamSynchronize(s), "cuStreamSynchronize")


def elapsed_ms(e0, e1):
    ck(driver.cuEventSynchronize(e1), "cuEventSynchronize")
    # CUDA 13 headers map cuEventElapsedTime to cuEventElapsedTime_v2; either binding will do.
    fn = getattr(driver, "cuEventElapsedTime", None) or driver.cuEventElapsedTime_v2
    return ck(fn(e0, e1), "cuEventElapsedTime")


def compile_kernels():
    dev = ck(driver.cuDeviceGet(0), "cuDeviceGet")
    attr = driver.CUdevice_attribute
    major = ck(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                           dev), "cuDeviceGetAttribute")
    minor = ck(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                           dev), "cuDeviceGetAttribute")
    prog = ck_nvrtc(nvrtc.nvrtcCreateProgram(KERNELS.encode(), b"bench_kernels.cu", 0, [], []),
                    "nvrtcCreateProgram")
    opts = [f"--gpu-architecture=sm_{major}{minor}".encode()]
    ck_nvrtc(nvrtc.nvrtcCompileProgram(prog, len(opts), opts), "nvrtcCompileProgram", prog)
    size = ck_nvrtc(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
    cubin = b" " * size
    ck_nvrtc(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
    nvrtc.nvrtcDestroyProgram(prog)
    module = ck(driver.cuModuleLoadData(cubin), "cuModuleLoadData")
    for name in ("empty", "k4"):
        FN[name] = ck(driver.cuModuleGetFunction(module, name.encode()), "cuModuleGetFunction")


def kernel(name):
    if name not in FN:
        raise RuntimeError(f"kernels unavailable: {_kernel_error}")
    return FN[name]


def launch_loop(args, f, params):
    s = new_stream()
    launch = driver.cuLaunchKernel

    def run(n):
        for _ in range(n):
            (err,) = launch(f, 1, 1, 1, 1, 1, 1, 0, s, params, 0)
            if err != OK:
                raise CudaError(f"cuLaunchKernel failed: {error_name(err)}")

    return summarize(loop_samples(run, lambda: sync_stream(s), args))


def m_launch_empty(args):
    return launch_loop(args, kernel("empty"), 0)


def m_launch_4args(args):
    a, b = device_mem(256), device_mem(256)
    # A parameter block and the void*[] pointing into it, built once (as in C).
    a_arg, b_arg = ctypes.c_uint64(int(a)), ctypes.c_uint64(int(b))
    n_arg, s_arg = ctypes.c_int(0), ctypes.c_float(2.0)
    params = (ctypes.c_void_p * 4)(*(ctypes.addressof(v) for v in (a_arg, b_arg, n_arg, s_arg)))
    keep = (a_arg, b_arg, n_arg, s_arg, params)  # noqa: F841 - alive during the loop
    return launch_loop(args, kernel("k4"), ctypes.addressof(params))


def m_launch_sync_roundtrip(args):
    s = new_stream()
    f, launch, sync = kernel("empty"), driver.cuLaunchKernel, driver.cuStreamSynchronize

    def body():
        (err,) = launch(f, 1, 1, 1, 1, 1, 1, 0, s, 0, 0)
        if err != OK:
            raise CudaError(f"cuLaunchKernel failed: {error_name(err)}")
        (err,) = sync(s)
        if err != OK:
            raise CudaError(f"cuStreamSynchronize failed: {error_name(err)}")

    return summarize(per_iter_samples(body, args))


def m_await_completion(args):
    s = new_stream()
    done = new_event(False)
    f, launch = kernel("empty"), driver.cuLaunchKernel
    record, query = driver.cuEventRecord, driver.cuEventQuery

    def body():
        (err,) = launch(f, 1, 1, 1, 1, 1, 1, 0, s, 0, 0)
        if err != OK:
            raise CudaError(f"cuLaunchKernel failed: {error_name(err)}")
        (err,) = record(done, s)
        if err != OK:
            raise CudaError(f"cuEventRecord failed: {error_name(err)}")
        while True:
            (err,) = query(done)
            if err == OK:
                break
            if err != NOT_READY:
                raise CudaError(f"cuEventQuery failed: {error_name(err)}")

    return summarize(per_iter_samples(body, args))


def m_event_record(args):
    s = new_stream()
    ev = new_event(False)
    record = driver.cuEventRecord

    def run(n):
        for _ in range(n):
            (err,) = record(ev, s)
            if err != OK:
                raise CudaError(f"cuEventRecord failed: {error_name(err)}")

    return summarize(loop_samples(run, lambda: sync_stream(s), args))


def m_event_query(args):
    s = new_stream()
    ev = new_event(False)
    ck(driver.cuEventRecord(ev, s), "cuEventRecord")
    ck(driver.cuEventSynchronize(ev), "cuEventSynchronize")
    query = driver.cuEventQuery

    def run(n):
        for _ in range(n):
            (err,) = query(ev)
            if err != OK:
                raise CudaError(f"cuEventQuery failed: {error_name(err)}")

    return summarize(loop_samples(run, lambda: None, args))


def pinned_copy(args, h2d):
    s = new_stream()
    host, dev = pinned_mem(BIG_BYTES), device_mem(BIG_BYTES)
    e0, e1 = new_event(True), new_event(True)

    def one():
        ck(driver.cuEventRecord(e0, s), "cuEventRecord")
        if h2d:
            ck(driver.cuMemcpyHtoDAsync(dev, host, BIG_BYTES, s), "cuMemcpyHtoDAsync")
        else:
            ck(driver.cuMemcpyDtoHAsync(host, dev, BIG_BYTES, s), "cuMemcpyDtoHAsync")
        ck(driver.cuEventRecord(e1, s), "cuEventRecord")
        return gbps(BIG_BYTES, elapsed_ms(e0, e1))

    return summarize(repeated(one, args))


def m_h2d_pinned(args):
    return pinned_copy(args, True)


def m_d2h_pinned(args):
    return pinned_copy(args, False)


def m_bidir_pinned(args):
    s1, s2 = new_stream(), new_stream()
    h_src, h_dst = pinned_mem(BIG_BYTES), pinned_mem(BIG_BYTES)
    d_dst, d_src = device_mem(BIG_BYTES), device_mem(BIG_BYTES)
    start, end, s2_done = new_event(True), new_event(True), new_event(False)

    def one():
        ck(driver.cuEventRecord(start, s1), "cuEventRecord")
        ck(driver.cuStreamWaitEvent(s2, start, 0), "cuStreamWaitEvent")
        ck(driver.cuMemcpyHtoDAsync(d_dst, h_src, BIG_BYTES, s1), "cuMemcpyHtoDAsync")
        ck(driver.cuMemcpyDtoHAsync(h_dst, d_src, BIG_BYTES, s2), "cuMemcpyDtoHAsync")
        ck(driver.cuEventRecord(s2_done, s2), "cuEventRecord")
        ck(driver.cuStreamWaitEvent(s1, s2_done, 0), "cuStreamWaitEvent")
        ck(driver.cuEventRecord(end, s1), "cuEventRecord")
        return gbps(2 * BIG_BYTES, elapsed_ms(start, end))

    return summarize(repeated(one, args))


def m_h2d_pageable(args):
    host = (ctypes.c_ubyte * BIG_BYTES)()
    ctypes.memset(host, 1, BIG_BYTES)  # every page touched
    host_addr = ctypes.addressof(host)
    dev = device_mem(BIG_BYTES)

    def one():
        ck(driver.cuCtxSynchronize(), "cuCtxSynchronize")
        t0 = time.perf_counter_ns()
        ck(driver.cuMemcpyHtoD(dev, host_addr, BIG_BYTES), "cuMemcpyHtoD")
        ck(driver.cuCtxSynchronize(), "cuCtxSynchronize")
        return BIG_BYTES / 1e9 / ((time.perf_counter_ns() - t0) / 1e9)

    return summarize(repeated(one, args, warmup=1))


def m_small_copy_roundtrip(args):
    s = new_stream()
    h_src, h_dst = pinned_mem(SMALL_BYTES), pinned_mem(SMALL_BYTES)
    dev = device_mem(SMALL_BYTES)
    h2d, d2h, sync = driver.cuMemcpyHtoDAsync, driver.cuMemcpyDtoHAsync, driver.cuStreamSynchronize

    def body():
        (err,) = h2d(dev, h_src, SMALL_BYTES, s)
        if err != OK:
            raise CudaError(f"cuMemcpyHtoDAsync failed: {error_name(err)}")
        (err,) = d2h(h_dst, dev, SMALL_BYTES, s)
        if err != OK:
            raise CudaError(f"cuMemcpyDtoHAsync failed: {error_name(err)}")
        (err,) = sync(s)
        if err != OK:
            raise CudaError(f"cuStreamSynchronize failed: {error_name(err)}")

    return summarize(per_iter_samples(body, args))


def m_alloc_free_async(args):
    s = new_stream()
    alloc, free = driver.cuMemAllocAsync, driver.cuMemFreeAsync

    def run(n):
        for _ in range(n):
            err, p = alloc(ALLOC_BYTES, s)
            if err != OK:
                raise CudaError(f"cuMemAllocAsync failed: {error_name(err)}")
            (err,) = free(p, s)
            if err != OK:
                raise CudaError(f"cuMemFreeAsync failed: {error_name(err)}")

    return summarize(loop_samples(run, lambda: sync_stream(s), args))


def instantiate(graph):
    try:
        return ck(driver.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
    except TypeError:  # bindings that keep the pre-12 five-argument form
        return ck(driver.cuGraphInstantiateWithFlags(graph, 0), "cuGraphInstantiateWithFlags")


def m_graph_replay_per_kernel(args):
    s = new_stream()
    f, launch = kernel("empty"), driver.cuLaunchKernel
    ck(launch(f, 1, 1, 1, 1, 1, 1, 0, s, 0, 0), "cuLaunchKernel")
    sync_stream(s)
    mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL
    ck(driver.cuStreamBeginCapture(s, mode), "cuStreamBeginCapture")
    for _ in range(GRAPH_KERNELS):
        ck(launch(f, 1, 1, 1, 1, 1, 1, 0, s, 0, 0), "cuLaunchKernel")
    graph = own(driver.cuGraphDestroy, ck(driver.cuStreamEndCapture(s), "cuStreamEndCapture"))
    exec_ = own(driver.cuGraphExecDestroy, instantiate(graph))
    ck(driver.cuGraphUpload(exec_, s), "cuGraphUpload")
    graph_launch = driver.cuGraphLaunch

    def one():
        t0 = time.perf_counter_ns()
        for _ in range(GRAPH_LAUNCHES):
            (err,) = graph_launch(exec_, s)
            if err != OK:
                raise CudaError(f"cuGraphLaunch failed: {error_name(err)}")
        sync_stream(s)
        return (time.perf_counter_ns() - t0) / 1e3 / (GRAPH_LAUNCHES * GRAPH_KERNELS)

    return summarize(repeated(one, args, warmup=1))


def m_coordinator_edge(args):
    s1, s2 = new_stream(), new_stream()
    ev = new_event(False)
    record, wait = driver.cuEventRecord, driver.cuStreamWaitEvent

    def run(n):
        for _ in range(n):
            (err,) = record(ev, s1)
            if err != OK:
                raise CudaError(f"cuEventRecord failed: {error_name(err)}")
            (err,) = wait(s2, ev, 0)
            if err != OK:
                raise CudaError(f"cuStreamWaitEvent failed: {error_name(err)}")

    def sync():
        sync_stream(s1)
        sync_stream(s2)

    return summarize(loop_samples(run, sync, args))


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
]


def after_metric():
    try:
        driver.cuCtxSynchronize()
    finally:
        free_owned()


def main():
    global driver, nvrtc, OK, NOT_READY, _kernel_error
    args = parse_args()
    out = json_channel()
    try:
        import cuda.bindings
        from cuda.bindings import driver as driver_mod
        from cuda.bindings import nvrtc as nvrtc_mod

        driver, nvrtc = driver_mod, nvrtc_mod
        OK = driver.CUresult.CUDA_SUCCESS
        NOT_READY = driver.CUresult.CUDA_ERROR_NOT_READY
        ck(driver.cuInit(0), "cuInit")
        if ck(driver.cuDeviceGetCount(), "cuDeviceGetCount") < 1:
            raise RuntimeError("no CUDA device")
        dev = ck(driver.cuDeviceGet(0), "cuDeviceGet")
        ctx = ck(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        ck(driver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        name = ck(driver.cuDeviceGetName(256, dev), "cuDeviceGetName")
        name = name.split(b"\0", 1)[0].decode(errors="replace")
        drv = ck(driver.cuDriverGetVersion(), "cuDriverGetVersion")
        bindings_version = getattr(cuda.bindings, "__version__", "?")
    except Exception as e:  # noqa: BLE001 - any failure here means "not available"
        log(f"[{PEER}] not available: {type(e).__name__}: {e}")
        emit(out, {"peer": PEER, "available": False, "reason": f"{type(e).__name__}: {e}"})
        return 0
    version = (f"cuda-python (cuda.bindings) {bindings_version}, "
               f"driver {drv // 1000}.{drv % 1000 // 10}, {name}")
    try:
        compile_kernels()
    except Exception as e:  # noqa: BLE001 - the kernel-free metrics can still run
        _kernel_error = f"{type(e).__name__}: {e}"
        log(f"[{PEER}] kernel compilation failed: {type(e).__name__}: {e}")
    run_metrics(out, version, TABLE, args, between=after_metric)
    return 0


if __name__ == "__main__":
    sys.exit(main())
