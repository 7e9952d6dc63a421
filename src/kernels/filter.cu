// GPU filtering kernels for src/signal/ (iir.ts, fir.ts, hilbert.ts, convolve.ts): second-order-section
// IIR filtering (sosfilt, sosfiltfilt), FIR filtering by direct convolution (lfilter and filtfilt with
// FIR taps), the analytic signal's spectrum weights (hilbert) and convolution (direct, and the
// padding, spectrum product and slicing around cuFFT for fftconvolve; overlap-save blocks at the end),
// resampling (upfirdn's polyphase sum, resample's spectrum) and cross spectra (csd, coherence).
// Each kernel has a float (_f32)
// and a double (_f64) variant instantiated from one template; arithmetic and filter state are in
// double in both (scipy filters float32 input in float64, since its coefficients are float64).
//
// Series are row-major (series after series). Coefficient tables are float64: SOS rows
// [b0, b1, b2, a0 = 1, a1, a2], FIR taps b[0..ntaps). Filter state follows scipy's layouts:
// sosfilt's zi is (sections, batch, 2), lfilter's zi is (batch, ntaps - 1).
//
// The IIR recurrence is sequential along time: one thread runs one series through the whole
// cascade (direct form II transposed, as scipy's _sosfilt), so a launch is parallel over series.

#include <cuda_runtime.h>

typedef long long flt_i64;

template <typename T> struct FilterComplex;
template <> struct FilterComplex<float> { typedef float2 type; };
template <> struct FilterComplex<double> { typedef double2 type; };

