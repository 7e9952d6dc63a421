"""The PyTorch side of signal_ops_peer.py: the best equivalents of scipy.signal's calls in torch.

PyTorch has none of these four functions; each row is written from torch's parts, float32 end to
end where that passes the row's check (TF32 off: it would cut float32 products to 10 bits):
  fftconvolve    torch.fft.rfft of the series and of the taps at a fast length, product, irfft, slice
  hilbert        torch.fft.rfft, the one-sided weights into a preallocated full spectrum, torch.fft.ifft
  sosfilt        torchaudio.functional.lfilter per section where torchaudio imports (and its time per
                 call is not out of all proportion), and a parallel chunked evaluation of the cascade as
                 one state-space system (matmuls: signal_ops_design.chunked_sos_matrices)
  resample_poly  the polyphase filter (scipy's design) as one strided conv1d with `up` output
                 channels, interleaved; torchaudio.functional.resample computes another filter, so it
                 is timed for the note only
"""

CHUNK = 256
#: samples of the prefix torchaudio's lfilter is timed on before a whole call is tried (without its
#: compiled extension it loops over samples in Python: a longer prefix would take seconds itself)
PROJECTION_SAMPLES = 4096
PROJECTION_LIMIT_S = 2.0  # a whole call projected longer is not timed: its warm-up and reps alone would take tens of seconds

from signal_ops_rows import row_peers


