"""Host-side designs the signal-ops peers build their GPU work from (numpy, float64).

Pure numpy, so they are checked without a GPU (test/unit/bench/signal-ops-peer.test.ts runs
`signal_ops_design.py --self-test` against scipy):
  resample_poly_taps   scipy.signal.resample_poly's filter and output window (its padding arithmetic)
  polyphase_weights    that filter as one strided correlation: `up` output phases, stride `down`
  sos_state_space      a cascade of second-order sections as one state-space system (A, B, C, D)
  chunked_sos_matrices what a chunked, parallel evaluation of that system needs (see the torch peer)
"""

import sys

import numpy as np

from peer_common import fast_length  # noqa: F401 - the torch peer's FFT length, re-exported


def upfirdn_length(ntaps, n, up, down):
    return ((n - 1) * up + ntaps - 1) // down + 1


def resample_poly_taps(n, up, down, h):
    """scipy's resample_poly around a designed filter h (firwin(...), not yet times up):
    returns (taps times up, padded as scipy pads them, start, out_length) for upfirdn."""
    half_len = (len(h) - 1) // 2
    n_out = n * up // down + (1 if (n * up) % down else 0)
    pre = down - half_len % down
    start = (half_len + pre) // down
    post = 0
    while upfirdn_length(len(h) + pre + post, n, up, down) < n_out + start:
        post += 1
    taps = np.concatenate([np.zeros(pre), np.asarray(h, dtype=np.float64) * up, np.zeros(post)])
    return taps, start, n_out


def polyphase_weights(taps, up, down, start):
    """Output k = q*up + r of upfirdn(taps, x, up, down)[start:] as sum_t W[r, t] x[q*down + base + t].

    Returns (W of shape (up, width), base). With y_r[q] a correlation of stride `down`, the output
    interleaves the phases: y[q*up + r] = y_r[q].
    """
    taps = np.asarray(taps, dtype=np.float64)
    phases = []
    for r in range(up):
        c, p = divmod((start + r) * down, up)
        count = (len(taps) - p + up - 1) // up  # taps of this phase: p, p + up, ...
        phases.append((c, p, count))
    base = min(c - count + 1 for c, _, count in phases)
    width = max(c for c, _, _ in phases) - base + 1
    w = np.zeros((up, width))
    for r, (c, p, count) in enumerate(phases):
        for t in range(width):
            l = c - (base + t)
            if 0 <= l < count:
                w[r, t] = taps[up * l + p]
    return w, base


def sos_state_space(sos):
    """The cascade of sections (transposed direct form II each) as s' = A s + B x, y = C s + D x."""
    sos = np.asarray(sos, dtype=np.float64)
    k = len(sos)

    def step(s, x):
        nxt = np.zeros(2 * k)
        v = x
        for i, (b0, b1, b2, a0, a1, a2) in enumerate(sos):
            b0, b1, b2, a1, a2 = b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0
            y = b0 * v + s[2 * i]
            nxt[2 * i] = b1 * v - a1 * y + s[2 * i + 1]
            nxt[2 * i + 1] = b2 * v - a2 * y
            v = y
        return nxt, v

    a = np.zeros((2 * k, 2 * k))
    c = np.zeros(2 * k)
    for i in range(2 * k):
        e = np.zeros(2 * k)
        e[i] = 1.0
        a[:, i], c[i] = step(e, 0.0)
    b, d = step(np.zeros(2 * k), 1.0)
    return a, b, c, d


def chunked_sos_matrices(sos, chunk, chunks):
    """What filtering chunks of `chunk` samples at once needs (float64):
      T (chunk x chunk)  zero-state response within a chunk: y0 = X @ T.T (lower-triangular Toeplitz of h)
      G (states x chunk) state a chunk ends in from a zero start: e = X @ G.T
      F (chunk x states) output of a starting state: y += S @ F.T
      powers             A^chunk, A^(2 chunk), A^(4 chunk), ... below `chunks`, for a doubling scan of the starts
    """
    a, b, c, d = sos_state_space(sos)
    n = a.shape[0]
    a_pow = np.eye(n)
    h = np.zeros(chunk)
    h[0] = d
    f = np.zeros((chunk, n))
    g = np.zeros((n, chunk))
    for t in range(chunk):
        f[t] = c @ a_pow  # C A^t
        g[:, chunk - 1 - t] = a_pow @ b  # A^t B for input u = chunk - 1 - t
        if t + 1 < chunk:
            h[t + 1] = c @ a_pow @ b  # C A^t B
        a_pow = a @ a_pow
    idx = np.arange(chunk)
    lag = idx[:, None] - idx[None, :]
    toeplitz = np.where(lag >= 0, h[np.clip(lag, 0, chunk - 1)], 0.0)
    powers = []
    p = a_pow  # A^chunk
    step = 1
    while step < chunks:
        powers.append(p)
        p = p @ p
        step *= 2
    return toeplitz, g, f, powers


def chunked_sosfilt_numpy(sos, x, chunk):
    """The torch peer's chunked evaluation, in numpy (the self-test compares it with scipy)."""
    b, n = x.shape
    nc = -(-n // chunk)
    xp = np.zeros((b, nc * chunk))
    xp[:, :n] = x
    t, g, f, powers = chunked_sos_matrices(sos, chunk, nc)
    xc = xp.reshape(-1, chunk)
    y = xc @ t.T
    v = (xc @ g.T).reshape(b, nc, -1)
    step = 1
    for p in powers:
        v = np.concatenate([v[:, :step], v[:, step:] + v[:, :-step] @ p.T], axis=1)
        step *= 2
    s = np.concatenate([np.zeros((b, 1, v.shape[2])), v[:, :-1]], axis=1).reshape(-1, v.shape[2])
    y = y + s @ f.T
    return y.reshape(b, -1)[:, :n]


def polyphase_numpy(x, w, base, up, down, n_out):
    """The torch peer's strided correlation, in numpy."""
    b, n = x.shape
    q = -(-n_out // up)
    width = w.shape[1]
    out = np.zeros((b, q, up))
    for qq in range(q):
        for t in range(width):
            i = qq * down + base + t
            if 0 <= i < n:
                out[:, qq, :] += x[:, i:i + 1] * w[:, t][None, :]
    return out.reshape(b, q * up)[:, :n_out]


def self_test():
    import scipy.signal as ss

    rng = np.random.default_rng(5)
    worst = 0.0
    for up, down, n in ((3, 7, 1000), (7, 3, 301), (2, 5, 64), (5, 2, 33)):
        x = rng.standard_normal((2, n))
        h = ss.firwin(2 * 10 * max(up, down) + 1, 1.0 / max(up, down), window=("kaiser", 5.0))
        taps, start, n_out = resample_poly_taps(n, up, down, h)
        w, base = polyphase_weights(taps, up, down, start)
        got = polyphase_numpy(x, w, base, up, down, n_out)
        want = ss.resample_poly(x, up, down, axis=-1)
        worst = max(worst, float(np.abs(got - want).max()))
    sos = ss.butter(8, [0.1, 0.25], btype="bandpass", output="sos")
    for n, chunk in ((4096, 256), (1000, 64), (777, 128)):
        x = rng.standard_normal((3, n))
        got = chunked_sosfilt_numpy(sos, x, chunk)
        want = ss.sosfilt(sos, x, axis=-1)
        worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
    print(f"worst {worst:.3g}")
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(self_test() if "--self-test" in sys.argv else 2)