__device__ __forceinline__ flt_i64 filter_thread() { return (flt_i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ flt_i64 filter_threads() { return (flt_i64)gridDim.x * blockDim.x; }

// The most sections one thread keeps state for (in local memory); iir.ts refuses more.
#define MAX_SOS_SECTIONS 64

// Padding codes of filtfilt/sosfiltfilt (iir.ts, fir.ts: PADTYPE_CODES): none, odd, even, constant.
#define PAD_NONE 0
#define PAD_ODD 1
#define PAD_EVEN 2
#define PAD_CONSTANT 3

// Sample i (0 <= i < n + 2 * edge) of series x (n samples) extended by `edge` samples at both ends,
// as scipy's odd_ext / even_ext / const_ext (edge <= n - 1, checked on the host).
template <typename T>
__device__ __forceinline__ double extended(const T* x, flt_i64 n, flt_i64 edge, int padtype, flt_i64 i) {
  if (i < edge) {
    if (padtype == PAD_ODD) return 2.0 * (double)x[0] - (double)x[edge - i];
    if (padtype == PAD_EVEN) return (double)x[edge - i];
    return (double)x[0];
  }
  flt_i64 j = i - edge;
  if (j < n) return (double)x[j];
  j -= n;
  if (padtype == PAD_ODD) return 2.0 * (double)x[n - 1] - (double)x[n - 2 - j];
  if (padtype == PAD_EVEN) return (double)x[n - 2 - j];
  return (double)x[n - 1];
}

// One sample through the cascade of `sections` second-order sections, direct form II transposed,
// state z[2 * s], z[2 * s + 1] per section.
__device__ __forceinline__ double cascade(const double* sos, int sections, double* z, double v) {
  for (int s = 0; s < sections; s++) {
    const double* c = sos + 6 * s;
    double y = c[0] * v + z[2 * s];
    z[2 * s] = c[1] * v - c[4] * y + z[2 * s + 1];
    z[2 * s + 1] = c[2] * v - c[5] * y;
    v = y;
  }
  return v;
}

// scipy.signal.sosfilt along each of `batch` series of `length` samples: y may be x (in place).
// With has_zi, the initial state is zi (sections, batch, 2), else zero; with has_zf, the final
// state is written to zf (same layout; zf may be zi).
template <typename T>
__device__ void sosfilt_impl(const T* x, T* y, const double* sos, const T* zi, T* zf, int batch, int length, int sections, int has_zi, int has_zf) {
  for (flt_i64 b = filter_thread(); b < batch; b += filter_threads()) {
    double z[2 * MAX_SOS_SECTIONS];
    for (int s = 0; s < sections; s++) {
      z[2 * s] = has_zi ? (double)zi[(s * (flt_i64)batch + b) * 2] : 0.0;
      z[2 * s + 1] = has_zi ? (double)zi[(s * (flt_i64)batch + b) * 2 + 1] : 0.0;
    }
    const T* row = x + b * length;
    T* out = y + b * length;
    for (flt_i64 t = 0; t < length; t++) out[t] = (T)cascade(sos, sections, z, (double)row[t]);
    if (has_zf)
      for (int s = 0; s < sections; s++) {
        zf[(s * (flt_i64)batch + b) * 2] = (T)z[2 * s];
        zf[(s * (flt_i64)batch + b) * 2 + 1] = (T)z[2 * s + 1];
      }
  }
}

// scipy.signal.sosfiltfilt (method 'pad'): the series extended by `edge` samples (padtype), filtered
// forward from the steady state zi * (first extended sample), then backward from zi * (last forward
// output); the middle `length` samples of the result go to y. `work` holds the forward pass in
// double, time-major (work[i * batch + b]) so neighbouring threads touch neighbouring addresses.
// zi is sosfilt_zi(sos), (sections, 2).
template <typename T>
__device__ void sosfiltfilt_impl(const T* x, T* y, double* work, const double* sos, const double* zi, int batch, int length, int sections, int edge, int padtype) {
  const flt_i64 n = (flt_i64)length + 2 * (flt_i64)edge;
  for (flt_i64 b = filter_thread(); b < batch; b += filter_threads()) {
    const T* row = x + b * length;
    double z[2 * MAX_SOS_SECTIONS];
    const double x0 = extended(row, length, edge, padtype, 0);
    for (int s = 0; s < 2 * sections; s++) z[s] = zi[s] * x0;
    for (flt_i64 i = 0; i < n; i++) work[i * batch + b] = cascade(sos, sections, z, extended(row, length, edge, padtype, i));
    const double y0 = work[(n - 1) * batch + b];
    for (int s = 0; s < 2 * sections; s++) z[s] = zi[s] * y0;
    T* out = y + b * length;
    for (flt_i64 i = n - 1; i >= edge; i--) {
      double v = cascade(sos, sections, z, work[i * batch + b]);
      if (i < edge + length) out[i - edge] = (T)v;
    }
  }
}

// scipy.signal.lfilter(b, [1], x) with FIR taps b: y[t] = sum_k b[k] x[t - k] (+ zi[t] for t < ntaps - 1
// with has_zi; zi is (batch, ntaps - 1)). One thread per output sample; y must not be x.
template <typename T>
__device__ void fir_impl(const T* x, T* y, const double* taps, const T* zi, int batch, int length, int ntaps, int has_zi) {
  const flt_i64 total = (flt_i64)batch * length;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / length;
    const flt_i64 t = i - b * length;
    const T* row = x + b * length;
    const flt_i64 last = t < ntaps - 1 ? t : ntaps - 1;
    double acc = 0.0;
    for (flt_i64 k = 0; k <= last; k++) acc += taps[k] * (double)row[t - k];
    if (has_zi && t < ntaps - 1) acc += (double)zi[b * (ntaps - 1) + t];
    y[i] = (T)acc;
  }
}

// The final state of lfilter with FIR taps (scipy's zf, (batch, ntaps - 1)): zf[i] = sum over
// j > i of b[j] x[length + i - j], plus zi[length + i] while that index is still inside zi.
template <typename T>
__device__ void fir_state_impl(const T* x, const double* taps, const T* zi, T* zf, int batch, int length, int ntaps, int has_zi) {
  const flt_i64 m = ntaps - 1;
  const flt_i64 total = (flt_i64)batch * m;
  for (flt_i64 e = filter_thread(); e < total; e += filter_threads()) {
    const flt_i64 b = e / m;
    const flt_i64 i = e - b * m;
    const T* row = x + b * length;
    double acc = 0.0;
    for (flt_i64 j = i + 1; j < ntaps; j++) {
      const flt_i64 t = length + i - j;
      if (t >= 0) acc += taps[j] * (double)row[t];
    }
    if (has_zi && length + i < m) acc += (double)zi[b * m + length + i];
    zf[e] = (T)acc;
  }
}

// filtfilt's forward pass with FIR taps over the extended series (n = length + 2 edge samples per
// series, row-major into `work`), started in steady state: samples before the start hold the first
// extended sample (lfilter_zi(b, 1) * x0 is exactly that state).
template <typename T>
__device__ void fir_forward_impl(const T* x, double* work, const double* taps, int batch, int length, int ntaps, int edge, int padtype) {
  const flt_i64 n = (flt_i64)length + 2 * (flt_i64)edge;
  const flt_i64 total = (flt_i64)batch * n;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / n;
    const flt_i64 t = i - b * n;
    const T* row = x + b * length;
    const double first = extended(row, length, edge, padtype, 0);
    double acc = 0.0;
    for (flt_i64 k = 0; k < ntaps; k++) acc += taps[k] * (t >= k ? extended(row, length, edge, padtype, t - k) : first);
    work[i] = acc;
  }
}