def backend(np, Skip, device="cuda"):
    """The backend on GPU 0; `device="cpu"` runs the same code on the CPU, timed by the wall clock
    (test/unit/bench/signal-ops-peer.test.ts checks the torch rows that way where torch is installed)."""
    import time

    import torch
    import torch.nn.functional as F

    import signal_ops_design as design

    on_gpu = device == "cuda"
    if on_gpu and not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", 0) if on_gpu else torch.device("cpu")
    try:
        import torchaudio
        import torchaudio.functional as TAF

        audio = f"torchaudio {torchaudio.__version__}"
    except Exception as e:  # noqa: BLE001 - torchaudio is optional
        TAF, audio = None, f"torchaudio not importable ({type(e).__name__}: {e})"
    where = torch.cuda.get_device_name(0) if on_gpu else "CPU"
    version = f"torch {torch.__version__}, CUDA {torch.version.cuda}, {audio}, {where}"

    if on_gpu:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def timer(fn):
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)

        def synchronize():
            torch.cuda.synchronize()

        def release():
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    else:
        def timer(fn):
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3

        def synchronize():
            pass

        def release():
            pass

    def fftconvolve(x, p, row):
        if p["mode"] != "full":
            raise RuntimeError(f"mode {p['mode']!r}: only 'full' is written here")
        h = torch.tensor(p["taps"], dtype=torch.float32, device=dev)
        n, m = x.shape[-1], h.numel()
        full = n + m - 1
        length = design.fast_length(full)

        def run():
            spectrum = torch.fft.rfft(x, n=length)
            spectrum.mul_(torch.fft.rfft(h, n=length))
            return torch.fft.irfft(spectrum, n=length)[:, :full].contiguous()

        return [(f"torch.fft: rfft(x, {length}) * rfft(h, {length}), irfft, the first n + m - 1 samples", run)], [
            "torch has no fftconvolve"]

    def hilbert(x, p, row):
        b, n = x.shape
        bins = n // 2 + 1
        weights = torch.full((bins,), 2.0, dtype=torch.float32, device=dev)
        weights[0] = 1.0
        if n % 2 == 0:
            weights[-1] = 1.0
        spectrum = torch.zeros((b, n), dtype=torch.complex64, device=dev)  # negative frequencies stay 0

        def one_sided():
            torch.mul(torch.fft.rfft(x), weights, out=spectrum[:, :bins])
            return torch.fft.ifft(spectrum)

        def full():
            s = torch.fft.fft(x)
            s[:, 1:bins - (1 if n % 2 == 0 else 0)] *= 2
            s[:, bins:] = 0
            return torch.fft.ifft(s)

        return [("torch.fft: rfft, one-sided weights into a preallocated spectrum, ifft", one_sided),
                ("torch.fft: fft, weights in place, ifft (scipy's recipe)", full)], ["torch has no hilbert"]

    def sosfilt(x, p, row):
        sos = np.asarray(p["sos"], dtype=np.float64)
        b, n = x.shape
        chunks = -(-n // CHUNK)
        t, g, f, powers = design.chunked_sos_matrices(sos, CHUNK, chunks)

        def chunked(dtype):
            tt = torch.tensor(t.T, dtype=dtype, device=dev).contiguous()
            gt = torch.tensor(g.T, dtype=dtype, device=dev).contiguous()
            ft = torch.tensor(f.T, dtype=dtype, device=dev).contiguous()
            pts = [torch.tensor(q.T, dtype=dtype, device=dev).contiguous() for q in powers]
            states = g.shape[0]
            first = torch.zeros((b, 1, states), dtype=dtype, device=dev)

            def run():
                xs = x if dtype == torch.float32 else x.to(dtype)
                if n % CHUNK:
                    xs = F.pad(xs, (0, chunks * CHUNK - n))
                xc = xs.reshape(-1, CHUNK)
                y = xc @ tt  # every chunk from a zero state
                v = (xc @ gt).reshape(b, chunks, states)  # the state each chunk ends in from zero
                step = 1
                for pt in pts:  # inclusive doubling scan: v[c] = sum over j <= c of A^(CHUNK (c - j)) e[j]
                    v = torch.cat([v[:, :step], v[:, step:] + v[:, :-step] @ pt], dim=1)
                    step *= 2
                s = torch.cat([first, v[:, :-1]], dim=1).reshape(-1, states)  # each chunk's true starting state
                y.addmm_(s, ft)
                y = y.reshape(b, chunks * CHUNK)[:, :n]
                return y if y.dtype == torch.float32 and y.is_contiguous() else y.to(torch.float32).contiguous()

            return run

        out = [(f"torch: the cascade as one state-space system, chunks of {CHUNK} by matmul, their starts by a doubling scan, float32",
                chunked(torch.float32)),
               ("the same in float64, cast to float32", chunked(torch.float64))]
        if TAF is not None:
            out.append(("torchaudio.functional.lfilter once per section, float32, clamp=False", lfilter(x, sos, Skip)))
        notes = ["torch has no sosfilt"]
        if TAF is None:
            notes.append(audio)
        return out, notes

    def lfilter(x, sos, Skip):
        coefficients = [(torch.tensor(s[3:], dtype=torch.float32, device=dev),
                         torch.tensor(s[:3], dtype=torch.float32, device=dev)) for s in sos]

        def cascade(xs):
            for a, bb in coefficients:
                xs = TAF.lfilter(xs, a, bb, clamp=False)
            return xs

        projected = []

        def run():
            if not projected:
                # Its recurrence may be a loop over samples: time a prefix before committing to whole calls.
                prefix = x[:, :PROJECTION_SAMPLES].contiguous()
                cascade(prefix)
                synchronize()
                t0 = time.perf_counter()
                cascade(prefix)
                synchronize()
                projected.append((time.perf_counter() - t0) * x.shape[1] / prefix.shape[1])
            if projected[0] > PROJECTION_LIMIT_S:
                raise Skip(f"about {projected[0]:.1f} s a call (projected from {PROJECTION_SAMPLES} samples)")
            return cascade(x)

        return run

    def resample_poly(x, p, row):
        import math

        import scipy.signal as ss

        g = math.gcd(p["up"], p["down"])  # scipy reduces the rates before designing
        up, down = p["up"] // g, p["down"] // g
        b, n = x.shape

        max_rate = max(up, down)
        h = ss.firwin(2 * 10 * max_rate + 1, 1.0 / max_rate, window=tuple(p["window"]))
        taps, start_at, n_out = design.resample_poly_taps(n, up, down, h)
        w, base = design.polyphase_weights(taps, up, down, start_at)
        weight = torch.tensor(w[:, None, :], dtype=torch.float32, device=dev)
        q = -(-n_out // up)
        width = w.shape[1]
        # xp[u] = x[u + base], zeros outside x, long enough for q strided windows of `width`.
        left = max(0, -base)
        right = max(0, (q - 1) * down + width - (n - max(base, 0) + left))

        def run():
            xs = x[:, base:] if base > 0 else x
            xp = F.pad(xs, (left, right))[:, None, :]
            y = F.conv1d(xp, weight, stride=down)[:, :, :q]  # (b, up, q): phase r of output q * up + r
            return y.transpose(1, 2).reshape(b, q * up)[:, :n_out].contiguous()

        notes = ["torch has no resample_poly: scipy's filter (firwin(141, 1/7, kaiser 5) x 3) as polyphase conv1d weights"]
        if TAF is not None:
            try:
                other = lambda: TAF.resample(x, down, up)  # noqa: E731
                other()
                xs = [timer(other) for _ in range(5)]
                notes.append(f"torchaudio.functional.resample(x, {down}, {up}) takes {sorted(xs)[2]:.3f} ms but designs "
                             "another filter (Hann-windowed sinc, width 6), so it is no peer")
            except Exception as e:  # noqa: BLE001 - a note only
                notes.append(f"torchaudio.functional.resample failed: {type(e).__name__}: {e}")
        return [("torch: polyphase conv1d (stride down, up output channels), interleaved, float32", run)], notes

    return {
        "title": "PyTorch",
        "version": version,
        "timing": "CUDA events" if on_gpu else "wall clock (CPU)",
        "timer": timer,
        "release": release,
        "to_device": lambda a: torch.from_numpy(a).to(dev),
        "to_host": lambda a: a.detach().cpu().numpy(),
        "rows": {"fftconvolve": fftconvolve, "sosfilt": sosfilt, "resample_poly": resample_poly, "hilbert": hilbert,
                 **row_peers("iq_spectrogram_peers").torch_rows(np, torch, dev)},
    }
