"""Python peer of `tscuda serve` for the load bench: POST /v1/stft with a binary body, as a
Python engineer would deploy it: aiohttp with async handlers, the GPU work in a thread pool
(one CUDA stream and one pair of pinned buffers per thread, so the event loop never blocks on
the GPU), PyTorch (or CuPy when PyTorch is missing).

Same protocol as tscuda for what the bench sends: query dtype=f32, batch, fs, passBand=lo,hi,
previewBins; Accept: application/octet-stream; response = filtered (B x N f32) then spectrum
(B x previewBins f32), with x-tscuda-fields. Flow per job: linear detrend, periodic Hann
window, rfft, band-pass mask, irfft, |X| preview.

usage: python3 python_peer.py --port P [--threads 4]
Prints one line `{"ready": true, "backend": ..., "version": ...}` on stdout once serving, or
`{"ready": false, "reason": ...}` and exits 0 when aiohttp, PyTorch/CuPy or a GPU is missing.
"""

import argparse
import asyncio
import concurrent.futures
import json
import sys
import threading

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--threads", type=int, default=4)
args = parser.parse_args()


def unavailable(reason):
    print(json.dumps({"ready": False, "reason": reason}), flush=True)
    sys.exit(0)


try:
    from aiohttp import web
    import numpy as np
except Exception as e:  # noqa: BLE001
    unavailable(f"aiohttp/numpy not importable: {e}")

backend = None
try:
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    backend = "torch"
except Exception as torch_error:  # noqa: BLE001
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
        backend = "cupy"
    except Exception as cupy_error:  # noqa: BLE001
        unavailable(f"neither PyTorch ({torch_error}) nor CuPy ({cupy_error}) can use a GPU")

local = threading.local()


def torch_job(body, batch, fs, band, preview):
    n = len(body) // 4 // batch
    total = batch * n
    if getattr(local, "stream", None) is None:
        local.stream = torch.cuda.Stream()
        local.cap = 0
    if local.cap < total:
        local.cap = total
        local.pin_in = torch.empty(total, dtype=torch.float32, pin_memory=True)
        local.pin_out = torch.empty(total + batch * (total // 2 + 1), dtype=torch.float32, pin_memory=True)
    with torch.cuda.stream(local.stream):
        local.pin_in[:total].numpy()[:] = np.frombuffer(body, dtype=np.float32)
        x = local.pin_in[:total].to("cuda", non_blocking=True).view(batch, n)
        t = torch.arange(n, device="cuda", dtype=torch.float32)
        tm = t.mean()
        xm = x.mean(dim=1, keepdim=True)
        slope = ((t - tm) * (x - xm)).sum(dim=1, keepdim=True) / ((t - tm) ** 2).sum()
        x = x - xm - slope * (t - tm)
        w = torch.hann_window(n, periodic=True, device="cuda")
        X = torch.fft.rfft(x * w, dim=1)
        spectrum = X[:, :preview].abs()
        f = torch.arange(n // 2 + 1, device="cuda", dtype=torch.float32) * (fs / n)
        keep = ((f >= band[0]) & (f <= band[1])).to(X.dtype)
        y = torch.fft.irfft(X * keep, n=n, dim=1)
        out = local.pin_out[: total + batch * preview]
        out[:total].copy_(y.reshape(-1), non_blocking=True)
        out[total:].copy_(spectrum.reshape(-1), non_blocking=True)
    local.stream.synchronize()
    return out.numpy().tobytes(), n


def cupy_job(body, batch, fs, band, preview):
    n = len(body) // 4 // batch
    total = batch * n
    if getattr(local, "stream", None) is None:
        local.stream = cp.cuda.Stream(non_blocking=True)
        local.cap = 0
    if local.cap < total:
        local.cap = total
        local.pin_in = cp.cuda.alloc_pinned_memory(total * 4)
        local.pin_out = cp.cuda.alloc_pinned_memory((total + batch * (total // 2 + 1)) * 4)
    pin_in = np.frombuffer(local.pin_in, dtype=np.float32, count=total)
    pin_in[:] = np.frombuffer(body, dtype=np.float32)
    with local.stream:
        x = cp.empty(total, dtype=cp.float32)
        x.set(pin_in, stream=local.stream)
        x = x.reshape(batch, n)
        t = cp.arange(n, dtype=cp.float32)
        tm = t.mean()
        xm = x.mean(axis=1, keepdims=True)
        slope = ((t - tm) * (x - xm)).sum(axis=1, keepdims=True) / ((t - tm) ** 2).sum()
        x = x - xm - slope * (t - tm)
        w = (0.5 - 0.5 * cp.cos(2 * cp.pi * cp.arange(n) / n)).astype(cp.float32)
        X = cp.fft.rfft(x * w, axis=1)
        spectrum = cp.abs(X[:, :preview]).astype(cp.float32)
        f = cp.arange(n // 2 + 1, dtype=cp.float32) * (fs / n)
        X = X * ((f >= band[0]) & (f <= band[1]))
        y = cp.fft.irfft(X, n=n, axis=1).astype(cp.float32)
        out = np.frombuffer(local.pin_out, dtype=np.float32, count=total + batch * preview)
        y.reshape(-1).get(stream=local.stream, out=out[:total])
        spectrum.reshape(-1).get(stream=local.stream, out=out[total:])
    local.stream.synchronize()
    return out.tobytes(), n


job = torch_job if backend == "torch" else cupy_job
pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.threads)


def bad(field, message, status=400):
    return web.json_response({"error": {"code": "invalid_field", "field": field, "message": f"{field}: {message}", "retryable": False}}, status=status)


async def stft(request):
    q = request.query
    try:
        batch = int(q.get("batch", "1"))
        fs = float(q.get("fs", "1"))
        band = [float(v) for v in q.get("passBand", f"0,{fs / 2}").split(",")]
        preview = int(q.get("previewBins", "64"))
    except ValueError as e:
        return bad("query", str(e))
    if q.get("dtype", "f32") != "f32":
        return bad("dtype", "only f32 in this peer")
    body = await request.read()
    if len(body) == 0 or len(body) % 4 != 0:
        return bad("body", f"{len(body)} bytes is not a multiple of 4")
    if (len(body) // 4) % batch != 0:
        return bad("batch", "does not divide the samples")
    out, n = await asyncio.get_running_loop().run_in_executor(pool, job, body, batch, fs, band, preview)
    headers = {"x-tscuda-fields": f"filtered=f32[{batch},{n}];spectrum=f32[{batch},{preview}]"}
    return web.Response(body=out, content_type="application/octet-stream", headers=headers)


async def ready(_request):
    return web.json_response({"ready": True})


app = web.Application(client_max_size=256 * 1024 * 1024)
app.add_routes([web.post("/v1/stft", stft), web.get("/v2/health/ready", ready), web.get("/v2/health/live", ready)])


async def main():
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port, backlog=1024)
    await site.start()
    version = torch.__version__ if backend == "torch" else cp.__version__
    print(json.dumps({"ready": True, "backend": backend, "version": version}), flush=True)
    await asyncio.Event().wait()


asyncio.run(main())
