"""cupyx.scipy.signal and PyTorch peers of tscuda's signal-ops rows (bench/signal-ops/, issue 41).

Run as `signal_ops_peer.py --backend cupy|torch --data DIR [--only REGEX] [--reps N]`; prints one
JSON line on stdout in the peers' protocol, as peer "cupy" or "torch" (the harness adds these
metrics to that peer's column). DIR is the folder tscuda's side of the same run filled
(bench/signal-ops/data.ts): the shared float32 input, one manifest per row (`<id>.json`: sizes, the
job's parameters, the tolerance) and tscuda's checked output. So both sides run the same job on the
same data, and a peer's output must equal tscuda's within the row's tolerance (relative L2, worst
series) or the peer is not reported: a peer that computes something else is no peer. Where
tscuda's output is missing (its side failed), the peer is checked against scipy on the CPU in
float64 over the first and last series instead, and says so.

Each backend (signal_ops_cupy.py, signal_ops_torch.py) offers one or more implementations of a row
(candidates: a dtype choice, a library function or a hand-written equivalent); each is checked,
the ones that pass are timed, and the fastest is reported, the others named in the note. Timing:
data preloaded on the GPU, WARMUP untimed calls (plans, caches, allocator pools), then up to --reps
calls each between two CUDA events on the current stream (at least MIN_REPS, at most
TIME_BUDGET_S of calls), the median reported in ms.
"""

import importlib
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common  # noqa: E402
from peer_common import emit, json_channel, log, parse_args, summarize  # noqa: E402
from signal_ops_rows import row_peers  # noqa: E402

WARMUP = 3
MIN_REPS = 3
TIME_BUDGET_S = 8.0

np = None


class Skip(Exception):
    """A candidate not run, and why (a missing library, a projected time out of all proportion)."""


def take_option(name):
    """The value of `--name VALUE` (or `--name=VALUE`), removed from sys.argv; None when absent."""
    value, out, skip = None, [], False
    for i, a in enumerate(sys.argv[1:], start=1):
        if skip:
            skip = False
            continue
        if a == name and i + 1 < len(sys.argv):
            value, skip = sys.argv[i + 1], True
        elif a.startswith(name + "="):
            value = a.split("=", 1)[1]
        else:
            out.append(a)
    sys.argv[1:] = out
    return value


def load_rows(data_dir):
    """The rows' manifests in DIR, by id (a missing or unreadable folder gives none)."""
    rows = {}
    if not data_dir or not os.path.isdir(data_dir):
        return rows
    for name in sorted(os.listdir(data_dir)):
        if name.endswith(".json"):
            with open(os.path.join(data_dir, name)) as f:
                m = json.load(f)
            rows[m["id"]] = m
    return rows


def read_array(data_dir, name, dtype, shape):
    a = np.fromfile(os.path.join(data_dir, name), dtype=dtype)
    if a.size != shape[0] * shape[1]:
        raise RuntimeError(f"{name} holds {a.size} values, expected {shape[0]} x {shape[1]}")
    return a.reshape(shape)


def relative_l2_rows(got, want):
    """Relative L2 error of each series (row), in float64."""
    got = np.asarray(got).astype(np.complex128 if np.iscomplexobj(got) else np.float64)
    want = np.asarray(want).astype(np.complex128 if np.iscomplexobj(want) else np.float64)
    if got.shape != want.shape:
        raise RuntimeError(f"output shape {got.shape}, expected {want.shape}")
    num = np.sqrt(np.sum(np.abs(got - want) ** 2, axis=1))
    den = np.maximum(np.sqrt(np.sum(np.abs(want) ** 2, axis=1)), 1e-300)
    return num / den


def scipy_reference(row, x_rows):
    """scipy.signal on the CPU in float64 for the given series: what a peer is checked against when tscuda's output is missing."""
    import scipy.signal as ss

    p, x = row["params"], x_rows.astype(np.float64)
    rid = row["id"]
    if rid == "fftconvolve":
        return ss.fftconvolve(x, np.asarray(p["taps"])[None, :], mode=p["mode"], axes=-1)
    if rid == "sosfilt":
        return ss.sosfilt(np.asarray(p["sos"]), x, axis=-1)
    if rid == "resample_poly":
        return ss.resample_poly(x, p["up"], p["down"], axis=-1, window=tuple(p["window"]))
    if rid == "hilbert":
        return ss.hilbert(x, axis=-1)
    iq = row_peers("iq_spectrogram_peers")
    if rid in iq.IDS:
        return iq.scipy_reference(np, ss, row, x)
    raise RuntimeError(f"no scipy reference for row {rid}")


