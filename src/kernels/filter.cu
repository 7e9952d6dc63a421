// GPU filtering kernels for src/signal/ (iir.ts, fir.ts, hilbert.ts, convolve.ts): second-order-section
// IIR filtering (sosfilt, sosfiltfilt), FIR filtering by direct convolution (lfilter and filtfilt with
// FIR taps), the analytic signal's spectrum weights (hilbert) and convolution (direct, and the
// padding, spectrum product and slicing around cuFFT for fftconvolve; overlap-add for oaconvolve),
// resampling (upfirdn's polyphase sum, resample's spectrum) and cross spectra (csd, coherence).
// Each kernel that reads or writes samples has a float (_f32)
// and a double (_f64) variant instantiated from one template; arithmetic and filter state are in
// double in both (scipy filters float32 input in float64, since its coefficients are float64).
//
// Series are row-major (series after series). Coefficient tables are float64: SOS rows
// [b0, b1, b2, a0 = 1, a1, a2], FIR taps b[0..ntaps). Filter state follows scipy's layouts:
// sosfilt's zi is (sections, batch, 2), lfilter's zi is (batch, ntaps - 1).
//
// The IIR recurrence (direct form II transposed, as scipy's _sosfilt) runs in parallel along time
// as well as over series: a warp per tile of 1024 samples and a scan of the tiles' states (below).

#include <cuda_runtime.h>

// A kernel whose threads cooperate (warp shuffles, shared memory) runs its body through
// BLOCK_COOPERATIVE: the body itself on the GPU; the CPU emulation (test/unit/signal/emulation)
// defines it to run the body once per thread of the block, as fibers that meet at each barrier.
#ifndef BLOCK_COOPERATIVE
#define BLOCK_COOPERATIVE(...) __VA_ARGS__
#endif

typedef long long flt_i64;

template <typename T> struct FilterComplex;
template <> struct FilterComplex<float> { typedef float2 type; };
template <> struct FilterComplex<double> { typedef double2 type; };

