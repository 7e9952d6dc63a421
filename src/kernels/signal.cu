// GPU signal kernels for src/signal/: framing, detrend, window, spectra, band metrics, overlap-add
// and the Morlet CWT. Each kernel has a float (_f32) and a double (_f64) variant instantiated from
// one template. Reductions accumulate in double in both variants.
//
// 16-bit samples (i16 with a scale, f16, bf16) are read by the first kernels that touch the
// series (frame, series_stats, detrend_window: `<base>_<in>_<out>` variants), converted to double
// on load, so the samples cross the bus in 2 bytes and no pass widens them first. Results going
// back to the host in 16 bits are rounded by `narrow_<from>_<to>` (round to nearest even).
//
// Complex series (c64/c128, and integer I/Q pairs converted to them by iq_to_complex) are framed by
// frame_complex (each component extended and detrended as a real series), transformed by C2C/Z2Z
// cuFFT plans, and arranged by the same kernels as real input with halfBins = freqs = nfft (every
// bin read as it is, nothing mirrored or doubled). Filters and convolutions with real coefficients
// run on the real and imaginary parts as separate series ("planes"): complex_to_planes, then
// join_planes.
//
// Conventions: series are row-major (series after series); a one-sided spectrum of an n-point
// transform has n/2+1 complex bins per row; grid-stride loops everywhere; reductions use one block
// per row (blockDim.x must be a power of two, <= 1024) with a shared-memory tree.

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef long long i64;

template <typename T> struct Complex;
template <> struct Complex<float> { typedef float2 type; };
template <> struct Complex<double> { typedef double2 type; };

__device__ __forceinline__ i64 global_thread() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 grid_threads() { return (i64)gridDim.x * blockDim.x; }
// Bin k of an n-point real FFT is its own mirror (DC, and Nyquist when n is even): a one-sided
// spectrum counts every other bin twice (its negative-frequency twin folded in), these once.
__device__ __forceinline__ bool self_mirrored(i64 k, i64 n) { return k == 0 || ((n & 1) == 0 && 2 * k == n); }

// Sample i of a series as a double: float and double as they are (no scale: the f32/f64 kernels
// compute exactly what they did before 16-bit input existed), 16-bit types converted and scaled
// (i16: scale is typically 1/32768; f16/bf16: 1 unless the caller asks).
__device__ __forceinline__ double sample(const float* x, i64 i, double) { return (double)x[i]; }
__device__ __forceinline__ double sample(const double* x, i64 i, double) { return x[i]; }
__device__ __forceinline__ double sample(const short* x, i64 i, double scale) { return (double)x[i] * scale; }
__device__ __forceinline__ double sample(const __half* x, i64 i, double scale) { return (double)__half2float(x[i]) * scale; }
__device__ __forceinline__ double sample(const __nv_bfloat16* x, i64 i, double scale) { return (double)__bfloat162float(x[i]) * scale; }
// One component (re or im) of a complex series seen as a series of its own: `base` points at the
// component of sample 0, the next sample's is 2 values on. The complex framing reads each component
// through `extended` with it, so both get the same boundary extension as a real series.
template <typename T> struct Interleaved { const T* base; };
__device__ __forceinline__ double sample(const Interleaved<float>* x, i64 i, double) { return (double)x->base[2 * i]; }
__device__ __forceinline__ double sample(const Interleaved<double>* x, i64 i, double) { return x->base[2 * i]; }

// Sums two doubles across the block (shared tree); every thread gets the totals.
__device__ void block_sum2(double& a, double& b) {
  __shared__ double sa[1024];
  __shared__ double sb[1024];
  unsigned t = threadIdx.x;
  sa[t] = a;
  sb[t] = b;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) {
      sa[t] += sa[t + s];
      sb[t] += sb[t + s];
    }
    __syncthreads();
  }
  a = sa[0];
  b = sb[0];
  __syncthreads();
}

// Value of the boundary-extended series at position p (0 <= p), as scipy's zero_ext / even_ext /
// odd_ext / const_ext followed by zero padding: q = p - ext indexes the original series of n samples.
// boundary: 0 none, 1 zeros, 2 even, 3 odd, 4 constant.
template <typename In>
__device__ __forceinline__ double extended(const In* x, i64 n, i64 p, i64 ext, int boundary, double scale) {
  i64 q = p - ext;
  if (q >= 0 && q < n) return sample(x, q, scale);
  if (boundary == 0 || boundary == 1) return 0.0;
  if (q < 0) {
    if (q < -ext) return 0.0;
    i64 r = -q;  // 1..ext
    if (boundary == 2) return sample(x, r, scale);
    if (boundary == 3) return 2.0 * sample(x, 0, scale) - sample(x, r, scale);
    return sample(x, 0, scale);
  }
  i64 r = q - (n - 1);  // 1.. beyond the last sample
  if (r > ext) return 0.0;  // zero padding after the extension
  if (boundary == 2) return sample(x, n - 1 - r, scale);
  if (boundary == 3) return 2.0 * sample(x, n - 1, scale) - sample(x, n - 1 - r, scale);
  return sample(x, n - 1, scale);
}

// Frames of B series into the FFT input: out[(b*frames + f)*nfft + j] for j < nfft is
// (detrend(seg) * window)[j] for j < nperseg and 0 for nperseg <= j < nfft, where seg[j] is the
// extended series at f*hop + j. detrend: 0 none, 1 constant (mean), 2 linear (least squares).
// One block per frame (grid-stride over frames).
template <typename In, typename T>
__device__ void frame_impl(const In* x, T* out, const T* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend, double scale) {
  i64 total = (i64)batch * frames;
  double tbar = 0.5 * (nperseg - 1);
  double stt = (double)nperseg * ((double)nperseg * nperseg - 1.0) / 12.0;
  for (i64 row = blockIdx.x; row < total; row += gridDim.x) {
    i64 b = row / frames;
    i64 f = row - b * frames;
    const In* xs = x + b * (i64)n;
    i64 start = f * (i64)hop;
    double mean = 0.0, slope = 0.0;
    if (detrend != 0) {
      double s0 = 0.0, s1 = 0.0;
      for (int j = threadIdx.x; j < nperseg; j += blockDim.x) {
        double v = extended(xs, n, start + j, ext, boundary, scale);
        s0 += v;
        s1 += (j - tbar) * v;
      }
      block_sum2(s0, s1);
      mean = s0 / nperseg;
      if (detrend == 2 && stt > 0.0) slope = s1 / stt;
    }
    T* o = out + row * (i64)nfft;
    for (int j = threadIdx.x; j < nfft; j += blockDim.x) {
      double v = 0.0;
      if (j < nperseg) {
        v = extended(xs, n, start + j, ext, boundary, scale);
        if (detrend != 0) v -= mean + slope * (j - tbar);
        v *= (double)window[j];
      }
      o[j] = (T)v;
    }
  }
}

extern "C" __global__ void frame_f32(const float* x, float* out, const float* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend) {
  frame_impl<float, float>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, 1.0);
}
extern "C" __global__ void frame_f64(const double* x, double* out, const double* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend) {
  frame_impl<double, double>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, 1.0);
}

