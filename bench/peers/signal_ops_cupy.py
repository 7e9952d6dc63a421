"""The cupyx.scipy.signal side of signal_ops_peer.py: scipy's own functions, on CuPy arrays.

Each row offers the calls a careful user would make for a float32 job: the taps or sections as
float32 where scipy's dtype rules would otherwise promote the whole job to float64 (then the
float64 call, cast back, as the other candidate), `axis=-1` everywhere (resample_poly's default
axis is 0).
"""

from signal_ops_rows import row_peers


def backend(np, Skip):
    import cupy as cp
    import cupyx.scipy.signal as css

    if cp.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no CUDA device")
    cp.cuda.Device(0).use()
    name = cp.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    version = f"cupy {cp.__version__} (cupyx.scipy.signal), CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, {name}"
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def timer(fn):
        start.record()
        fn()
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end)

    def release():
        cp.cuda.Device().synchronize()
        cp.get_default_memory_pool().free_all_blocks()

    def fftconvolve(x, p, row):
        taps = np.asarray(p["taps"])
        h32 = cp.asarray(taps, dtype=cp.float32)[None, :]
        mode = p["mode"]
        return [
            ("cupyx.scipy.signal.fftconvolve(x, h[None, :], axes=-1), h float32",
             lambda: css.fftconvolve(x, h32, mode=mode, axes=-1)),
        ], []

    def sosfilt(x, p, row):
        sos = np.asarray(p["sos"])
        sos32 = cp.asarray(sos, dtype=cp.float32)
        sos64 = cp.asarray(sos, dtype=cp.float64)
        return [
            ("cupyx.scipy.signal.sosfilt(sos, x, axis=-1), sos float32", lambda: css.sosfilt(sos32, x, axis=-1)),
            ("cupyx.scipy.signal.sosfilt with sos float64 (a float64 job), cast to float32",
             lambda: css.sosfilt(sos64, x, axis=-1).astype(cp.float32)),
        ], []

    def resample_poly(x, p, row):
        up, down, window = p["up"], p["down"], tuple(p["window"])
        out = [("cupyx.scipy.signal.resample_poly(x, up, down, axis=-1, window=('kaiser', 5.0))",
                lambda: css.resample_poly(x, up, down, axis=-1, window=window))]
        try:
            # scipy's own design as float32 taps: given as the window, they keep the job float32.
            import scipy.signal as ss

            max_rate = max(up, down) // np.gcd(up, down)
            h = ss.firwin(2 * 10 * max_rate + 1, 1.0 / max_rate, window=window)
            h32 = cp.asarray(h, dtype=cp.float32)
            out.append(("cupyx.scipy.signal.resample_poly with scipy's filter given as float32 taps",
                        lambda: css.resample_poly(x, up, down, axis=-1, window=h32)))
        except ImportError:
            pass
        return out, []

    def hilbert(x, p, row):
        return [("cupyx.scipy.signal.hilbert(x, axis=-1)", lambda: css.hilbert(x, axis=-1))], []

    return {
        "title": "cupyx.scipy.signal",
        "version": version,
        "timer": timer,
        "release": release,
        "to_device": lambda a: cp.asarray(a),
        "to_host": lambda a: cp.asnumpy(a),
        "rows": {"fftconvolve": fftconvolve, "sosfilt": sosfilt, "resample_poly": resample_poly, "hilbert": hilbert,
                 **row_peers("iq_spectrogram_peers").cupy_rows(np, cp, css)},
    }