class Reference:
    """What a row's outputs are compared with: tscuda's output (every series) or scipy's (first and last)."""

    def __init__(self, data_dir, row, x_host):
        shape = tuple(row["outputShape"])
        dtype = np.complex64 if row["outputDtype"] == "c64" else np.float32
        if row["output"]:
            self.series = slice(None)
            self.want = read_array(data_dir, row["output"], dtype, shape)
            self.what = "tscuda's output, every series"
        else:
            self.series = [0, shape[0] - 1]
            self.want = scipy_reference(row, x_host[self.series])
            self.what = "scipy on the CPU in float64, first and last series (tscuda's output is missing)"
        self.tolerance = float(row["tolerance"])

    def error(self, got_host):
        return float(relative_l2_rows(got_host[self.series], self.want).max())


def measure(fn, timer, args):
    """ms per call: WARMUP untimed calls, then up to --reps timed ones (at least MIN_REPS, within TIME_BUDGET_S)."""
    for _ in range(WARMUP):
        fn()
    xs = []
    t0 = time.perf_counter()
    while len(xs) < max(MIN_REPS, args.reps) and (len(xs) < MIN_REPS or time.perf_counter() - t0 < TIME_BUDGET_S):
        xs.append(timer(fn))
    return xs


def run_row(backend, row, x, reference, args):
    """Checks and times every candidate of `row`; the fastest that passes is the row's value."""
    candidates, notes = backend["rows"][row["id"]](x, row["params"], row)
    results, failures = [], []
    for label, fn in candidates:
        try:
            out = fn()
            err = reference.error(backend["to_host"](out))
            del out
            if not err <= reference.tolerance:
                failures.append(f"{label}: differs (relative L2 {err:.2e} > {reference.tolerance:g}), not a peer")
                continue
            xs = measure(fn, backend["timer"], args)
            med = sorted(xs)[len(xs) // 2]
            log(f"[{peer_common.PEER}] {row['id']}: {label}: {med:.3f} ms (relative L2 {err:.2e})")
            results.append((med, label, err, xs))
        except Skip as e:
            failures.append(f"{label}: not run: {e}")
        except Exception as e:  # noqa: BLE001 - one candidate failing must not lose the others
            failures.append(f"{label}: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stderr)
        finally:
            backend["release"]()
    if not results:
        raise RuntimeError("; ".join(failures) or "no implementation")
    results.sort(key=lambda r: r[0])
    med, label, err, xs = results[0]
    others = [f"{l}: {m:.3f} ms" for m, l, _, _ in results[1:]] + failures
    note = (f"{label}; checked against {reference.what}: relative L2 {err:.2e} (tolerance {reference.tolerance:g}); "
            f"median of {len(xs)} calls after {WARMUP} warm-up, {backend.get('timing', 'CUDA events')}")
    if notes:
        note += "; " + "; ".join(notes)
    if others:
        note += "; also tried: " + "; ".join(others)
    return summarize(xs, note)


BACKENDS = {"cupy": "signal_ops_cupy", "torch": "signal_ops_torch"}


def serve(peer, make_backend, data_dir):
    """Runs the rows of `data_dir` on the backend `make_backend(np, Skip)` builds, printing the line as `peer`."""
    global np
    peer_common.PEER = peer
    args = parse_args()
    out = json_channel()
    try:
        import numpy

        np = numpy
        backend = make_backend(np, Skip)
    except Exception as e:  # noqa: BLE001 - any failure here means "not available"
        log(f"[{peer}] not available: {type(e).__name__}: {e}")
        emit(out, {"peer": peer, "available": False, "reason": f"{type(e).__name__}: {e}"})
        return 0
    rows = load_rows(data_dir)
    if not rows:
        log(f"[{peer}] no signal-ops jobs in {data_dir!r}: tscuda's side of the run writes them")
    inputs = {}

    def metric(row):
        def run(a):
            if row["id"] not in backend["rows"]:
                raise RuntimeError(f"{backend['title']} has no implementation of {row['id']}")
            key = (row["input"], row["batch"], row["length"])
            if key not in inputs:
                inputs.clear()
                inputs[key] = read_array(data_dir, row["input"], np.float32, (row["batch"], row["length"]))
            x_host = inputs[key]
            reference = Reference(data_dir, row, x_host)
            return run_row(backend, row, backend["to_device"](x_host), reference, a)

        return run

    table = [(row["metric"], metric(row)) for row in rows.values()]
    peer_common.run_metrics(out, backend["version"], table, args, between=backend["release"])
    return 0


def main():
    backend_name = take_option("--backend")
    data_dir = take_option("--data")
    if backend_name not in BACKENDS:
        print("signal_ops_peer.py: --backend cupy|torch is required", file=sys.stderr)
        return 2
    return serve(backend_name, lambda np_, skip: importlib.import_module(BACKENDS[backend_name]).backend(np_, skip),
                 data_dir)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)