// 16-bit input: frame_<in>_<out>; `scale` multiplies every sample as it is read.
extern "C" __global__ void frame_i16_f32(const short* x, float* out, const float* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend, double scale) {
  frame_impl<short, float>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, scale);
}
extern "C" __global__ void frame_i16_f64(const short* x, double* out, const double* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend, double scale) {
  frame_impl<short, double>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, scale);
}
extern "C" __global__ void frame_f16_f32(const __half* x, float* out, const float* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend, double scale) {
  frame_impl<__half, float>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, scale);
}
extern "C" __global__ void frame_f16_f64(const __half* x, double* out, const double* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend, double scale) {
  frame_impl<__half, double>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, scale);
}
extern "C" __global__ void frame_bf16_f32(const __nv_bfloat16* x, float* out, const float* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend, double scale) {
  frame_impl<__nv_bfloat16, float>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, scale);
}
extern "C" __global__ void frame_bf16_f64(const __nv_bfloat16* x, double* out, const double* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend, double scale) {
  frame_impl<__nv_bfloat16, double>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend, scale);
}

// Whole-series detrend statistics, many blocks per series: stats[2b] += sum x, stats[2b+1] +=
// sum (t - tbar) x over the block's chunk of series b. stats must be zeroed first (memset).
// Block id -> (series, chunk); chunks = ceil(n / chunk).
template <typename In>
__device__ void series_stats_impl(const In* x, double* stats, int n, int batch, int chunk, double scale) {
  i64 chunks = ((i64)n + chunk - 1) / chunk;
  i64 total = chunks * batch;
  double tbar = 0.5 * ((double)n - 1.0);
  for (i64 id = blockIdx.x; id < total; id += gridDim.x) {
    i64 b = id / chunks;
    i64 c = id - b * chunks;
    i64 begin = c * chunk;
    i64 end = begin + chunk < n ? begin + chunk : n;
    const In* xs = x + b * (i64)n;
    double s0 = 0.0, s1 = 0.0;
    for (i64 t = begin + threadIdx.x; t < end; t += blockDim.x) {
      double v = sample(xs, t, scale);
      s0 += v;
      s1 += ((double)t - tbar) * v;
    }
    block_sum2(s0, s1);
    if (threadIdx.x == 0) {
      atomicAdd(&stats[2 * b], s0);
      atomicAdd(&stats[2 * b + 1], s1);
    }
  }
}

extern "C" __global__ void series_stats_f32(const float* x, double* stats, int n, int batch, int chunk) { series_stats_impl<float>(x, stats, n, batch, chunk, 1.0); }
extern "C" __global__ void series_stats_f64(const double* x, double* stats, int n, int batch, int chunk) { series_stats_impl<double>(x, stats, n, batch, chunk, 1.0); }
// 16-bit input: the statistics of the scaled samples (what detrend_window_<in>_<out> subtracts).
extern "C" __global__ void series_stats_i16(const short* x, double* stats, int n, int batch, int chunk, double scale) { series_stats_impl<short>(x, stats, n, batch, chunk, scale); }
extern "C" __global__ void series_stats_f16(const __half* x, double* stats, int n, int batch, int chunk, double scale) { series_stats_impl<__half>(x, stats, n, batch, chunk, scale); }
extern "C" __global__ void series_stats_bf16(const __nv_bfloat16* x, double* stats, int n, int batch, int chunk, double scale) { series_stats_impl<__nv_bfloat16>(x, stats, n, batch, chunk, scale); }

// Whole-series detrend and window: out[b*n + t] = (x - mean_b - slope_b (t - tbar)) * w[t].
// detrend: 0 none (stats unused), 1 constant, 2 linear; useWindow 0: no window (w unused).
// Block id -> (row, tile of `tile` samples): the row's trend is worked out once per tile and no
// thread divides a 64-bit index per sample.
template <typename In, typename T>
__device__ void detrend_window_impl(const In* x, T* out, const double* stats, const T* window, int n, int batch, int detrend, int useWindow, int tile, double scale) {
  i64 tiles = ((i64)n + tile - 1) / tile;
  i64 total = tiles * batch;
  double tbar = 0.5 * ((double)n - 1.0);
  double stt = (double)n * ((double)n * n - 1.0) / 12.0;
  for (i64 id = blockIdx.x; id < total; id += gridDim.x) {
    i64 b = id / tiles;
    int begin = (int)(id - b * tiles) * tile;
    int end = begin + tile < n ? begin + tile : n;
    // trend(t) = offset + slope * t, with offset = mean - slope * tbar.
    double slope = 0.0, offset = 0.0;
    if (detrend != 0) {
      double mean = stats[2 * b] / n;
      slope = (detrend == 2 && stt > 0.0) ? stats[2 * b + 1] / stt : 0.0;
      offset = mean - slope * tbar;
    }
    const In* xs = x + b * (i64)n;
    T* os = out + b * (i64)n;
    for (int t = begin + threadIdx.x; t < end; t += blockDim.x) {
      double v = sample(xs, t, scale) - (offset + slope * (double)t);
      if (useWindow) v *= (double)window[t];
      os[t] = (T)v;
    }
  }
}

extern "C" __global__ void detrend_window_f32(const float* x, float* out, const double* stats, const float* window, int n, int batch, int detrend, int useWindow, int tile) {
  detrend_window_impl<float, float>(x, out, stats, window, n, batch, detrend, useWindow, tile, 1.0);
}
extern "C" __global__ void detrend_window_f64(const double* x, double* out, const double* stats, const double* window, int n, int batch, int detrend, int useWindow, int tile) {
  detrend_window_impl<double, double>(x, out, stats, window, n, batch, detrend, useWindow, tile, 1.0);
}
// 16-bit input: detrend_window_<in>_<out>, the first kernel of the engine's whole-series flow to read
// the samples (with series_stats_<in> when detrending): the conversion costs no pass of its own.
extern "C" __global__ void detrend_window_i16_f32(const short* x, float* out, const double* stats, const float* window, int n, int batch, int detrend, int useWindow, int tile, double scale) {
  detrend_window_impl<short, float>(x, out, stats, window, n, batch, detrend, useWindow, tile, scale);
}
extern "C" __global__ void detrend_window_i16_f64(const short* x, double* out, const double* stats, const double* window, int n, int batch, int detrend, int useWindow, int tile, double scale) {
  detrend_window_impl<short, double>(x, out, stats, window, n, batch, detrend, useWindow, tile, scale);
}
extern "C" __global__ void detrend_window_f16_f32(const __half* x, float* out, const double* stats, const float* window, int n, int batch, int detrend, int useWindow, int tile, double scale) {
  detrend_window_impl<__half, float>(x, out, stats, window, n, batch, detrend, useWindow, tile, scale);
}
extern "C" __global__ void detrend_window_f16_f64(const __half* x, double* out, const double* stats, const double* window, int n, int batch, int detrend, int useWindow, int tile, double scale) {
  detrend_window_impl<__half, double>(x, out, stats, window, n, batch, detrend, useWindow, tile, scale);
}
extern "C" __global__ void detrend_window_bf16_f32(const __nv_bfloat16* x, float* out, const double* stats, const float* window, int n, int batch, int detrend, int useWindow, int tile, double scale) {
  detrend_window_impl<__nv_bfloat16, float>(x, out, stats, window, n, batch, detrend, useWindow, tile, scale);
}
extern "C" __global__ void detrend_window_bf16_f64(const __nv_bfloat16* x, double* out, const double* stats, const double* window, int n, int batch, int detrend, int useWindow, int tile, double scale) {
  detrend_window_impl<__nv_bfloat16, double>(x, out, stats, window, n, batch, detrend, useWindow, tile, scale);
}

