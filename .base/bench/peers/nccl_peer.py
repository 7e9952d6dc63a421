"""NCCL peers of bench/tscuda/multi-gpu.ts: PyTorch's torch.distributed.all_reduce (NCCL backend)
and a P2P copy through PyTorch, on the same GPUs, one process per GPU as torch.distributed runs.

Prints exactly one JSON line on stdout:
{"peer":"torch-nccl","available":true,"version":...,"metrics":{"nccl_allreduce_busbw_gbps":{median,spread,samples},...}}
or {"peer":"torch-nccl","available":false,"reason":...} (exit 0) with fewer than 2 GPUs or without
PyTorch. NCCL_NVLS_ENABLE=0 is set before NCCL initialises, in every rank.
Options: --bytes N (default 256 MiB), --reps N, --iters N.
"""

import argparse
import json
import os
import sys

os.environ["NCCL_NVLS_ENABLE"] = "0"

PEER = "torch-nccl"


def emit(obj):
    print(json.dumps(obj), flush=True)


def stats(samples):
    s = sorted(samples)
    med = s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])
    return {"median": med, "spread": (s[-1] - s[0]) / med if med else 0.0, "samples": samples}


def rank_main(rank, size, nbytes, reps, iters, port, queue):
    import torch
    import torch.distributed as dist

    os.environ["NCCL_NVLS_ENABLE"] = "0"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size)
    n = nbytes // 4
    x = torch.rand(n, device=f"cuda:{rank}", dtype=torch.float32)
    for _ in range(3):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    samples = []
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        start.record()
        for _ in range(iters):
            dist.all_reduce(x)
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3 / iters
        samples.append(2 * (size - 1) / size * nbytes / seconds / 1e9)
    if rank == 0:
        queue.put(samples)
    dist.destroy_process_group()


def p2p(nbytes, reps, iters):
    import torch

    a = torch.rand(nbytes // 4, device="cuda:0")
    b = torch.empty_like(a, device="cuda:1")
    for _ in range(3):
        b.copy_(a, non_blocking=True)
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    samples = []
    stream = torch.cuda.Stream(device=1)
    with torch.cuda.stream(stream):
        for _ in range(reps):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            for _ in range(iters):
                b.copy_(a, non_blocking=True)
            end.record(stream)
            end.synchronize()
            samples.append(nbytes * iters / (start.elapsed_time(end) / 1e3) / 1e9)
    return samples


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bytes", type=int, default=256 << 20)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--iters", type=int, default=20)
    args, _ = p.parse_known_args()
    try:
        import torch
        import torch.multiprocessing as mp
    except Exception as e:  # noqa: BLE001
        emit({"peer": PEER, "available": False, "reason": f"PyTorch not importable: {e}"})
        return
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        emit({"peer": PEER, "available": False, "reason": f"needs 2 GPUs, this machine has {count}"})
        return
    size = 2
    port = 29500 + os.getpid() % 1000
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, size, args.bytes, args.reps, args.iters, port, queue)) for r in range(size)]
    for pr in procs:
        pr.start()
    samples = queue.get(timeout=600)
    for pr in procs:
        pr.join()
    metrics = {"nccl_allreduce_busbw_gbps": stats(samples), "p2p_copy_gbps": stats(p2p(args.bytes, args.reps, args.iters))}
    metrics["p2p_copy_gbps"]["note"] = "tensor.copy_ across devices (cudaMemcpyPeerAsync underneath)"
    emit({"peer": PEER, "available": True, "version": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())), "metrics": metrics})


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001
        emit({"peer": PEER, "available": False, "reason": f"{type(e).__name__}: {e}"})