// filtfilt's backward pass: the forward output filtered in reverse from its steady state (samples
// past the end hold the last one); the middle `length` samples go to y.
template <typename T>
__device__ void fir_backward_impl(const double* work, T* y, const double* taps, int batch, int length, int ntaps, int edge) {
  const flt_i64 n = (flt_i64)length + 2 * (flt_i64)edge;
  const flt_i64 total = (flt_i64)batch * length;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / length;
    const flt_i64 t = i - b * length + edge;
    const double* row = work + b * n;
    double acc = 0.0;
    for (flt_i64 k = 0; k < ntaps; k++) acc += taps[k] * row[t + k < n ? t + k : n - 1];
    y[i] = (T)acc;
  }
}

// Copies `batch` series of `length` samples into rows of n (truncated or zero-padded: fft(x, n)'s input).
template <typename T>
__device__ void fit_rows_impl(const T* x, T* out, int batch, int length, int n) {
  const flt_i64 total = (flt_i64)batch * n;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / n;
    const flt_i64 t = i - b * n;
    out[i] = t < length ? x[b * length + t] : (T)0;
  }
}

// The analytic signal's spectrum from a one-sided spectrum (n/2 + 1 bins per row) into a full one
// (n bins per row), ready for an unnormalised inverse FFT: bin 0 (and n/2 for an even n) times 1,
// bins 1 .. ceil(n/2) - 1 times 2, the rest 0; every bin times 1/n.
template <typename T>
__device__ void analytic_spectrum_impl(const typename FilterComplex<T>::type* half, typename FilterComplex<T>::type* full, int batch, int n) {
  const flt_i64 bins = n / 2 + 1;
  const flt_i64 total = (flt_i64)batch * n;
  const double inv = 1.0 / (double)n;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / n;
    const flt_i64 k = i - b * n;
    typename FilterComplex<T>::type v;
    if (k >= bins) {
      v.x = (T)0;
      v.y = (T)0;
    } else {
      const double w = (k == 0 || ((n & 1) == 0 && 2 * k == n)) ? inv : 2.0 * inv;
      const typename FilterComplex<T>::type h = half[b * bins + k];
      v.x = (T)(w * (double)h.x);
      v.y = (T)(w * (double)h.y);
    }
    full[i] = v;
  }
}

// The analytic signal of series of at most two samples: the signal itself (hilbert's weights are all
// 1 there), zero-padded or truncated to n, with imaginary part 0.
template <typename T>
__device__ void real_to_complex_impl(const T* x, typename FilterComplex<T>::type* out, int batch, int length, int n) {
  const flt_i64 total = (flt_i64)batch * n;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / n;
    const flt_i64 t = i - b * n;
    typename FilterComplex<T>::type v;
    v.x = t < length ? x[b * length + t] : (T)0;
    v.y = (T)0;
    out[i] = v;
  }
}

// scipy.signal.convolve(x, taps) by direct summation, the output window [start, start + out_length)
// of the full convolution (length + ntaps - 1 samples): full starts at 0, same at (ntaps - 1) / 2,
// valid at min(length, ntaps) - 1. One thread per output sample.
template <typename T>
__device__ void convolve_direct_impl(const T* x, T* y, const double* taps, int batch, int length, int ntaps, int out_length, int start) {
  const flt_i64 total = (flt_i64)batch * out_length;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / out_length;
    const flt_i64 j = i - b * out_length + start;
    const T* row = x + b * length;
    // Taps k with 0 <= j - k < length.
    const flt_i64 lo = j - length + 1 > 0 ? j - length + 1 : 0;
    const flt_i64 hi = j < ntaps - 1 ? j : ntaps - 1;
    double acc = 0.0;
    for (flt_i64 k = lo; k <= hi; k++) acc += taps[k] * (double)row[j - k];
    y[i] = (T)acc;
  }
}

// The taps (float64) as one real row of n points in precision T, zero-padded: fftconvolve's kernel row.
template <typename T>
__device__ void pad_taps_impl(const double* taps, T* out, int ntaps, int n) {
  for (flt_i64 i = filter_thread(); i < n; i += filter_threads()) out[i] = i < ntaps ? (T)taps[i] : (T)0;
}

// The window [start, start + out_length) of each row of n samples: the mode's part of the full convolution.
template <typename T>
__device__ void slice_rows_impl(const T* rows, T* out, int batch, int n, int out_length, int start) {
  const flt_i64 total = (flt_i64)batch * out_length;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / out_length;
    out[i] = rows[b * n + start + (i - b * out_length)];
  }
}