// STFT output arrangement: from the FFT's frame-major half spectra h[(b*frames + f)*halfBins + k]
// to z[(b*freqs + k)*frames + f] (scipy's freq x time), times `scale`. Two-sided (freqs = nfft):
// bins above nfft/2 are conj(h[nfft - k]) (the input is real).
template <typename T>
__device__ void arrange_stft_impl(const typename Complex<T>::type* h, typename Complex<T>::type* z, int batch, int frames, int halfBins, int freqs, int nfft, double scale) {
  i64 total = (i64)batch * freqs * frames;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 f = i % frames;
    i64 rest = i / frames;
    i64 k = rest % freqs;
    i64 b = rest / freqs;
    i64 src = k < halfBins ? k : nfft - k;
    typename Complex<T>::type v = h[(b * frames + f) * halfBins + src];
    double im = k < halfBins ? (double)v.y : -(double)v.y;
    z[i].x = (T)((double)v.x * scale);
    z[i].y = (T)(im * scale);
  }
}

extern "C" __global__ void arrange_stft_f32(const float2* h, float2* z, int batch, int frames, int halfBins, int freqs, int nfft, double scale) {
  arrange_stft_impl<float>(h, z, batch, frames, halfBins, freqs, nfft, scale);
}
extern "C" __global__ void arrange_stft_f64(const double2* h, double2* z, int batch, int frames, int halfBins, int freqs, int nfft, double scale) {
  arrange_stft_impl<double>(h, z, batch, frames, halfBins, freqs, nfft, scale);
}

// Spectrogram power: p[(b*freqs + k)*frames + f] = |h|^2 * scale, doubled for one-sided bins that
// are neither DC nor an even nfft's Nyquist (scipy's mode='psd').
template <typename T>
__device__ void arrange_psd_impl(const typename Complex<T>::type* h, T* p, int batch, int frames, int halfBins, int freqs, int nfft, int onesided, double scale) {
  i64 total = (i64)batch * freqs * frames;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 f = i % frames;
    i64 rest = i / frames;
    i64 k = rest % freqs;
    i64 b = rest / freqs;
    i64 src = k < halfBins ? k : nfft - k;
    typename Complex<T>::type v = h[(b * frames + f) * halfBins + src];
    double pw = ((double)v.x * v.x + (double)v.y * v.y) * scale;
    if (onesided && !self_mirrored(k, nfft)) pw *= 2.0;
    p[i] = (T)pw;
  }
}

extern "C" __global__ void arrange_psd_f32(const float2* h, float* p, int batch, int frames, int halfBins, int freqs, int nfft, int onesided, double scale) {
  arrange_psd_impl<float>(h, p, batch, frames, halfBins, freqs, nfft, onesided, scale);
}
extern "C" __global__ void arrange_psd_f64(const double2* h, double* p, int batch, int frames, int halfBins, int freqs, int nfft, int onesided, double scale) {
  arrange_psd_impl<double>(h, p, batch, frames, halfBins, freqs, nfft, onesided, scale);
}

// Welch mean: p[b*freqs + k] = mean over frames of the spectrogram power above. One thread per (b, k).
template <typename T>
__device__ void welch_mean_impl(const typename Complex<T>::type* h, T* p, int batch, int frames, int halfBins, int freqs, int nfft, int onesided, double scale) {
  i64 total = (i64)batch * freqs;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 k = i % freqs;
    i64 b = i / freqs;
    i64 src = k < halfBins ? k : nfft - k;
    double acc = 0.0;
    for (int f = 0; f < frames; f++) {
      typename Complex<T>::type v = h[(b * frames + f) * halfBins + src];
      acc += (double)v.x * v.x + (double)v.y * v.y;
    }
    double pw = acc * scale / frames;
    if (onesided && !self_mirrored(k, nfft)) pw *= 2.0;
    p[i] = (T)pw;
  }
}

extern "C" __global__ void welch_mean_f32(const float2* h, float* p, int batch, int frames, int halfBins, int freqs, int nfft, int onesided, double scale) {
  welch_mean_impl<float>(h, p, batch, frames, halfBins, freqs, nfft, onesided, scale);
}
extern "C" __global__ void welch_mean_f64(const double2* h, double* p, int batch, int frames, int halfBins, int freqs, int nfft, int onesided, double scale) {
  welch_mean_impl<double>(h, p, batch, frames, halfBins, freqs, nfft, onesided, scale);
}

// numpy.unwrap's correction for one step dd between neighbours (period 2*pi, discont = pi):
// ddmod = mod(dd + pi, 2*pi) - pi, with -pi mapped to pi where dd > 0; nothing below pi.
__device__ inline double unwrap_correction(double dd) {
  const double PI = 3.141592653589793;
  if (fabs(dd) < PI) return 0.0;
  double ddmod = fmod(dd + PI, 2.0 * PI);
  if (ddmod < 0) ddmod += 2.0 * PI;
  ddmod -= PI;
  if (ddmod == -PI && dd > 0) ddmod = PI;
  return ddmod - dd;
}

// Bin k of frame f of series b, scaled: bins above nfft/2 are conj(h[nfft - k]).
template <typename T>
__device__ inline void mode_bin(const typename Complex<T>::type* h, i64 b, int f, i64 k, int frames, int halfBins, int nfft, double scale, double* re, double* im) {
  i64 src = k < halfBins ? k : nfft - k;
  typename Complex<T>::type v = h[(b * frames + f) * halfBins + src];
  *re = (double)v.x * scale;
  *im = (k < halfBins ? 1.0 : -1.0) * (double)v.y * scale;
}

// Spectrogram modes other than psd (scipy's 'magnitude', 'angle', 'phase'): from the frame-major
// half spectra h (scaled by `scale`, no one-sided doubling) to out[(b*freqs + k)*frames + f].
// mode: 1 magnitude, 2 angle (one thread per element), 3 phase: the angle unwrapped along
// frequency, as scipy does (np.unwrap(np.angle(Sxx), axis=-2)), one thread per (b, f) column
// walking k = 0..freqs-1 in output order.
template <typename T>
__device__ void spectrogram_mode_impl(const typename Complex<T>::type* h, T* out, int batch, int frames, int halfBins, int freqs, int nfft, double scale, int mode) {
  double re, im;
  if (mode == 3) {
    i64 columns = (i64)batch * frames;
    for (i64 c = global_thread(); c < columns; c += grid_threads()) {
      i64 b = c / frames;
      int f = (int)(c % frames);
      double previous = 0.0, correction = 0.0;
      for (i64 k = 0; k < freqs; k++) {
        mode_bin<T>(h, b, f, k, frames, halfBins, nfft, scale, &re, &im);
        double a = atan2(im, re);
        if (k > 0) correction += unwrap_correction(a - previous);
        previous = a;
        out[(b * freqs + k) * frames + f] = (T)(a + correction);
      }
    }
    return;
  }
  i64 total = (i64)batch * freqs * frames;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    int f = (int)(i % frames);
    i64 r = i / frames;
    mode_bin<T>(h, r / freqs, f, r % freqs, frames, halfBins, nfft, scale, &re, &im);
    out[i] = (T)(mode == 1 ? sqrt(re * re + im * im) : atan2(im, re));
  }
}