__device__ __forceinline__ flt_i64 filter_thread() { return (flt_i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ flt_i64 filter_threads() { return (flt_i64)gridDim.x * blockDim.x; }

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

// ---- sosfilt and sosfiltfilt: second-order sections in parallel along time ----------------------------
// The host side (tables, geometry, launch order) is src/signal/sos-scan.ts and sos-pipeline.ts.
//
// A section (transposed direct form II) is a linear recurrence on a state z of two values:
//   y = b0 x + z0,  z0' = b1 x - a1 y + z1,  z1' = b2 x - a2 y,
// so with no input it moves by A = [[-a1, 1], [-a2, 0]] and outputs h_t . s after t samples from a
// state s (h_t: the first row of A^t). A tile of SOS_TILE samples of one series is one warp's: lane i
// holds samples [i L, (i + 1) L) (L = SOS_LANE_SAMPLES) in registers. The tile runs through the cascade
// one section at a time: every lane filters its samples from a zero state (lane 0 from the tile's start
// state), a Hillis-Steele scan across the lanes with the transitions A^(L 2^k) turns each lane's end
// state into its true one, and the zero-input response of each lane's true start state is added to its
// outputs. That is the section's true output, the next section's input, so the per-sample work stays
// one section's recurrence plus two multiply-adds, however long the cascade.
// Across the tiles of a series the cascade's whole state (d = 2 sections values) moves as
// end = M start + e, M = A_cascade^SOS_TILE and e the end state from a zero start; a two-level scan
// (tiles in groups of `group`, then groups along the series with M^group) finds every tile's true start:
//   sos_initial_state   each series' start state: zero, zi, or the steady state zi times its first sample
//   sos_tile_final      e of every tile but each series' last
//   sos_group_final     the end state of every group but each series' last, from a zero start
//   sos_group_scan      the true end states of the groups, group after group along each series
//   sos_group_apply     the true end states of the tiles, tile after tile within each group
//   sos_tile_apply      every tile again from its true start, writing y (and zf from each series' last tile)
// Arithmetic and states are double for both precisions. One launch takes at most SOS_GROUP_SECTIONS
// sections (a longer cascade runs as consecutive launches, each filtering the previous one's output).
#define SOS_LANES 32
#define SOS_LANE_SAMPLES 32
#define SOS_TILE (SOS_LANES * SOS_LANE_SAMPLES)
#define SOS_SCAN_STEPS 5  // log2(SOS_LANES)
#define SOS_GROUP_SECTIONS 16  // d = 2 * 16 = SOS_LANES: one state value per lane in the group kernels
#define SOS_TILE_WARPS 4  // the tile kernels' blocks: 4 warps (128 threads)
#define SOS_ALL_LANES 0xffffffffu
// Per section, SOS_SECTION_STRIDE doubles (sos-scan.ts sectionTable): b0, b1, b2, a1, a2; then the scan's
// transitions A^(L 2^k), k = 0 .. SOS_SCAN_STEPS - 1, 2 x 2 row-major; then h_t, t = 0 .. L, two values each.
#define SOS_POWERS 5
#define SOS_RESPONSE (SOS_POWERS + 4 * SOS_SCAN_STEPS)
#define SOS_SECTION_STRIDE (SOS_RESPONSE + 2 * (SOS_LANE_SAMPLES + 1))
// A lane's samples in the staging rows, padded by one so that lanes reading their own rows hit distinct banks.
#define SOS_STAGE_ROW (SOS_LANE_SAMPLES + 1)

// What a block of the tile kernels shares: its sections' tables and one staging area per warp.
template <typename T>
struct SosTileShared {
  double table[SOS_GROUP_SECTIONS * SOS_SECTION_STRIDE];
  T stage[SOS_TILE_WARPS][SOS_LANES * SOS_STAGE_ROW];
};

__device__ __forceinline__ flt_i64 sos_warp() { return filter_thread() / SOS_LANES; }
__device__ __forceinline__ flt_i64 sos_warps() { return filter_threads() / SOS_LANES; }

// Sample t of a series of `length`, in the order it is filtered (backwards for sosfiltfilt's second pass).
__device__ __forceinline__ flt_i64 sos_index(flt_i64 length, flt_i64 t, int reverse) { return reverse ? length - 1 - t : t; }

// Value r (< d) of series b's start state, scipy's layout (sections, batch, 2); 0 for lanes past d.
__device__ __forceinline__ double sos_initial(const double* init, int lane, int d, flt_i64 b, int batch) {
  return lane < d ? init[((lane / 2) * (flt_i64)batch + b) * 2 + (lane & 1)] : 0.0;
}

__device__ __forceinline__ void sos_load_table(double* shared, const double* table, int sections) {
  for (int i = threadIdx.x; i < sections * SOS_SECTION_STRIDE; i += blockDim.x) shared[i] = table[i];
  __syncthreads();
}

// The tile's samples [begin, begin + count) of `row` into the lanes' registers v (zeros past count), coalesced through `stage`.
// Unrolled whole, so that every load of the tile is in flight at once.
template <typename T>
__device__ __forceinline__ void sos_load_tile(const T* row, flt_i64 length, flt_i64 begin, int count, int reverse, T* stage, int lane, double* v) {
  T in[SOS_LANE_SAMPLES];
#pragma unroll
  for (int i = 0; i < SOS_LANE_SAMPLES; i++) {
    const int j = i * SOS_LANES + lane;
    in[i] = j < count ? row[sos_index(length, begin + j, reverse)] : (T)0;
  }
#pragma unroll
  for (int i = 0; i < SOS_LANE_SAMPLES; i++) stage[i * SOS_STAGE_ROW + lane] = in[i];
  __syncwarp();
#pragma unroll
  for (int t = 0; t < SOS_LANE_SAMPLES; t++) v[t] = (double)stage[lane * SOS_STAGE_ROW + t];
  __syncwarp();
}

// The lanes' outputs v back into the tile's samples [begin, begin + count) of `row`.
template <typename T>
__device__ __forceinline__ void sos_store_tile(T* row, flt_i64 length, flt_i64 begin, int count, int reverse, T* stage, int lane, const double* v) {
#pragma unroll
  for (int t = 0; t < SOS_LANE_SAMPLES; t++) stage[lane * SOS_STAGE_ROW + t] = (T)v[t];
  __syncwarp();
#pragma unroll
  for (int i = 0; i < SOS_LANE_SAMPLES; i++) {
    const int j = i * SOS_LANES + lane;
    if (j < count) row[sos_index(length, begin + j, reverse)] = stage[i * SOS_STAGE_ROW + lane];
  }
  __syncwarp();
}

// One section (coefficients c) over a lane's samples v, replaced by its outputs, from state (z0, z1), left
// holding the end state. SNAP: (q0, q1) gets the state after the first m samples.
template <bool SNAP>
__device__ __forceinline__ void sos_lane_section(const double* c, double* v, double& z0, double& z1, int m, double& q0, double& q1) {
  const double b0 = c[0], b1 = c[1], b2 = c[2], a1 = c[3], a2 = c[4];
#pragma unroll
  for (int t = 0; t < SOS_LANE_SAMPLES; t++) {
    const double x = v[t];
    const double y = b0 * x + z0;
    z0 = b1 * x - a1 * y + z1;
    z1 = b2 * x - a2 * y;
    v[t] = y;
    if (SNAP && t + 1 == m) {
      q0 = z0;
      q1 = z1;
    }
  }
}

// The cascade over the tile a warp holds (v: this lane's samples, replaced by the outputs). Lane r < 2 sections
// holds value r of the tile's start state in `start`. FINAL: the tile's end state comes back in the same layout
// (every lane's samples must be full) and the last section's outputs are left uncorrected (nobody reads them).
// ZF: the lane whose m samples end the series (`ends_series`) writes its state after them to zf, scipy's layout.
template <typename T, bool FINAL, bool ZF>
__device__ __forceinline__ double sos_tile_cascade(const double* table, double* v, int sections, double start, int lane, int m, bool ends_series, T* zf, flt_i64 b, int batch) {
  double end = 0.0;
  for (int s = 0; s < sections; s++) {
    const double* c = table + s * SOS_SECTION_STRIDE;
    const double s0 = __shfl_sync(SOS_ALL_LANES, start, 2 * s), s1 = __shfl_sync(SOS_ALL_LANES, start, 2 * s + 1);
    double z0 = lane == 0 ? s0 : 0.0, z1 = lane == 0 ? s1 : 0.0, q0 = z0, q1 = z1;
    sos_lane_section<ZF>(c, v, z0, z1, m, q0, q1);
    // Inclusive scan of the lanes' end states: afterwards lane i holds its true end state.
#pragma unroll
    for (int k = 0; k < SOS_SCAN_STEPS; k++) {
      const double u0 = __shfl_up_sync(SOS_ALL_LANES, z0, 1 << k), u1 = __shfl_up_sync(SOS_ALL_LANES, z1, 1 << k);
      if (lane >= (1 << k)) {
        const double* p = c + SOS_POWERS + 4 * k;
        z0 += p[0] * u0 + p[1] * u1;
        z1 += p[2] * u0 + p[3] * u1;
      }
    }
    // Each lane's true start state, whose response its outputs lack (lane 0 started from it).
    double p0 = __shfl_up_sync(SOS_ALL_LANES, z0, 1), p1 = __shfl_up_sync(SOS_ALL_LANES, z1, 1);
    if (lane == 0) p0 = p1 = 0.0;
    const double* h = c + SOS_RESPONSE;
    if (!FINAL || s + 1 < sections) {
#pragma unroll
      for (int t = 0; t < SOS_LANE_SAMPLES; t++) v[t] += h[2 * t] * p0 + h[2 * t + 1] * p1;
    }
    if (ZF && ends_series) {
      // The state after m samples: q plus A^m p, whose rows are h_m and -a2 h_(m-1).
      zf[(s * (flt_i64)batch + b) * 2] = (T)(q0 + h[2 * m] * p0 + h[2 * m + 1] * p1);
      zf[(s * (flt_i64)batch + b) * 2 + 1] = (T)(q1 - c[4] * (h[2 * m - 2] * p0 + h[2 * m - 1] * p1));
    }
    if (FINAL) {
      const double e0 = __shfl_sync(SOS_ALL_LANES, z0, SOS_LANES - 1), e1 = __shfl_sync(SOS_ALL_LANES, z1, SOS_LANES - 1);
      if (lane == 2 * s) end = e0;
      if (lane == 2 * s + 1) end = e1;
    }
  }
  return end;
}

// Each series' start state for a cascade of `sections`, scipy's layout (sections, batch, 2), as double:
// zi_mode 0 zero, 1 zi itself (same layout), 2 the steady state zi (sections, 2) times the series' first
// sample in filtering order (sosfiltfilt's starts).
template <typename T>
__device__ void sos_initial_state_impl(const T* x, const T* zi, double* init, int batch, int length, int sections, int zi_mode, int reverse) {
  const flt_i64 total = (flt_i64)sections * batch * 2;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 s = i / (2 * (flt_i64)batch);
    const flt_i64 b = (i / 2) % batch;
    if (zi_mode == 0) init[i] = 0.0;
    else if (zi_mode == 1) init[i] = (double)zi[i];
    else init[i] = (double)zi[2 * s + (i & 1)] * (double)x[b * length + sos_index(length, 0, reverse)];
  }
}

// e of every tile but each series' last: its end state through the cascade from a zero start, into
// ends[(b * tiles + k) * d ..] (d = 2 sections). Blocks of SOS_TILE_WARPS warps.
template <typename T>
__device__ void sos_tile_final_impl(const T* x, const double* table, double* ends, int batch, int length, int sections, int reverse) {
  __shared__ SosTileShared<T> shared;
  sos_load_table(shared.table, table, sections);
  const int lane = threadIdx.x % SOS_LANES;
  T* stage = shared.stage[threadIdx.x / SOS_LANES];
  const flt_i64 tiles = ((flt_i64)length + SOS_TILE - 1) / SOS_TILE;
  const flt_i64 total = (flt_i64)batch * (tiles - 1);
  const int d = 2 * sections;
  double v[SOS_LANE_SAMPLES];
  for (flt_i64 w = sos_warp(); w < total; w += sos_warps()) {
    const flt_i64 b = w / (tiles - 1);
    const flt_i64 k = w - b * (tiles - 1);
    sos_load_tile(x + b * length, length, k * SOS_TILE, SOS_TILE, reverse, stage, lane, v);
    const double end = sos_tile_cascade<T, true, false>(shared.table, v, sections, 0.0, lane, SOS_LANE_SAMPLES, false, (T*)0, b, batch);
    if (lane < d) ends[(b * tiles + k) * d + lane] = end;
  }
}

// Lane r (< d) of a warp: row r of the d x d row-major matrix m into registers, zeros past d.
__device__ __forceinline__ void sos_matrix_row(const double* m, int d, int lane, double* row) {
#pragma unroll
  for (int k = 0; k < SOS_LANES; k++) row[k] = lane < d && k < d ? m[lane * d + k] : 0.0;
}

// M s + e: the warp holds s (value r in lane r), lane r holds row r of M and e's value r.
__device__ __forceinline__ double sos_state_step(const double* row, double s, double e, int d) {
  double acc[4] = {e, 0.0, 0.0, 0.0};
#pragma unroll
  for (int k = 0; k < SOS_LANES; k++)
    if (k < d) acc[k & 3] += row[k] * __shfl_sync(SOS_ALL_LANES, s, k);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// The groups of a series: tiles 0 .. tiles - 2 (those with an e) in groups of `group`.
__device__ __forceinline__ flt_i64 sos_groups(int tiles, int group) { return ((flt_i64)tiles - 1 + group - 1) / group; }

// One warp per group but each series' last: the group's end state from a zero start (transitions: M, then
// M^group), into carries[(b * groups + g) * d ..].
__device__ void sos_group_final_impl(const double* ends, double* carries, const double* transitions, int batch, int tiles, int group, int sections) {
  const int lane = threadIdx.x % SOS_LANES, d = 2 * sections;
  double row[SOS_LANES];
  sos_matrix_row(transitions, d, lane, row);
  const flt_i64 groups = sos_groups(tiles, group);
  const flt_i64 total = (flt_i64)batch * (groups - 1);
  for (flt_i64 w = sos_warp(); w < total; w += sos_warps()) {
    const flt_i64 b = w / (groups - 1);
    const flt_i64 g = w - b * (groups - 1);
    double s = 0.0;
    for (flt_i64 j = g * group; j < (g + 1) * group; j++) s = sos_state_step(row, s, lane < d ? ends[(b * tiles + j) * d + lane] : 0.0, d);
    if (lane < d) carries[(b * groups + g) * d + lane] = s;
  }
}

// One warp per series: group after group from the series' start state, each group's true end state over its
// zero-start one (M^group: the second matrix of transitions).
__device__ void sos_group_scan_impl(double* carries, const double* init, const double* transitions, int batch, int groups, int sections) {
  const int lane = threadIdx.x % SOS_LANES, d = 2 * sections;
  double row[SOS_LANES];
  sos_matrix_row(transitions + d * d, d, lane, row);
  for (flt_i64 b = sos_warp(); b < batch; b += sos_warps()) {
    double s = sos_initial(init, lane, d, b, batch);
    for (flt_i64 g = 0; g + 1 < groups; g++) {
      double* slot = carries + (b * groups + g) * d;
      s = sos_state_step(row, s, lane < d ? slot[lane] : 0.0, d);
      if (lane < d) slot[lane] = s;
    }
  }
}

// One warp per group: tile after tile from the group's true start, each tile's true end state over its e.
__device__ void sos_group_apply_impl(double* ends, const double* carries, const double* init, const double* transitions, int batch, int tiles, int group, int sections) {
  const int lane = threadIdx.x % SOS_LANES, d = 2 * sections;
  double row[SOS_LANES];
  sos_matrix_row(transitions, d, lane, row);
  const flt_i64 groups = sos_groups(tiles, group);
  const flt_i64 total = (flt_i64)batch * groups;
  for (flt_i64 w = sos_warp(); w < total; w += sos_warps()) {
    const flt_i64 b = w / groups;
    const flt_i64 g = w - b * groups;
    double s = g == 0 ? sos_initial(init, lane, d, b, batch) : (lane < d ? carries[(b * groups + g - 1) * d + lane] : 0.0);
    const flt_i64 last = (g + 1) * group < tiles - 1 ? (g + 1) * group : tiles - 1;
    for (flt_i64 j = g * group; j < last; j++) {
      double* slot = ends + (b * tiles + j) * d;
      s = sos_state_step(row, s, lane < d ? slot[lane] : 0.0, d);
      if (lane < d) slot[lane] = s;
    }
  }
}

// Every tile through the cascade from its true start (the series' start state for the first tile, else the
// true end of the tile before), writing y (y may be x: a warp reads its whole tile before writing it). With
// has_zf, the series' final state goes to zf (scipy's layout). Blocks of SOS_TILE_WARPS warps.
template <typename T>
__device__ void sos_tile_apply_impl(const T* x, T* y, const double* table, const double* ends, const double* init, T* zf, int batch, int length, int sections, int reverse, int has_zf) {
  __shared__ SosTileShared<T> shared;
  sos_load_table(shared.table, table, sections);
  const int lane = threadIdx.x % SOS_LANES;
  T* stage = shared.stage[threadIdx.x / SOS_LANES];
  const flt_i64 tiles = ((flt_i64)length + SOS_TILE - 1) / SOS_TILE;
  const flt_i64 total = (flt_i64)batch * tiles;
  const int d = 2 * sections;
  double v[SOS_LANE_SAMPLES];
  for (flt_i64 w = sos_warp(); w < total; w += sos_warps()) {
    const flt_i64 b = w / tiles;
    const flt_i64 k = w - b * tiles;
    const flt_i64 begin = k * SOS_TILE;
    const int count = (int)(length - begin < SOS_TILE ? length - begin : SOS_TILE);
    sos_load_tile(x + b * length, length, begin, count, reverse, stage, lane, v);
    const double start = k == 0 ? sos_initial(init, lane, d, b, batch) : (lane < d ? ends[(b * tiles + k - 1) * d + lane] : 0.0);
    const int left = count - lane * SOS_LANE_SAMPLES;  // this lane's samples, before clamping
    const int m = left < 0 ? 0 : left < SOS_LANE_SAMPLES ? left : SOS_LANE_SAMPLES;
    if (has_zf && k == tiles - 1)
      sos_tile_cascade<T, false, true>(shared.table, v, sections, start, lane, m, m > 0 && left <= SOS_LANE_SAMPLES, zf, b, batch);
    else
      sos_tile_cascade<T, false, false>(shared.table, v, sections, start, lane, m, false, zf, b, batch);
    sos_store_tile(y + b * length, length, begin, count, reverse, stage, lane, v);
  }
}

// Series as double, each extended by `edge` samples at both ends (padtype; edge 0: a plain copy), n = length +
// 2 edge a series: sosfiltfilt's padded input (method 'pad'), which both its passes filter in place (the second
// backwards), and a float32 cascade's float64 copy when it runs as more than one launch.
template <typename T>
__device__ void series_to_f64_impl(const T* x, double* work, int batch, int length, int edge, int padtype) {
  const flt_i64 n = (flt_i64)length + 2 * (flt_i64)edge;
  const flt_i64 total = (flt_i64)batch * n;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / n;
    work[i] = extended(x + b * length, length, edge, padtype, i - b * n);
  }
}

// The middle `length` samples of each double series of n = length + 2 edge, as T: sosfiltfilt's output, and a
// float32 cascade's output (and zf) from its float64 copy.
template <typename T>
__device__ void series_from_f64_impl(const double* work, T* y, int batch, int length, int edge) {
  const flt_i64 n = (flt_i64)length + 2 * (flt_i64)edge;
  const flt_i64 total = (flt_i64)batch * length;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / length;
    y[i] = (T)work[b * n + edge + (i - b * length)];
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

// Each series' one-sided spectrum (bins per row) times the kernel's (one row), times `scale`, in place.
template <typename T>
__device__ void spectrum_product_impl(typename FilterComplex<T>::type* spectra, const typename FilterComplex<T>::type* kernel, int batch, int bins, double scale) {
  const flt_i64 total = (flt_i64)batch * bins;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const typename FilterComplex<T>::type a = spectra[i];
    const typename FilterComplex<T>::type h = kernel[i % bins];
    typename FilterComplex<T>::type v;
    v.x = (T)(scale * ((double)a.x * (double)h.x - (double)a.y * (double)h.y));
    v.y = (T)(scale * ((double)a.x * (double)h.y + (double)a.y * (double)h.x));
    spectra[i] = v;
  }
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

// Overlap-add, step 1: block q of series b (samples [q * step, q * step + step)) as one row of nfft
// samples, zero-padded, ready for one batched real FFT of every block.
template <typename T>
__device__ void oa_blocks_impl(const T* x, T* rows, int batch, int length, int blocks, int step, int nfft) {
  const flt_i64 total = (flt_i64)batch * blocks * nfft;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 row = i / nfft;
    const flt_i64 t = i - row * nfft;
    const flt_i64 b = row / blocks;
    const flt_i64 at = (row - b * blocks) * step + t;
    rows[i] = t < step && at < length ? x[b * length + at] : (T)0;
  }
}

// Overlap-add, step 2: sample start + j of each series' full convolution is the sum of the filtered
// blocks q that cover it (q * step <= m < q * step + nfft).
template <typename T>
__device__ void oa_sum_impl(const T* rows, T* y, int batch, int blocks, int step, int nfft, int out_length, int start) {
  const flt_i64 total = (flt_i64)batch * out_length;
  for (flt_i64 i = filter_thread(); i < total; i += filter_threads()) {
    const flt_i64 b = i / out_length;
    const flt_i64 m = start + (i - b * out_length);
    flt_i64 q = m - nfft + 1 > 0 ? (m - nfft + step) / step : 0;
    const flt_i64 last = m / step < blocks - 1 ? m / step : blocks - 1;
    double acc = 0.0;
    for (; q <= last; q++) acc += (double)rows[(b * blocks + q) * nfft + (m - q * step)];
    y[i] = (T)acc;
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

// The exported kernels, one per precision where they read or write samples (spelled out: codegen reads these signatures).
extern "C" __global__ void sos_initial_state_f32(const float* x, const float* zi, double* init, int batch, int length, int sections, int zi_mode, int reverse) { sos_initial_state_impl<float>(x, zi, init, batch, length, sections, zi_mode, reverse); }
extern "C" __global__ void sos_initial_state_f64(const double* x, const double* zi, double* init, int batch, int length, int sections, int zi_mode, int reverse) { sos_initial_state_impl<double>(x, zi, init, batch, length, sections, zi_mode, reverse); }
extern "C" __global__ void sos_tile_final_f32(const float* x, const double* table, double* ends, int batch, int length, int sections, int reverse) { BLOCK_COOPERATIVE(sos_tile_final_impl<float>(x, table, ends, batch, length, sections, reverse)); }
extern "C" __global__ void sos_tile_final_f64(const double* x, const double* table, double* ends, int batch, int length, int sections, int reverse) { BLOCK_COOPERATIVE(sos_tile_final_impl<double>(x, table, ends, batch, length, sections, reverse)); }
extern "C" __global__ void sos_group_final(const double* ends, double* carries, const double* transitions, int batch, int tiles, int group, int sections) { BLOCK_COOPERATIVE(sos_group_final_impl(ends, carries, transitions, batch, tiles, group, sections)); }
extern "C" __global__ void sos_group_scan(double* carries, const double* init, const double* transitions, int batch, int groups, int sections) { BLOCK_COOPERATIVE(sos_group_scan_impl(carries, init, transitions, batch, groups, sections)); }
extern "C" __global__ void sos_group_apply(double* ends, const double* carries, const double* init, const double* transitions, int batch, int tiles, int group, int sections) { BLOCK_COOPERATIVE(sos_group_apply_impl(ends, carries, init, transitions, batch, tiles, group, sections)); }
extern "C" __global__ void sos_tile_apply_f32(const float* x, float* y, const double* table, const double* ends, const double* init, float* zf, int batch, int length, int sections, int reverse, int has_zf) { BLOCK_COOPERATIVE(sos_tile_apply_impl<float>(x, y, table, ends, init, zf, batch, length, sections, reverse, has_zf)); }
extern "C" __global__ void sos_tile_apply_f64(const double* x, double* y, const double* table, const double* ends, const double* init, double* zf, int batch, int length, int sections, int reverse, int has_zf) { BLOCK_COOPERATIVE(sos_tile_apply_impl<double>(x, y, table, ends, init, zf, batch, length, sections, reverse, has_zf)); }
extern "C" __global__ void series_to_f64_f32(const float* x, double* work, int batch, int length, int edge, int padtype) { series_to_f64_impl<float>(x, work, batch, length, edge, padtype); }
extern "C" __global__ void series_to_f64_f64(const double* x, double* work, int batch, int length, int edge, int padtype) { series_to_f64_impl<double>(x, work, batch, length, edge, padtype); }
extern "C" __global__ void series_from_f64_f32(const double* work, float* y, int batch, int length, int edge) { series_from_f64_impl<float>(work, y, batch, length, edge); }
extern "C" __global__ void series_from_f64_f64(const double* work, double* y, int batch, int length, int edge) { series_from_f64_impl<double>(work, y, batch, length, edge); }
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
extern "C" __global__ void spectrum_product_f32(float2* spectra, const float2* kernel, int batch, int bins, double scale) { spectrum_product_impl<float>(spectra, kernel, batch, bins, scale); }
extern "C" __global__ void spectrum_product_f64(double2* spectra, const double2* kernel, int batch, int bins, double scale) { spectrum_product_impl<double>(spectra, kernel, batch, bins, scale); }
extern "C" __global__ void slice_rows_f32(const float* rows, float* out, int batch, int n, int out_length, int start) { slice_rows_impl<float>(rows, out, batch, n, out_length, start); }
extern "C" __global__ void slice_rows_f64(const double* rows, double* out, int batch, int n, int out_length, int start) { slice_rows_impl<double>(rows, out, batch, n, out_length, start); }
extern "C" __global__ void upfirdn_f32(const float* x, float* y, const double* taps, int batch, int length, int ntaps, int up, int down, int out_length, int start) { upfirdn_impl<float>(x, y, taps, batch, length, ntaps, up, down, out_length, start); }
extern "C" __global__ void upfirdn_f64(const double* x, double* y, const double* taps, int batch, int length, int ntaps, int up, int down, int out_length, int start) { upfirdn_impl<double>(x, y, taps, batch, length, ntaps, up, down, out_length, start); }
extern "C" __global__ void resample_spectrum_f32(const float2* in, float2* out, int batch, int in_bins, int out_bins, int n, int num, double nyquist_factor, double scale) { resample_spectrum_impl<float>(in, out, batch, in_bins, out_bins, n, num, nyquist_factor, scale); }
extern "C" __global__ void resample_spectrum_f64(const double2* in, double2* out, int batch, int in_bins, int out_bins, int n, int num, double nyquist_factor, double scale) { resample_spectrum_impl<double>(in, out, batch, in_bins, out_bins, n, num, nyquist_factor, scale); }
extern "C" __global__ void oa_blocks_f32(const float* x, float* rows, int batch, int length, int blocks, int step, int nfft) { oa_blocks_impl<float>(x, rows, batch, length, blocks, step, nfft); }
extern "C" __global__ void oa_blocks_f64(const double* x, double* rows, int batch, int length, int blocks, int step, int nfft) { oa_blocks_impl<double>(x, rows, batch, length, blocks, step, nfft); }
extern "C" __global__ void oa_sum_f32(const float* rows, float* y, int batch, int blocks, int step, int nfft, int out_length, int start) { oa_sum_impl<float>(rows, y, batch, blocks, step, nfft, out_length, start); }
extern "C" __global__ void oa_sum_f64(const double* rows, double* y, int batch, int blocks, int step, int nfft, int out_length, int start) { oa_sum_impl<double>(rows, y, batch, blocks, step, nfft, out_length, start); }
extern "C" __global__ void csd_mean_f32(const float2* X, const float2* Y, float2* out, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_mean_impl<float>(X, Y, out, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void csd_mean_f64(const double2* X, const double2* Y, double2* out, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_mean_impl<double>(X, Y, out, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void csd_parts_f32(const float2* X, const float2* Y, float* parts, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_parts_impl<float>(X, Y, parts, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void csd_parts_f64(const double2* X, const double2* Y, double* parts, int batch, int frames, int half_bins, int freqs, int nfft, int onesided, double scale) { csd_parts_impl<double>(X, Y, parts, batch, frames, half_bins, freqs, nfft, onesided, scale); }
extern "C" __global__ void join_parts_f32(const float* medians, float2* out, int total) { join_parts_impl<float>(medians, out, total); }
extern "C" __global__ void join_parts_f64(const double* medians, double2* out, int total) { join_parts_impl<double>(medians, out, total); }
extern "C" __global__ void coherence_f32(const float2* pxy, const float* pxx, const float* pyy, float* out, int total) { coherence_impl<float>(pxy, pxx, pyy, out, total); }
extern "C" __global__ void coherence_f64(const double2* pxy, const double* pxx, const double* pyy, double* out, int total) { coherence_impl<double>(pxy, pxx, pyy, out, total); }