// scipy.signal.upfirdn(h, x, up, down) with zero ('constant', cval 0) extension: each series
// upsampled by `up` (up - 1 zeros after each sample), filtered by the taps, every `down`-th sample
// kept. Output samples [start, start + out_length) of the full result; one thread per output sample,
// summing only the taps that meet a non-zero upsampled sample (polyphase).
template <typename T>
__device__ void upfirdn_impl(const T* x, T* y, const double* taps, int batch, int length, int ntaps, int up, int down, int out_length, int start) {
  const flt_i64 total = (flt_i64)batch * out_length;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / out_length;
    const flt_i64 j = (start + (i - b * out_length)) * (flt_i64)down;
    const T* row = x + b * length;
    // Taps k with k = j (mod up), 0 <= k <= j and (j - k) / up < length.
    const flt_i64 first = j - (flt_i64)(length - 1) * up;
    flt_i64 k = first > 0 ? first : j % up;
    const flt_i64 last = j < ntaps - 1 ? j : ntaps - 1;
    double acc = 0.0;
    for (; k <= last; k += up) acc += taps[k] * (double)row[(j - k) / up];
    y[i] = (T)acc;
  }
}

// The block's dynamic shared memory (launch sharedMemBytes) as an array of `type`. The CPU emulation
// (test/unit/signal/emulation/include/cuda_runtime.h) defines its own, since g++ has no __shared__.
#ifndef FILTER_DYNAMIC_SHARED
#define FILTER_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

// upfirdn_impl's sums, tiled for memory bandwidth (upfirdn-tiling.ts plans the geometry). A block
// takes a tile of up * per_class consecutive outputs of one series (the first tile starts at the
// multiple of up at or below `start`, so each tile's output c + n * up, 0 <= c < up, has the fixed
// phase (c * down) % up and input position n * down + (c * down) / up from the tile's base), stages
// the `span` input samples the tile reads in shared memory with coalesced loads, as double (one
// conversion per sample, not one per tap; zeros outside the series, scipy's constant extension),
// then sums from there. Work item w = c * per_class + n: consecutive threads take consecutive n of
// one phase, so they read shared samples `down` apart (no bank conflicts for odd down) and the same
// tap (a broadcast). The sums land in shared memory at their place in the tile, and the tile is
// written out by consecutive threads to consecutive outputs (coalesced, where the phase order would
// write `up` apart). Taps come phase by phase: phased[p * phase_taps + m] = taps[p + m * up], zero
// past the last tap, so every sum runs phase_taps terms in the order of upfirdn_impl (m = k / up
// ascending); the zero taps and zero samples add exact zeros. Shared memory: span samples, then
// up * per_class sums, all double. Tiles beyond the grid are taken in grid strides. Barriers: the
// samples are staged before any sum reads them, the sums are all in before the tile is written, and
// the next tile's staging barrier waits for the writes (its samples and sums overwrite this tile's).
template <typename T>
__device__ void upfirdn_tiled_impl(const T* x, T* y, const double* phased, int batch, int length, int phase_taps, int up, int down, int out_length, int start, int per_class, int span, int tiles) {
  FILTER_DYNAMIC_SHARED(double, samples);
  const int tile_out = up * per_class;
  double* sums = samples + span;
  const flt_i64 first = (flt_i64)(start / up) * up;
  const flt_i64 jobs = (flt_i64)batch * tiles;
  for (flt_i64 job = blockIdx.x; job < jobs; job += gridDim.x) {
    const flt_i64 b = job / tiles;
    const flt_i64 g0 = first + (job - b * tiles) * tile_out;
    // Input sample of shared slot 0: the tile's first output reads g0 / up * down and the phase_taps - 1 before it.
    const flt_i64 base = g0 / up * down - (phase_taps - 1);
    const T* row = x + b * length;
    for (int i = threadIdx.x; i < span; i += blockDim.x) {
      const flt_i64 k = base + i;
      samples[i] = (k >= 0 && k < length) ? (double)row[k] : 0.0;
    }
    __syncthreads();
    for (int w = threadIdx.x; w < tile_out; w += blockDim.x) {
      const int c = w / per_class;
      const int n = w - c * per_class;
      const double* h = phased + (flt_i64)((c * (flt_i64)down) % up) * phase_taps;
      const double* s = samples + (phase_taps - 1) + (int)((c * (flt_i64)down) / up) + n * down;
      double acc = 0.0;
#pragma unroll 4
      for (int m = 0; m < phase_taps; m++) acc += h[m] * s[-m];
      sums[c + n * up] = acc;
    }
    __syncthreads();
    // Outputs before `start` or past the window (first and last tiles) are summed but not written.
    for (int i = threadIdx.x; i < tile_out; i += blockDim.x) {
      const flt_i64 l = g0 + i - start;
      if (l >= 0 && l < out_length) y[b * out_length + l] = (T)sums[i];
    }
  }
}