extern "C" __global__ void spectrogram_mode_f32(const float2* h, float* out, int batch, int frames, int halfBins, int freqs, int nfft, double scale, int mode) {
  spectrogram_mode_impl<float>(h, out, batch, frames, halfBins, freqs, nfft, scale, mode);
}
extern "C" __global__ void spectrogram_mode_f64(const double2* h, double* out, int batch, int frames, int halfBins, int freqs, int nfft, double scale, int mode) {
  spectrogram_mode_impl<double>(h, out, batch, frames, halfBins, freqs, nfft, scale, mode);
}

// Median of each row (numpy.median: the mean of the two middle values for an even length), times
// `scale`: out[r] = median(rows[r*len .. r*len + len)) * scale. One thread per row; the row is
// partially reordered in place (quickselect), so `rows` is scratch. Welch's 'median' average.
template <typename T>
__device__ T select_kth(T* a, i64 n, i64 k) {
  i64 lo = 0, hi = n - 1;
  while (lo < hi) {
    T pivot = a[lo + (hi - lo) / 2];
    i64 i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        T tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

template <typename T>
__device__ void median_rows_impl(T* rows, T* out, int nrows, int len, double scale) {
  for (i64 r = global_thread(); r < nrows; r += grid_threads()) {
    T* a = rows + r * (i64)len;
    i64 mid = len / 2;
    double m = (double)select_kth<T>(a, len, mid);
    if ((len & 1) == 0) {
      // After selecting the mid-th value, every element before it is <= it: the other middle value is their maximum.
      double lower = (double)a[0];
      for (i64 i = 1; i < mid; i++) lower = (double)a[i] > lower ? (double)a[i] : lower;
      m = 0.5 * (m + lower);
    }
    out[r] = (T)(m * scale);
  }
}

extern "C" __global__ void median_rows_f32(float* rows, float* out, int nrows, int len, double scale) { median_rows_impl<float>(rows, out, nrows, len, scale); }
extern "C" __global__ void median_rows_f64(double* rows, double* out, int nrows, int len, double scale) { median_rows_impl<double>(rows, out, nrows, len, scale); }

// ISTFT input arrangement: from z[(b*freqs + k)*frames + f] (freq x time) to the inverse FFT's
// frame-major rows s[(b*frames + f)*rowBins + k] for k < rowBins. Bins the input lacks are 0
// (numpy's irfft/ifft zero-pad). One-sided (C2R rows of nfft/2+1): the imaginary parts of DC and
// of an even nfft's Nyquist are dropped, as numpy's irfft ignores them.
template <typename T>
__device__ void arrange_istft_impl(const typename Complex<T>::type* z, typename Complex<T>::type* s, int batch, int frames, int freqs, int rowBins, int nfft, int onesided) {
  i64 total = (i64)batch * frames * rowBins;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 k = i % rowBins;
    i64 rest = i / rowBins;
    i64 f = rest % frames;
    i64 b = rest / frames;
    typename Complex<T>::type v;
    v.x = (T)0;
    v.y = (T)0;
    if (k < freqs) v = z[(b * freqs + k) * frames + f];
    if (onesided && self_mirrored(k, nfft)) v.y = (T)0;
    s[i] = v;
  }
}

extern "C" __global__ void arrange_istft_f32(const float2* z, float2* s, int batch, int frames, int freqs, int rowBins, int nfft, int onesided) {
  arrange_istft_impl<float>(z, s, batch, frames, freqs, rowBins, nfft, onesided);
}
extern "C" __global__ void arrange_istft_f64(const double2* z, double2* s, int batch, int frames, int freqs, int rowBins, int nfft, int onesided) {
  arrange_istft_impl<double>(z, s, batch, frames, freqs, rowBins, nfft, onesided);
}

// Overlap-add with window-square normalisation (scipy's istft), as a gather: output sample i of
// series b is position p = i + trim of the overlap-added signal,
//   y = sum_f frames[f][p - f*hop] * w[p - f*hop] * gain / sum_f w[p - f*hop]^2
// over the frames f covering p (the sum of squares is used only where > 1e-10, as scipy does).
// frames[(b*nframes + f)*frameStride + j*elemStride]: real frames (elemStride 1) or the real parts
// of complex ones (elemStride 2, the buffer viewed as reals).
template <typename T>
__device__ void overlap_add_impl(const T* frames, T* out, const T* window, int batch, int nframes, int nperseg, int hop, int frameStride, int elemStride, int trim, int outLength, double gain) {
  i64 total = (i64)batch * outLength;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 b = i / outLength;
    i64 p = i - b * outLength + trim;
    i64 fhi = p / hop;
    if (fhi > nframes - 1) fhi = nframes - 1;
    i64 flo = p - nperseg + 1 <= 0 ? 0 : (p - nperseg + 1 + hop - 1) / hop;
    double acc = 0.0, norm = 0.0;
    for (i64 f = flo; f <= fhi; f++) {
      i64 j = p - f * hop;
      double w = (double)window[j];
      acc += (double)frames[(b * nframes + f) * (i64)frameStride + j * elemStride] * w;
      norm += w * w;
    }
    acc *= gain;
    out[i] = (T)(norm > 1e-10 ? acc / norm : acc);
  }
}

extern "C" __global__ void overlap_add_f32(const float* frames, float* out, const float* window, int batch, int nframes, int nperseg, int hop, int frameStride, int elemStride, int trim, int outLength, double gain) {
  overlap_add_impl<float>(frames, out, window, batch, nframes, nperseg, hop, frameStride, elemStride, trim, outLength, gain);
}
extern "C" __global__ void overlap_add_f64(const double* frames, double* out, const double* window, int batch, int nframes, int nperseg, int hop, int frameStride, int elemStride, int trim, int outLength, double gain) {
  overlap_add_impl<double>(frames, out, window, batch, nframes, nperseg, hop, frameStride, elemStride, trim, outLength, gain);
}

// Band mask on one-sided spectra (rows of `bins` complex values): out = in * scale for k0 <= k <= k1,
// 0 elsewhere. In place when out == in.
template <typename T>
__device__ void band_mask_impl(const typename Complex<T>::type* in, typename Complex<T>::type* out, int batch, int bins, int k0, int k1, double scale) {
  i64 total = (i64)batch * bins;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    int k = (int)(i % bins);
    typename Complex<T>::type v = in[i];
    bool keep = k >= k0 && k <= k1;
    v.x = keep ? (T)((double)v.x * scale) : (T)0;
    v.y = keep ? (T)((double)v.y * scale) : (T)0;
    out[i] = v;
  }
}

