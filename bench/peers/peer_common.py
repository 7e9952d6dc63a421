"""Helpers every peer shares: the one-JSON-line protocol, argument parsing and statistics.

Each peer sets PEER before use (peer_common.PEER = "cupy"); the harness runs only the peer
files it names, so this module is never run on its own.
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

PEER = "peer"
BIG_BYTES = 256 << 20  # bandwidth transfers
SMALL_BYTES = 4096  # small round trip
ALLOC_BYTES = 1 << 20  # stream-ordered allocation
GRAPH_KERNELS = 100  # kernels captured per graph
GRAPH_LAUNCHES = 200  # graph launches per repetition
PER_ITER_SAMPLES_PER_REP = 200  # per-iteration metrics take reps * this samples
FFT_N, FFT_BATCH = 4096, 8192


def fast_length(n):
    """Smallest 2^a 3^b 5^c 7^d >= n (cuFFT's fast sizes; src/signal/morlet.ts's fastLength)."""
    best = None
    a = 1
    while a < 2 * n + 2:
        b = a
        while b < 2 * n + 2:
            c = b
            while c < 2 * n + 2:
                d = c
                while d < 2 * n + 2:
                    if d >= n and (best is None or d < best):
                        best = d
                    d *= 7
                c *= 5
            b *= 3
        a *= 2
    return best


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=None, help="regex on metric names")
    p.add_argument("--reps", type=int, default=15, help="repetitions per metric")
    p.add_argument("--iters", type=int, default=20000, help="calls per timed loop")
    args, unknown = p.parse_known_args()
    for u in unknown:
        log(f"[{PEER}] ignoring unknown argument {u}")
    args.reps = max(1, args.reps)
    args.iters = max(1, args.iters)
    return args


def json_channel():
    """Keep the real stdout for the JSON line; anything else printed goes to stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w")


def emit(out, obj):
    out.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")
    out.flush()


def quantile(sorted_xs, q):
    pos = q * (len(sorted_xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def summarize(xs, note=None):
    xs = sorted(float(x) for x in xs)
    med = quantile(xs, 0.5)
    spread = (quantile(xs, 0.9) - quantile(xs, 0.1)) / med if med else 0.0
    r = {"median": med, "spread": spread, "samples": len(xs)}
    if note:
        r["note"] = note
    return r


def loop_samples(run, sync, args):
    """Host time of run(iters) then sync(), per call; one warm-up loop, reps samples."""

    def one():
        t0 = time.perf_counter_ns()
        run(args.iters)
        sync()
        return (time.perf_counter_ns() - t0) / 1e3 / args.iters

    one()
    return [one() for _ in range(args.reps)]


def per_iter_samples(body, args):
    """Host time of each body() on its own, in microseconds."""
    for _ in range(100):
        body()
    xs = []
    clock = time.perf_counter_ns
    for _ in range(args.reps * PER_ITER_SAMPLES_PER_REP):
        t0 = clock()
        body()
        xs.append((clock() - t0) / 1e3)
    return xs


def repeated(one, args, warmup=2):
    for _ in range(warmup):
        one()
    return [one() for _ in range(args.reps)]


def gbps(nbytes, ms):
    return nbytes / 1e9 / (ms / 1e3)


def run_metrics(out, version, table, args, between=None):
    pattern = re.compile(args.only) if args.only else None
    metrics, errors = {}, {}
    log(f"[{PEER}] {version}; reps={args.reps} iters={args.iters}")
    for name, fn in table:
        if pattern is not None and not pattern.search(name):
            continue
        gc.collect()
        t0 = time.perf_counter()
        try:
            r = fn(args)
            if not all(math.isfinite(r[k]) for k in ("median", "spread")):
                raise RuntimeError(f"non-finite result {r}")
            metrics[name] = r
            log(f"[{PEER}] {name:<28} {r['median']:12.4f}  spread {r['spread']:.3f}  "
                f"n={r['samples']}  ({time.perf_counter() - t0:.1f} s)")
        except Exception as e:  # noqa: BLE001 - one failed metric must not lose the rest
            errors[name] = f"{type(e).__name__}: {e}"
            log(f"[{PEER}] {name:<28} FAILED: {errors[name]}")
            traceback.print_exc(file=sys.stderr)
        finally:
            if between is not None:
                try:
                    between()
                except Exception:  # noqa: BLE001
                    pass
    line = {"peer": PEER, "available": True, "version": version, "metrics": metrics}
    if errors:
        line["errors"] = errors
    emit(out, line)