// scipy.signal.resample's spectrum (real input): the first min(num, nx) // 2 + 1 bins of each
// series' half spectrum (in_bins per row) kept, the rest zero, an even N's Nyquist bin times
// `nyquist_factor` (2 when downsampling, 1/2 when upsampling), all times `scale` (1 / nx: numpy's
// irfft normalisation times num / nx). The imaginary parts the inverse real FFT ignores (DC, an
// even num's Nyquist) are zeroed so cuFFT's C2R sees a Hermitian row.
template <typename T>
__device__ void resample_spectrum_impl(const typename FilterComplex<T>::type* in, typename FilterComplex<T>::type* out, int batch, int in_bins, int out_bins, int n, int num, double nyquist_factor, double scale) {
  const flt_i64 total = (flt_i64)batch * out_bins;
  const flt_i64 kept = n / 2 + 1;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / out_bins;
    const flt_i64 k = i - b * out_bins;
    double re = 0.0, im = 0.0;
    if (k < kept) {
      const typename FilterComplex<T>::type v = in[b * in_bins + k];
      const double f = ((n & 1) == 0 && 2 * k == n) ? nyquist_factor * scale : scale;
      re = f * (double)v.x;
      im = f * (double)v.y;
    }
    if (k == 0 || ((num & 1) == 0 && 2 * k == num)) im = 0.0;
    typename FilterComplex<T>::type v;
    v.x = (T)re;
    v.y = (T)im;
    out[i] = v;
  }
}

// Whether bin k of an n-point one-sided spectrum is its own mirror (DC, an even n's Nyquist): not doubled.
__device__ __forceinline__ bool cross_self_mirrored(flt_i64 k, flt_i64 n) { return k == 0 || ((n & 1) == 0 && 2 * k == n); }

// conj(X_k) * Y_k of frame f of series b, scaled and (one-sided, not DC/Nyquist) doubled, from the
// frame-major half spectra (half_bins per frame); bins past the half are the conjugate mirror.
template <typename T>
__device__ __forceinline__ void cross_bin(const typename FilterComplex<T>::type* X, const typename FilterComplex<T>::type* Y, flt_i64 b, flt_i64 f, flt_i64 k, int frames, int half_bins, int nfft, int onesided, double scale, double* re, double* im) {
  const flt_i64 src = k < half_bins ? k : nfft - k;
  const double sign = k < half_bins ? 1.0 : -1.0;
  const typename FilterComplex<T>::type x = X[(b * frames + f) * half_bins + src];
  const typename FilterComplex<T>::type y = Y[(b * frames + f) * half_bins + src];
  const double xr = (double)x.x, xi = sign * (double)x.y, yr = (double)y.x, yi = sign * (double)y.y;
  const double factor = onesided && !cross_self_mirrored(k, nfft) ? 2.0 * scale : scale;
  *re = factor * (xr * yr + xi * yi);
  *im = factor * (xr * yi - xi * yr);
}

// scipy.signal.csd, average 'mean': out[b * freqs + k] = the mean over frames of conj(X) * Y.
template <typename T>
__device__ void csd_mean_impl(const typename FilterComplex<T>::type* X, const typename FilterComplex<T>::type* Y, typename FilterComplex<T>::type* out, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) {
  const flt_i64 total = (flt_i64)batch * freqs;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / freqs;
    const flt_i64 k = i - b * freqs;
    double sr = 0.0, si = 0.0;
    for (int f = 0; f < frames; f++) {
      double re, im;
      cross_bin<T>(X, Y, b, f, k, frames, half_bins, nfft, onesided, scale, &re, &im);
      sr += re;
      si += im;
    }
    typename FilterComplex<T>::type v;
    v.x = (T)(sr / frames);
    v.y = (T)(si / frames);
    out[i] = v;
  }
}

// scipy.signal.csd, average 'median', step 1: every frame's cross spectrum as rows of frames values,
// real parts (rows 0 .. total - 1) then imaginary parts (rows total .. 2 total - 1), for median_rows.
template <typename T>
__device__ void csd_parts_impl(const typename FilterComplex<T>::type* X, const typename FilterComplex<T>::type* Y, T* parts, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) {
  const flt_i64 total = (flt_i64)batch * freqs;
  for (flt_i64 i = filter_thread(); i < total * frames; i += filter_threads()) {
    const flt_i64 row = i / frames;
    const flt_i64 f = i - row * frames;
    const flt_i64 b = row / freqs;
    double re, im;
    cross_bin<T>(X, Y, b, f, row - b * freqs, frames, half_bins, nfft, onesided, scale, &re, &im);
    parts[i] = (T)re;
    parts[total * frames + i] = (T)im;
  }
}

// Step 2: the medians of the real parts (first `total` values) and of the imaginary parts as complex values.
template <typename T>
__device__ void join_parts_impl(const T* medians, typename FilterComplex<T>::type* out, int total) {
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    typename FilterComplex<T>::type v;
    v.x = medians[i];
    v.y = medians[total + i];
    out[i] = v;
  }
}