extern "C" __global__ void band_mask_f32(const float2* in, float2* out, int batch, int bins, int k0, int k1, double scale) { band_mask_impl<float>(in, out, batch, bins, k0, k1, scale); }
extern "C" __global__ void band_mask_f64(const double2* in, double2* out, int batch, int bins, int k0, int k1, double scale) { band_mask_impl<double>(in, out, batch, bins, k0, k1, scale); }

// Many band masks of one set of spectra: out[(b*nbands + q)*bins + k] = in[b*bins + k] * scale for
// ranges[2q] <= k <= ranges[2q+1], else 0 (one masked copy per band, ready for one batched inverse FFT).
template <typename T>
__device__ void band_mask_many_impl(const typename Complex<T>::type* in, typename Complex<T>::type* out, const int* ranges, int batch, int bins, int nbands, double scale) {
  i64 total = (i64)batch * nbands * bins;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    int k = (int)(i % bins);
    i64 rest = i / bins;
    int q = (int)(rest % nbands);
    i64 b = rest / nbands;
    typename Complex<T>::type v = in[b * bins + k];
    bool keep = k >= ranges[2 * q] && k <= ranges[2 * q + 1];
    v.x = keep ? (T)((double)v.x * scale) : (T)0;
    v.y = keep ? (T)((double)v.y * scale) : (T)0;
    out[i] = v;
  }
}

extern "C" __global__ void band_mask_many_f32(const float2* in, float2* out, const int* ranges, int batch, int bins, int nbands, double scale) {
  band_mask_many_impl<float>(in, out, ranges, batch, bins, nbands, scale);
}
extern "C" __global__ void band_mask_many_f64(const double2* in, double2* out, const int* ranges, int batch, int bins, int nbands, double scale) {
  band_mask_many_impl<double>(in, out, ranges, batch, bins, nbands, scale);
}

// |X| of the first `count` bins of each row of `bins`: out[b*count + k] = |in[b*bins + k]| * scale.
template <typename T>
__device__ void magnitude_impl(const typename Complex<T>::type* in, T* out, int batch, int bins, int count, double scale) {
  i64 total = (i64)batch * count;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 b = i / count;
    i64 k = i - b * count;
    typename Complex<T>::type v = in[b * bins + k];
    out[i] = (T)(sqrt((double)v.x * v.x + (double)v.y * v.y) * scale);
  }
}

extern "C" __global__ void magnitude_f32(const float2* in, float* out, int batch, int bins, int count, double scale) { magnitude_impl<float>(in, out, batch, bins, count, scale); }
extern "C" __global__ void magnitude_f64(const double2* in, double* out, int batch, int bins, int count, double scale) { magnitude_impl<double>(in, out, batch, bins, count, scale); }

// Band powers: out[b*nbands + q] = sum over k in [ranges[2q], ranges[2q+1]] of c_k |X_k|^2 / n^2,
// c_k = 2 for one-sided bins other than DC and an even n's Nyquist, else 1 (one-sided Parseval:
// over all bins this is mean(x^2)). One block per (series, band).
template <typename T>
__device__ void band_powers_impl(const typename Complex<T>::type* in, double* out, const int* ranges, int batch, int bins, int n, int nbands) {
  i64 total = (i64)batch * nbands;
  double inv = 1.0 / ((double)n * (double)n);
  for (i64 id = blockIdx.x; id < total; id += gridDim.x) {
    i64 b = id / nbands;
    int q = (int)(id - b * nbands);
    int k0 = ranges[2 * q], k1 = ranges[2 * q + 1];
    const typename Complex<T>::type* row = in + b * (i64)bins;
    double acc = 0.0, unused = 0.0;
    for (int k = k0 + threadIdx.x; k <= k1; k += blockDim.x) {
      typename Complex<T>::type v = row[k];
      double pw = (double)v.x * v.x + (double)v.y * v.y;
      if (!self_mirrored(k, n)) pw *= 2.0;
      acc += pw;
    }
    block_sum2(acc, unused);
    if (threadIdx.x == 0) out[id] = acc * inv;
  }
}

extern "C" __global__ void band_powers_f32(const float2* in, double* out, const int* ranges, int batch, int bins, int n, int nbands) { band_powers_impl<float>(in, out, ranges, batch, bins, n, nbands); }
extern "C" __global__ void band_powers_f64(const double2* in, double* out, const int* ranges, int batch, int bins, int n, int nbands) { band_powers_impl<double>(in, out, ranges, batch, bins, n, nbands); }

// Argmax across the block of (power, bin) pairs, ties to the lowest bin; thread 0 gets the result.
__device__ void block_argmax(double& best, int& bestK) {
  __shared__ double sp[1024];
  __shared__ int sk[1024];
  unsigned t = threadIdx.x;
  sp[t] = best;
  sk[t] = bestK;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) {
      double o = sp[t + s];
      int ok = sk[t + s];
      if (o > sp[t] || (o == sp[t] && ok < sk[t])) {
        sp[t] = o;
        sk[t] = ok;
      }
    }
    __syncthreads();
  }
  best = sp[0];
  bestK = sk[0];
  __syncthreads();
}

// Dominant bin, phase 1: the strongest bin of each chunk of `chunk` bins of each row's range
// [k0, k1]. Block id -> (row, chunk): many blocks per row, so a few long rows still fill the GPU.
// partial[2*id] = |X_k|^2, partial[2*id+1] = k (ties: the lowest k).
template <typename T>
__device__ void dominant_chunks_impl(const typename Complex<T>::type* in, double* partial, int batch, int bins, int k0, int k1, int chunk, int chunks) {
  i64 total = (i64)batch * chunks;
  for (i64 id = blockIdx.x; id < total; id += gridDim.x) {
    i64 b = id / chunks;
    int c = (int)(id - b * chunks);
    int begin = k0 + c * chunk;
    int end = begin + chunk - 1 < k1 ? begin + chunk - 1 : k1;
    const typename Complex<T>::type* row = in + b * (i64)bins;
    double best = -1.0;
    int bestK = 0x7fffffff;
    for (int k = begin + threadIdx.x; k <= end; k += blockDim.x) {
      typename Complex<T>::type v = row[k];
      double pw = (double)v.x * v.x + (double)v.y * v.y;
      if (pw > best) {  // k increases within a thread: strict > keeps the lowest k on ties
        best = pw;
        bestK = k;
      }
    }
    block_argmax(best, bestK);
    if (threadIdx.x == 0) {
      partial[2 * id] = best;
      partial[2 * id + 1] = (double)bestK;
    }
  }
}

extern "C" __global__ void dominant_chunks_f32(const float2* in, double* partial, int batch, int bins, int k0, int k1, int chunk, int chunks) {
  dominant_chunks_impl<float>(in, partial, batch, bins, k0, k1, chunk, chunks);
}
extern "C" __global__ void dominant_chunks_f64(const double2* in, double* partial, int batch, int bins, int k0, int k1, int chunk, int chunks) {
  dominant_chunks_impl<double>(in, partial, batch, bins, k0, k1, chunk, chunks);
}

