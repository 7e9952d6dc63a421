"""The peers of rows iq_spectrogram and iq16_spectrogram (bench/signal-ops/rows/iq-spectrogram.ts).

A two-sided spectrogram of 16 x 1M complex IQ samples: scipy.signal.spectrogram(x, window='hann',
nperseg=1024, noverlap=512, detrend=False, return_onesided=False, scaling='density', mode='psd').
The IQ series are made from the shared float32 input exactly as tscuda's side makes them (I =
series b, Q = series (b + 1) mod batch), on the device and untimed; for iq16 the interleaved
int16 pairs are quantized with the row's scale (round half up, as JavaScript's Math.round) and the
timed call converts them (times the scale) to complex64 first, as tscuda's does.

Each function has the shape of signal_ops_cupy.py's and signal_ops_torch.py's row functions,
`(x, p, row) -> (candidates, notes)`, given the backend's modules; the backends take them with

    rows.update(iq_spectrogram_peers.cupy_rows(np, cp, css))        # in signal_ops_cupy.backend
    rows.update(iq_spectrogram_peers.torch_rows(np, torch, dev))    # in signal_ops_torch.backend

and signal_ops_peer.scipy_reference with `iq_spectrogram_peers.scipy_reference(np, ss, row, x)`.
"""

IDS = ("iq_spectrogram", "iq16_spectrogram")


def _int16_pairs(xp, iq, scale):
    """complex (B, L) numpy or CuPy -> interleaved int16 (B, 2L): round(v / scale) half up, as the TypeScript side."""
    b, n = iq.shape
    parts = xp.stack([iq.real, iq.imag], axis=-1).reshape(b, 2 * n).astype(xp.float64)
    return xp.floor(parts / scale + 0.5).astype(xp.int16)


def _int16_pairs_torch(torch, iq, scale):
    """_int16_pairs for a torch tensor."""
    b, n = iq.shape
    parts = torch.stack([iq.real, iq.imag], dim=-1).reshape(b, 2 * n).to(torch.float64)
    return torch.floor(parts / scale + 0.5).to(torch.int16)


def cupy_rows(np, cp, css):
    """The cupyx.scipy.signal candidates: scipy's own spectrogram on CuPy arrays."""

    def spectrogram(iq_of, p):
        kw = dict(window=p["window"], nperseg=p["nperseg"], noverlap=p["noverlap"], detrend=False,
                  return_onesided=False, scaling=p["scaling"], mode=p["mode"], axis=-1)
        return lambda: css.spectrogram(iq_of(), **kw)[2].reshape(p["batch"], -1)

    def iq(x, p, row):
        z = (x + 1j * cp.roll(x, -1, axis=0)).astype(cp.complex64)
        return [("cupyx.scipy.signal.spectrogram(x complex64, return_onesided=False, axis=-1)",
                 spectrogram(lambda: z, p))], []

    def iq16(x, p, row):
        scale = float(p["scale"])
        z = (x + 1j * cp.roll(x, -1, axis=0)).astype(cp.complex64)
        pairs = _int16_pairs(cp, z, scale)
        del z

        def convert():
            f = pairs.astype(cp.float32) * cp.float32(scale)
            return f[:, 0::2] + 1j * f[:, 1::2]

        def convert_view():
            return (pairs.astype(cp.float32) * cp.float32(scale)).view(cp.complex64)

        return [("int16 pairs * scale viewed as complex64, cupyx.scipy.signal.spectrogram", spectrogram(convert_view, p)),
                ("int16 pairs to complex64 (I + 1j*Q) * scale, cupyx.scipy.signal.spectrogram",
                 spectrogram(convert, p))], ["cupyx.scipy.signal takes no integer IQ: converted first, in the timed call"]

    return {"iq_spectrogram": iq, "iq16_spectrogram": iq16}


def torch_rows(np, torch, dev):
    """The PyTorch candidates: torch.stft(return_complex=True, onesided=False, center=False), |Z|^2 times scipy's density scale."""

    def power(iq_of, p):
        n, hop = p["nperseg"], p["nperseg"] - p["noverlap"]
        window = torch.hann_window(n, periodic=True, dtype=torch.float32, device=dev)
        scale = float(1.0 / (window.double() ** 2).sum().item())  # fs = 1, scaling 'density'

        def run():
            z = torch.stft(iq_of(), n_fft=n, hop_length=hop, win_length=n, window=window, center=False,
                           onesided=False, return_complex=True)
            return (z.real.square() + z.imag.square()).mul_(scale).reshape(p["batch"], -1)

        return run

    def iq(x, p, row):
        z = torch.complex(x, torch.roll(x, -1, dims=0))
        return [("torch.stft(x complex64, onesided=False, center=False, return_complex=True), |Z|^2 * scale",
                 power(lambda: z, p))], ["torch has no spectrogram: torch.stft and the power, scaled as scipy's density"]

    def iq16(x, p, row):
        scale = float(p["scale"])
        pairs = _int16_pairs_torch(torch, torch.complex(x, torch.roll(x, -1, dims=0)), scale)

        def convert():
            return torch.view_as_complex((pairs.to(torch.float32) * scale).reshape(p["batch"], -1, 2))

        return [("int16 pairs * scale viewed as complex64, torch.stft two-sided, |Z|^2 * scale", power(convert, p))], [
            "torch has no spectrogram and takes no integer IQ: converted first, in the timed call"]

    return {"iq_spectrogram": iq, "iq16_spectrogram": iq16}


def scipy_reference(np, ss, row, x_rows):
    """scipy on the CPU in float64 of series made from `x_rows` (every series of the shared input: Q is the next series)."""
    p = row["params"]
    if x_rows.shape[0] != p["batch"]:
        raise RuntimeError(f"{row['id']}: the IQ series need every input series (Q is the next one), got {x_rows.shape[0]}")
    x = x_rows.astype(np.float64)
    z = x + 1j * np.roll(x, -1, axis=0)
    if row["id"] == "iq16_spectrogram":
        pairs = _int16_pairs(np, z.astype(np.complex64), float(p["scale"])).astype(np.float64) * float(p["scale"])
        z = pairs[:, 0::2] + 1j * pairs[:, 1::2]
    _, _, s = ss.spectrogram(z, window=p["window"], nperseg=p["nperseg"], noverlap=p["noverlap"], detrend=False,
                             return_onesided=False, scaling=p["scaling"], mode=p["mode"], axis=-1)
    return s.reshape(p["batch"], -1)