// scipy.signal.coherence: |Pxy|^2 / (Pxx * Pyy), in double.
template <typename T>
__device__ void coherence_impl(const typename FilterComplex<T>::type* pxy, const T* pxx, const T* pyy, T* out, int total) {
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const double re = (double)pxy[i].x, im = (double)pxy[i].y;
    out[i] = (T)((re * re + im * im) / ((double)pxx[i] * (double)pyy[i]));
  }
}

// The exported kernels, one per precision (spelled out: codegen reads these signatures).
extern "C" __global__ void sosfilt_f32(const float* x, float* y, const double* sos, const float* zi, float* zf, int batch, int length, int sections, int has_zi, int has_zf) { sosfilt_impl<float>(x, y, sos, zi, zf, batch, length, sections, has_zi, has_zf); }
extern "C" __global__ void sosfilt_f64(const double* x, double* y, const double* sos, const double* zi, double* zf, int batch, int length, int sections, int has_zi, int has_zf) { sosfilt_impl<double>(x, y, sos, zi, zf, batch, length, sections, has_zi, has_zf); }
extern "C" __global__ void sosfiltfilt_f32(const float* x, float* y, double* work, const double* sos, const double* zi, int batch, int length, int sections, int edge, int padtype) { sosfiltfilt_impl<float>(x, y, work, sos, zi, batch, length, sections, edge, padtype); }
extern "C" __global__ void sosfiltfilt_f64(const double* x, double* y, double* work, const double* sos, const double* zi, int batch, int length, int sections, int edge, int padtype) { sosfiltfilt_impl<double>(x, y, work, sos, zi, batch, length, sections, edge, padtype); }
extern "C" __global__ void fir_f32(const float* x, float* y, const double* taps, const float* zi, int batch, int length, int ntaps, int has_zi) { fir_impl<float>(x, y, taps, zi, batch, length, ntaps, has_zi); }
extern "C" __global__ void fir_f64(const double* x, double* y, const double* taps, const double* zi, int batch, int length, int ntaps, int has_zi) { fir_impl<double>(x, y, taps, zi, batch, length, ntaps, has_zi); }
extern "C" __global__ void fir_state_f32(const float* x, const double* taps, const float* zi, float* zf, int batch, int length, int ntaps, int has_zi) { fir_state_impl<float>(x, taps, zi, zf, batch, length, ntaps, has_zi); }
extern "C" __global__ void fir_state_f64(const double* x, const double* taps, const double* zi, double* zf, int batch, int length, int ntaps, int has_zi) { fir_state_impl<double>(x, taps, zi, zf, batch, length, ntaps, has_zi); }
extern "C" __global__ void fir_forward_f32(const float* x, double* work, const double* taps, int batch, int length, int ntaps, int edge, int padtype) { fir_forward_impl<float>(x, work, taps, batch, length, ntaps, edge, padtype); }
extern "C" __global__ void fir_forward_f64(const double* x, double* work, const double* taps, int batch, int length, int ntaps, int edge, int padtype) { fir_forward_impl<double>(x, work, taps, batch, length, ntaps, edge, padtype); }
extern "C" __global__ void fir_backward_f32(const double* work, float* y, const double* taps, int batch, int length, int ntaps, int edge) { fir_backward_impl<float>(work, y, taps, batch, length, ntaps, edge); }
extern "C" __global__ void fir_backward_f64(const double* work, double* y, const double* taps, int batch, int length, int ntaps, int edge) { fir_backward_impl<double>(work, y, taps, batch, length, ntaps, edge); }
extern "C" __global__ void fit_rows_f32(const float* x, float* out, int batch, int length, int n) { fit_rows_impl<float>(x, out, batch, length, n); }
extern "C" __global__ void fit_rows_f64(const double* x, double* out, int batch, int length, int n) { fit_rows_impl<double>(x, out, batch, length, n); }
extern "C" __global__ void analytic_spectrum_f32(const float2* half, float2* full, int batch, int n) { analytic_spectrum_impl<float>(half, full, batch, n); }
extern "C" __global__ void analytic_spectrum_f64(const double2* half, double2* full, int batch, int n) { analytic_spectrum_impl<double>(half, full, batch, n); }
extern "C" __global__ void real_to_complex_f32(const float* x, float2* out, int batch, int length, int n) { real_to_complex_impl<float>(x, out, batch, length, n); }
extern "C" __global__ void real_to_complex_f64(const double* x, double2* out, int batch, int length, int n) { real_to_complex_impl<double>(x, out, batch, length, n); }
extern "C" __global__ void convolve_direct_f32(const float* x, float* y, const double* taps, int batch, int length, int ntaps, int out_length, int start) { convolve_direct_impl<float>(x, y, taps, batch, length, ntaps, out_length, start); }
extern "C" __global__ void convolve_direct_f64(const double* x, double* y, const double* taps, int batch, int length, int ntaps, int out_length, int start) { convolve_direct_impl<double>(x, y, taps, batch, length, ntaps, out_length, start); }
extern "C" __global__ void pad_taps_f32(const double* taps, float* out, int ntaps, int n) { pad_taps_impl<float>(taps, out, ntaps, n); }
extern "C" __global__ void pad_taps_f64(const double* taps, double* out, int ntaps, int n) { pad_taps_impl<double>(taps, out, ntaps, n); }
extern "C" __global__ void slice_rows_f32(const float* rows, float* out, int batch, int n, int out_length, int start) { slice_rows_impl<float>(rows, out, batch, n, out_length, start); }
extern "C" __global__ void slice_rows_f64(const double* rows, double* out, int batch, int n, int out_length, int start) { slice_rows_impl<double>(rows, out, batch, n, out_length, start); }
extern "C" __global__ void upfirdn_f32(const float* x, float* y, const double* taps, int batch, int length, int ntaps, int up, int down, int out_length, int start) { upfirdn_impl<float>(x, y, taps, batch, length, ntaps, up, down, out_length, start); }
extern "C" __global__ void upfirdn_f64(const double* x, double* y, const double* taps, int batch, int length, int ntaps, int up, int down, int out_length, int start) { upfirdn_impl<double>(x, y, taps, batch, length, ntaps, up, down, out_length, start); }
extern "C" __global__ void upfirdn_tiled_f32(const float* x, float* y, const double* phased, int batch, int length, int phase_taps, int up, int down, int out_length, int start, int per_class, int span, int tiles) { upfirdn_tiled_impl<float>(x, y, phased, batch, length, phase_taps, up, down, out_length, start, per_class, span, tiles); }
extern "C" __global__ void upfirdn_tiled_f64(const double* x, double* y, const double* phased, int batch, int length, int phase_taps, int up, int down, int out_length, int start, int per_class, int span, int tiles) { upfirdn_tiled_impl<double>(x, y, phased, batch, length, phase_taps, up, down, out_length, start, per_class, span, tiles); }
extern "C" __global__ void resample_spectrum_f32(const float2* in, float2* out, int batch, int in_bins, int out_bins, int n, int num, double nyquist_factor, double scale) { resample_spectrum_impl<float>(in, out, batch, in_bins, out_bins, n, num, nyquist_factor, scale); }
extern "C" __global__ void resample_spectrum_f64(const double2* in, double2* out, int batch, int in_bins, int out_bins, int n, int num, double nyquist_factor, double scale) { resample_spectrum_impl<double>(in, out, batch, in_bins, out_bins, n, num, nyquist_factor, scale); }
extern "C" __global__ void csd_mean_f32(const float2* X, const float2* Y, float2* out, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_mean_impl<float>(X, Y, out, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void csd_mean_f64(const double2* X, const double2* Y, double2* out, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_mean_impl<double>(X, Y, out, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void csd_parts_f32(const float2* X, const float2* Y, float* parts, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_parts_impl<float>(X, Y, parts, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void csd_parts_f64(const double2* X, const double2* Y, double* parts, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_parts_impl<double>(X, Y, parts, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void join_parts_f32(const float* medians, float2* out, int total) { join_parts_impl<float>(medians, out, total); }
extern "C" __global__ void join_parts_f64(const double* medians, double2* out, int total) { join_parts_impl<double>(medians, out, total); }
extern "C" __global__ void coherence_f32(const float2* pxy, const float* pxx, const float* pyy, float* out, int total) { coherence_impl<float>(pxy, pxx, pyy, out, total); }
extern "C" __global__ void coherence_f64(const double2* pxy, const double* pxx, const double* pyy, double* out, int total) { coherence_impl<double>(pxy, pxx, pyy, out, total); }

// ---- Overlap-save FFT convolution (fft-convolution.ts: fftconvolve, convolve's FFT method and
// oaconvolve when the taps are much shorter than the series) ----
// Each series is cut into overlapping rows of nfft samples, row q starting at first + q * step; the
// circular convolution of a row with the taps equals the linear one at its last step = nfft - ntaps + 1
// samples, so every block of every series goes through one batched cuFFT of a length that runs from
// shared memory instead of a whole-length transform that makes several passes over HBM. A CUDA block
// works on one tile of one row: the row and the offset come from one division per tile, not per sample.
#define OS_TILE 2048

// Row (b, q) of the input: samples first + q * step + t (0 <= t < nfft) of series b, zero outside [0, length).
template <typename T>
__device__ void os_gather_impl(const T* x, T* rows, int batch, int length, int blocks, int step, int nfft, int first) {
  const unsigned per_row = (unsigned)((nfft + OS_TILE - 1) / OS_TILE);
  const unsigned tiles = (unsigned)batch * (unsigned)blocks * per_row;
  for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const unsigned row = tile / per_row;
    const int t0 = (int)(tile - row * per_row) * OS_TILE;
    const unsigned b = row / (unsigned)blocks;
    const flt_i64 base = (flt_i64)first + (flt_i64)(row - b * (unsigned)blocks) * step;
    const T* series = x + (flt_i64)b * length;
    T* out = rows + (flt_i64)row * nfft;
    const int end = nfft - t0 < OS_TILE ? nfft : t0 + OS_TILE;
    for (int t = t0 + (int)threadIdx.x; t < end; t += (int)blockDim.x) {
      const flt_i64 at = base + t;
      out[t] = at >= 0 && at < length ? series[at] : (T)0;
    }
  }
}

// Each row's one-sided spectrum (bins per row) times the taps' (one row) times `scale` (1 / nfft), in place.
template <typename T>
__device__ void os_product_impl(typename FilterComplex<T>::type* spectra, const typename FilterComplex<T>::type* kernel, int rows, int bins, double scale) {
  const unsigned per_row = (unsigned)((bins + OS_TILE - 1) / OS_TILE);
  const unsigned tiles = (unsigned)rows * per_row;
  for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const unsigned row = tile / per_row;
    const int k0 = (int)(tile - row * per_row) * OS_TILE;
    typename FilterComplex<T>::type* s = spectra + (flt_i64)row * bins;
    const int end = bins - k0 < OS_TILE ? bins : k0 + OS_TILE;
    for (int k = k0 + (int)threadIdx.x; k < end; k += (int)blockDim.x) {
      const typename FilterComplex<T>::type a = s[k];
      const typename FilterComplex<T>::type h = kernel[k];
      typename FilterComplex<T>::type v;
      v.x = (T)(scale * ((double)a.x * (double)h.x - (double)a.y * (double)h.y));
      v.y = (T)(scale * ((double)a.x * (double)h.y + (double)a.y * (double)h.x));
      s[k] = v;
    }
  }
}

// Output sample q * step + t (t < step, below out_length) of series b: sample skip + t of row (b, q),
// where skip = ntaps - 1 leading samples of each row are wrapped around and dropped.
template <typename T>
__device__ void os_scatter_impl(const T* rows, T* y, int batch, int blocks, int step, int nfft, int skip, int out_length) {
  const unsigned per_row = (unsigned)((step + OS_TILE - 1) / OS_TILE);
  const unsigned tiles = (unsigned)batch * (unsigned)blocks * per_row;
  for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const unsigned row = tile / per_row;
    const int t0 = (int)(tile - row * per_row) * OS_TILE;
    const unsigned b = row / (unsigned)blocks;
    const flt_i64 at = (flt_i64)(row - b * (unsigned)blocks) * step;
    const T* in = rows + (flt_i64)row * nfft + skip;
    T* out = y + (flt_i64)b * out_length + at;
    int end = step - t0 < OS_TILE ? step : t0 + OS_TILE;
    if (at + end > out_length) end = (int)(out_length - at);
    for (int t = t0 + (int)threadIdx.x; t < end; t += (int)blockDim.x) out[t] = in[t];
  }
}

extern "C" __global__ void os_gather_f32(const float* x, float* rows, int batch, int length, int blocks, int step, int nfft, int first) { os_gather_impl<float>(x, rows, batch, length, blocks, step, nfft, first); }
extern "C" __global__ void os_gather_f64(const double* x, double* rows, int batch, int length, int blocks, int step, int nfft, int first) { os_gather_impl<double>(x, rows, batch, length, blocks, step, nfft, first); }
extern "C" __global__ void os_product_f32(float2* spectra, const float2* kernel, int rows, int bins, double scale) { os_product_impl<float>(spectra, kernel, rows, bins, scale); }
extern "C" __global__ void os_product_f64(double2* spectra, const double2* kernel, int rows, int bins, double scale) { os_product_impl<double>(spectra, kernel, rows, bins, scale); }
extern "C" __global__ void os_scatter_f32(const float* rows, float* y, int batch, int blocks, int step, int nfft, int skip, int out_length) { os_scatter_impl<float>(rows, y, batch, blocks, step, nfft, skip, out_length); }
extern "C" __global__ void os_scatter_f64(const double* rows, double* y, int batch, int blocks, int step, int nfft, int skip, int out_length) { os_scatter_impl<double>(rows, y, batch, blocks, step, nfft, skip, out_length); }