// Dominant bin, phase 2: out[4b..4b+3] = (k, re, im, |X_k|^2) of the strongest of row b's
// `chunks` partials (ties: the lowest k); k = -1 (and zeros) when the range [k0, k1] is empty
// (chunks = 0). One block per row.
template <typename T>
__device__ void dominant_impl(const typename Complex<T>::type* in, const double* partial, double* out, int batch, int bins, int k0, int k1, int chunks) {
  for (i64 b = blockIdx.x; b < batch; b += gridDim.x) {
    double best = -1.0;
    int bestK = 0x7fffffff;
    // Chunks hold increasing bins: strict > keeps the lowest k on ties within a thread.
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
      double pw = partial[2 * (b * chunks + c)];
      if (pw > best) {
        best = pw;
        bestK = (int)partial[2 * (b * chunks + c) + 1];
      }
    }
    block_argmax(best, bestK);
    if (threadIdx.x == 0) {
      double* o = out + 4 * b;
      if (bestK <= k1 && bestK >= k0) {
        typename Complex<T>::type v = in[b * (i64)bins + bestK];
        o[0] = (double)bestK;
        o[1] = (double)v.x;
        o[2] = (double)v.y;
        o[3] = best;
      } else {
        o[0] = -1.0;
        o[1] = 0.0;
        o[2] = 0.0;
        o[3] = 0.0;
      }
    }
  }
}

extern "C" __global__ void dominant_f32(const float2* in, const double* partial, double* out, int batch, int bins, int k0, int k1, int chunks) {
  dominant_impl<float>(in, partial, out, batch, bins, k0, k1, chunks);
}
extern "C" __global__ void dominant_f64(const double2* in, const double* partial, double* out, int batch, int bins, int k0, int k1, int chunks) {
  dominant_impl<double>(in, partial, out, batch, bins, k0, k1, chunks);
}

// Scales rows x cols values in place: x[i] *= scale.
template <typename T>
__device__ void scale_impl(T* x, int rows, int cols, double scale) {
  i64 count = (i64)rows * cols;
  for (i64 i = global_thread(); i < count; i += grid_threads()) x[i] = (T)((double)x[i] * scale);
}

extern "C" __global__ void scale_f32(float* x, int rows, int cols, double scale) { scale_impl<float>(x, rows, cols, scale); }
extern "C" __global__ void scale_f64(double* x, int rows, int cols, double scale) { scale_impl<double>(x, rows, cols, scale); }

// Zero-pads B series of n samples to rows of `padded`: out[b*padded + t] = t < n ? x[b*n + t] : 0.
template <typename T>
__device__ void pad_rows_impl(const T* x, T* out, int batch, int n, int padded) {
  i64 total = (i64)batch * padded;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 b = i / padded;
    i64 t = i - b * padded;
    out[i] = t < n ? x[b * n + t] : (T)0;
  }
}

extern "C" __global__ void pad_rows_f32(const float* x, float* out, int batch, int n, int padded) { pad_rows_impl<float>(x, out, batch, n, padded); }
extern "C" __global__ void pad_rows_f64(const double* x, double* out, int batch, int n, int padded) { pad_rows_impl<double>(x, out, batch, n, padded); }

// Morlet wavelets in time, circularly centred on sample 0, for a table of nfreq rows of L samples:
// row j at index i (offset d = i <= L/2 ? i : i - L samples) is
//   norm_j * exp(-d^2 / (2 s_j^2)) * exp(2 pi i f_j d)        for |d| <= half_j, else 0,
// params[4j..4j+3] = (f_j in cycles per sample, s_j = sigma in samples, norm_j, half_j).
template <typename T>
__device__ void morlet_table_impl(typename Complex<T>::type* table, const double* params, int nfreq, int L) {
  i64 total = (i64)nfreq * L;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 j = i / L;
    i64 idx = i - j * L;
    double d = idx <= L / 2 ? (double)idx : (double)(idx - L);
    double f = params[4 * j], s = params[4 * j + 1], norm = params[4 * j + 2], half = params[4 * j + 3];
    typename Complex<T>::type v;
    if (fabs(d) <= half) {
      double env = norm * exp(-d * d / (2.0 * s * s));
      double sn, cs;
      sincospi(2.0 * f * d, &sn, &cs);
      v.x = (T)(env * cs);
      v.y = (T)(env * sn);
    } else {
      v.x = (T)0;
      v.y = (T)0;
    }
    table[i] = v;
  }
}

extern "C" __global__ void morlet_table_f32(float2* table, const double* params, int nfreq, int L) { morlet_table_impl<float>(table, params, nfreq, L); }
extern "C" __global__ void morlet_table_f64(double2* table, const double* params, int nfreq, int L) { morlet_table_impl<double>(table, params, nfreq, L); }

// CWT multiply: out[(b*nfreq + j)*L + k] = X_b(k) * W_j(k) where X_b is the one-sided spectrum
// h[b*(L/2+1) + k] extended by Hermitian symmetry (X(k) = conj(X(L-k)) above L/2) and W the
// wavelet table's spectra (nfreq x L).
template <typename T>
__device__ void cwt_multiply_impl(const typename Complex<T>::type* h, const typename Complex<T>::type* table, typename Complex<T>::type* out, int batch, int nfreq, int L) {
  i64 total = (i64)batch * nfreq * L;
  int half = L / 2 + 1;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 k = i % L;
    i64 rest = i / L;
    i64 j = rest % nfreq;
    i64 b = rest / nfreq;
    typename Complex<T>::type x;
    if (k < half) x = h[b * half + k];
    else {
      x = h[b * half + (L - k)];
      x.y = -x.y;
    }
    typename Complex<T>::type w = table[j * (i64)L + k];
    typename Complex<T>::type r;
    r.x = x.x * w.x - x.y * w.y;
    r.y = x.x * w.y + x.y * w.x;
    out[i] = r;
  }
}

extern "C" __global__ void cwt_multiply_f32(const float2* h, const float2* table, float2* out, int batch, int nfreq, int L) { cwt_multiply_impl<float>(h, table, out, batch, nfreq, L); }
extern "C" __global__ void cwt_multiply_f64(const double2* h, const double2* table, double2* out, int batch, int nfreq, int L) { cwt_multiply_impl<double>(h, table, out, batch, nfreq, L); }

// CWT output, complex: y[(r)*n + t] = c[r*L + t] * scale for the first n samples of each row r.
template <typename T>
__device__ void cwt_complex_impl(const typename Complex<T>::type* c, typename Complex<T>::type* y, int rows, int n, int L, double scale) {
  i64 total = (i64)rows * n;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 r = i / n;
    i64 t = i - r * n;
    typename Complex<T>::type v = c[r * L + t];
    v.x = (T)((double)v.x * scale);
    v.y = (T)((double)v.y * scale);
    y[i] = v;
  }
}

extern "C" __global__ void cwt_complex_f32(const float2* c, float2* y, int rows, int n, int L, double scale) { cwt_complex_impl<float>(c, y, rows, n, L, scale); }
extern "C" __global__ void cwt_complex_f64(const double2* c, double2* y, int rows, int n, int L, double scale) { cwt_complex_impl<double>(c, y, rows, n, L, scale); }

// CWT power: p[r*n + t] = |c[r*L + t]|^2 * scale.
template <typename T>
__device__ void cwt_power_impl(const typename Complex<T>::type* c, T* p, int rows, int n, int L, double scale) {
  i64 total = (i64)rows * n;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 r = i / n;
    i64 t = i - r * n;
    typename Complex<T>::type v = c[r * L + t];
    p[i] = (T)(((double)v.x * v.x + (double)v.y * v.y) * scale);
  }
}

extern "C" __global__ void cwt_power_f32(const float2* c, float* p, int rows, int n, int L, double scale) { cwt_power_impl<float>(c, p, rows, n, L, scale); }
extern "C" __global__ void cwt_power_f64(const double2* c, double* p, int rows, int n, int L, double scale) { cwt_power_impl<double>(c, p, rows, n, L, scale); }

// CWT band power: p[(b*nbands + q)*n + t] = scale * sum over members m of band q of
// |c[(b*nfreq + idx[m])*L + t]|^2, members idx[offsets[q] .. offsets[q+1]).
template <typename T>
__device__ void cwt_band_power_impl(const typename Complex<T>::type* c, T* p, const int* offsets, const int* idx, int batch, int nfreq, int nbands, int n, int L, double scale) {
  i64 total = (i64)batch * nbands * n;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 t = i % n;
    i64 rest = i / n;
    int q = (int)(rest % nbands);
    i64 b = rest / nbands;
    double acc = 0.0;
    for (int m = offsets[q]; m < offsets[q + 1]; m++) {
      typename Complex<T>::type v = c[(b * nfreq + idx[m]) * (i64)L + t];
      acc += (double)v.x * v.x + (double)v.y * v.y;
    }
    p[i] = (T)(acc * scale);
  }
}

extern "C" __global__ void cwt_band_power_f32(const float2* c, float* p, const int* offsets, const int* idx, int batch, int nfreq, int nbands, int n, int L, double scale) {
  cwt_band_power_impl<float>(c, p, offsets, idx, batch, nfreq, nbands, n, L, scale);
}
extern "C" __global__ void cwt_band_power_f64(const double2* c, double* p, const int* offsets, const int* idx, int batch, int nfreq, int nbands, int n, int L, double scale) {
  cwt_band_power_impl<double>(c, p, offsets, idx, batch, nfreq, nbands, n, L, scale);
}

// Results back to the host in 16 bits: y[i] = round-to-nearest-even(x[i]) as f16 or bf16, the last
// kernel before the copy back (cuFFT's inverse writes f32/f64; this pass reads 4 or 8 bytes and
// writes 2 per sample in device memory, so the link, the bottleneck, carries 2).
template <typename T> __device__ __forceinline__ __half to_f16(T v);
template <> __device__ __forceinline__ __half to_f16<float>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __half to_f16<double>(double v) { return __double2half(v); }
template <typename T> __device__ __forceinline__ __nv_bfloat16 to_bf16(T v);
template <> __device__ __forceinline__ __nv_bfloat16 to_bf16<float>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 to_bf16<double>(double v) { return __double2bfloat16(v); }

extern "C" __global__ void narrow_f32_f16(const float* x, __half* y, int n) {
  for (i64 i = global_thread(); i < n; i += grid_threads()) y[i] = to_f16<float>(x[i]);
}
extern "C" __global__ void narrow_f64_f16(const double* x, __half* y, int n) {
  for (i64 i = global_thread(); i < n; i += grid_threads()) y[i] = to_f16<double>(x[i]);
}
extern "C" __global__ void narrow_f32_bf16(const float* x, __nv_bfloat16* y, int n) {
  for (i64 i = global_thread(); i < n; i += grid_threads()) y[i] = to_bf16<float>(x[i]);
}
extern "C" __global__ void narrow_f64_bf16(const double* x, __nv_bfloat16* y, int n) {
  for (i64 i = global_thread(); i < n; i += grid_threads()) y[i] = to_bf16<double>(x[i]);
}

// The first non-finite sample (a NaN or an infinity) of x[0, batch * n): *first becomes the
// smallest such index (the caller sets *first to all ones on the same stream first, so none
// found leaves it so). The engine's lanes run it on each chunk's input as it arrives: the rule of
// src/engine/finite-samples.ts on the GPU, read from the bits as the CPU reads them (an exponent of
// all ones; f16 and bf16 never widened). Each thread stops at its own first: its later samples
// have larger indices. Non-finite samples are rare, so the atomics are too.
__device__ __forceinline__ bool non_finite(float v) { return (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u; }
__device__ __forceinline__ bool non_finite(double v) {
  return ((unsigned long long)__double_as_longlong(v) & 0x7ff0000000000000ull) == 0x7ff0000000000000ull;
}
__device__ __forceinline__ bool non_finite(__half v) { return (__half_as_ushort(v) & 0x7c00u) == 0x7c00u; }
__device__ __forceinline__ bool non_finite(__nv_bfloat16 v) { return (__bfloat16_as_ushort(v) & 0x7f80u) == 0x7f80u; }

template <typename T>
__device__ void first_non_finite_impl(const T* x, unsigned long long* first, int batch, int n) {
  i64 total = (i64)batch * n;
  for (i64 i = global_thread(); i < total; i += grid_threads())
    if (non_finite(x[i])) {
      atomicMin(first, (unsigned long long)i);
      return;
    }
}

extern "C" __global__ void first_non_finite_f32(const float* x, unsigned long long* first, int batch, int n) { first_non_finite_impl<float>(x, first, batch, n); }
extern "C" __global__ void first_non_finite_f64(const double* x, unsigned long long* first, int batch, int n) { first_non_finite_impl<double>(x, first, batch, n); }
extern "C" __global__ void first_non_finite_f16(const __half* x, unsigned long long* first, int batch, int n) { first_non_finite_impl<__half>(x, first, batch, n); }
extern "C" __global__ void first_non_finite_bf16(const __nv_bfloat16* x, unsigned long long* first, int batch, int n) { first_non_finite_impl<__nv_bfloat16>(x, first, batch, n); }

// ---- Complex (IQ) input ----------------------------------------------------------------------

// Interleaved integer I/Q pairs to complex: out[i] = (iq[2i] + j iq[2i+1]) * scale, n pairs.
template <typename In, typename T>
__device__ void iq_to_complex_impl(const In* iq, typename Complex<T>::type* out, int n, double scale) {
  for (i64 i = global_thread(); i < n; i += grid_threads()) {
    typename Complex<T>::type v;
    v.x = (T)((double)iq[2 * i] * scale);
    v.y = (T)((double)iq[2 * i + 1] * scale);
    out[i] = v;
  }
}

extern "C" __global__ void iq_to_complex_i8_f32(const signed char* iq, float2* out, int n, double scale) { iq_to_complex_impl<signed char, float>(iq, out, n, scale); }
extern "C" __global__ void iq_to_complex_i8_f64(const signed char* iq, double2* out, int n, double scale) { iq_to_complex_impl<signed char, double>(iq, out, n, scale); }
extern "C" __global__ void iq_to_complex_i16_f32(const short* iq, float2* out, int n, double scale) { iq_to_complex_impl<short, float>(iq, out, n, scale); }
extern "C" __global__ void iq_to_complex_i16_f64(const short* iq, double2* out, int n, double scale) { iq_to_complex_impl<short, double>(iq, out, n, scale); }

// Frames of B complex series into the C2C FFT input: as frame_impl, each component extended,
// detrended (scipy detrends complex data component by component: its least squares are linear)
// and windowed on its own. out[(b*frames + f)*nfft + j], zero for nperseg <= j < nfft.
template <typename T>
__device__ void frame_complex_impl(const typename Complex<T>::type* x, typename Complex<T>::type* out, const T* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend) {
  i64 total = (i64)batch * frames;
  double tbar = 0.5 * (nperseg - 1);
  double stt = (double)nperseg * ((double)nperseg * nperseg - 1.0) / 12.0;
  for (i64 row = blockIdx.x; row < total; row += gridDim.x) {
    i64 b = row / frames;
    i64 f = row - b * frames;
    const T* xs = (const T*)(x + b * (i64)n);
    Interleaved<T> re = {xs}, im = {xs + 1};
    i64 start = f * (i64)hop;
    double mean_re = 0.0, slope_re = 0.0, mean_im = 0.0, slope_im = 0.0;
    if (detrend != 0) {
      double r0 = 0.0, r1 = 0.0, i0 = 0.0, i1 = 0.0;
      for (int j = threadIdx.x; j < nperseg; j += blockDim.x) {
        double vr = extended(&re, n, start + j, ext, boundary, 1.0);
        double vi = extended(&im, n, start + j, ext, boundary, 1.0);
        r0 += vr;
        r1 += (j - tbar) * vr;
        i0 += vi;
        i1 += (j - tbar) * vi;
      }
      block_sum2(r0, r1);
      block_sum2(i0, i1);
      mean_re = r0 / nperseg;
      mean_im = i0 / nperseg;
      if (detrend == 2 && stt > 0.0) {
        slope_re = r1 / stt;
        slope_im = i1 / stt;
      }
    }
    typename Complex<T>::type* o = out + row * (i64)nfft;
    for (int j = threadIdx.x; j < nfft; j += blockDim.x) {
      double vr = 0.0, vi = 0.0;
      if (j < nperseg) {
        vr = extended(&re, n, start + j, ext, boundary, 1.0);
        vi = extended(&im, n, start + j, ext, boundary, 1.0);
        if (detrend != 0) {
          vr -= mean_re + slope_re * (j - tbar);
          vi -= mean_im + slope_im * (j - tbar);
        }
        double w = (double)window[j];
        vr *= w;
        vi *= w;
      }
      typename Complex<T>::type v;
      v.x = (T)vr;
      v.y = (T)vi;
      o[j] = v;
    }
  }
}

extern "C" __global__ void frame_complex_f32(const float2* x, float2* out, const float* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend) {
  frame_complex_impl<float>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend);
}
extern "C" __global__ void frame_complex_f64(const double2* x, double2* out, const double* window, int n, int batch, int nperseg, int nfft, int hop, int frames, int ext, int boundary, int detrend) {
  frame_complex_impl<double>(x, out, window, n, batch, nperseg, nfft, hop, frames, ext, boundary, detrend);
}

// scipy.signal.istft with a complex result (input_onesided False, complex x): overlap_add of both
// components of the inverse C2C frames (rows of nfft complex values), into complex out.
template <typename T>
__device__ void overlap_add_complex_impl(const typename Complex<T>::type* frames, typename Complex<T>::type* out, const T* window, int batch, int nframes, int nperseg, int hop, int nfft, int trim, int outLength, double gain) {
  i64 total = (i64)batch * outLength;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    i64 b = i / outLength;
    i64 p = i - b * outLength + trim;
    i64 fhi = p / hop;
    if (fhi > nframes - 1) fhi = nframes - 1;
    i64 flo = p - nperseg + 1 <= 0 ? 0 : (p - nperseg + 1 + hop - 1) / hop;
    double re = 0.0, im = 0.0, norm = 0.0;
    for (i64 f = flo; f <= fhi; f++) {
      i64 j = p - f * hop;
      double w = (double)window[j];
      typename Complex<T>::type v = frames[(b * nframes + f) * (i64)nfft + j];
      re += (double)v.x * w;
      im += (double)v.y * w;
      norm += w * w;
    }
    double g = norm > 1e-10 ? gain / norm : gain;
    typename Complex<T>::type o;
    o.x = (T)(re * g);
    o.y = (T)(im * g);
    out[i] = o;
  }
}

extern "C" __global__ void overlap_add_complex_f32(const float2* frames, float2* out, const float* window, int batch, int nframes, int nperseg, int hop, int nfft, int trim, int outLength, double gain) {
  overlap_add_complex_impl<float>(frames, out, window, batch, nframes, nperseg, hop, nfft, trim, outLength, gain);
}
extern "C" __global__ void overlap_add_complex_f64(const double2* frames, double2* out, const double* window, int batch, int nframes, int nperseg, int hop, int nfft, int trim, int outLength, double gain) {
  overlap_add_complex_impl<double>(frames, out, window, batch, nframes, nperseg, hop, nfft, trim, outLength, gain);
}

// Complex series to real planes: the real parts of the B series of n samples as series 0..B-1,
// the imaginary parts as series B..2B-1 (what a real filter or convolution then runs over).
template <typename T>
__device__ void complex_to_planes_impl(const typename Complex<T>::type* x, T* planes, int batch, int n) {
  i64 total = (i64)batch * n;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    typename Complex<T>::type v = x[i];
    planes[i] = v.x;
    planes[total + i] = v.y;
  }
}

extern "C" __global__ void complex_to_planes_f32(const float2* x, float* planes, int batch, int n) { complex_to_planes_impl<float>(x, planes, batch, n); }
extern "C" __global__ void complex_to_planes_f64(const double2* x, double* planes, int batch, int n) { complex_to_planes_impl<double>(x, planes, batch, n); }

// Planes back to complex series, combining the two products of a complex convolution:
//   y = (a_re - c_im) + j (a_im + c_re)
// a: the planes times the real part of the coefficients, c: times their imaginary part (hasC 0:
// no c, real coefficients). complexA 0: a and c hold B real rows (a real signal), so a_im = c_im = 0.
template <typename T>
__device__ void join_planes_impl(const T* a, const T* c, typename Complex<T>::type* y, int batch, int n, int complexA, int hasC) {
  i64 total = (i64)batch * n;
  for (i64 i = global_thread(); i < total; i += grid_threads()) {
    double re = (double)a[i];
    double im = complexA ? (double)a[total + i] : 0.0;
    if (hasC) {
      if (complexA) re -= (double)c[total + i];
      im += (double)c[i];
    }
    typename Complex<T>::type v;
    v.x = (T)re;
    v.y = (T)im;
    y[i] = v;
  }
}

extern "C" __global__ void join_planes_f32(const float* a, const float* c, float2* y, int batch, int n, int complexA, int hasC) { join_planes_impl<float>(a, c, y, batch, n, complexA, hasC); }
extern "C" __global__ void join_planes_f64(const double* a, const double* c, double2* y, int batch, int n, int complexA, int hasC) { join_planes_impl<double>(a, c, y, batch, n, complexA, hasC); }
