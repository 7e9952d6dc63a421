// scipy.signal.sosfilt in parallel along time (issue 41; the host side is src/signal/sos-scan.ts and
// iir.ts; the sequential kernel, one thread per series, stays in filter.cu for short series).
//
// A cascade of second-order sections is a linear system with state s (d = 2 * sections doubles):
// over L samples s_end = A^L s_start + e, e the state reached from a zero start. A series is cut
// into tiles of blockDim.x chunks of `chunk` samples, one block per tile, one thread per chunk:
//   1. sos_scan_up: the block stages its tile in shared memory (coalesced loads), each thread filters
//      its chunk from zero (e_i), and the block combines the e_i up a binary tree (Blelloch's
//      up-sweep: a node's e = A^(length of its right half) e_left + e_right). The tree goes to `tree`.
//   2. sos_scan_tiles: per series, the tile starts S_{g+1} = A^(tile) S_g + E_g from zi (or zero),
//      each written over its tile's root.
//   3. sos_scan_down: the block loads its tree, sweeps it down from the tile's start (each chunk's
//      start = A^(length of the left half) parent start + e_left), then filters its chunk again from
//      its true start into shared memory, stored coalesced to y; the thread with the last sample
//      writes zf.
// State and arithmetic are float64 everywhere (the tree, the powers of A, the cascade): a narrow
// band-pass has poles near the unit circle and its transition powers amplify float32 rounding.
// `powers` holds A^(chunk * 2^j) for j = 0 .. log2(blockDim.x), d x d column-major each (built in
// float64 on the host): level j of the tree, then (j = log2 of the tile's threads) the tile. Column-major
// because the threads of a matrix-vector product take one row each: element (r, k) at k * d + r puts
// their reads of one column side by side (one cache line, distinct shared-memory banks).
// A chunk past the end of the series is empty; the tree nodes that hold it are wrong (a partial
// node is combined as if full) but only ever give starts to chunks after the end, never read.

#include <cuda_runtime.h>

typedef long long sos_i64;

// The most sections the parallel path takes (sos-scan.ts MAX_SCAN_SECTIONS): the cascade is
// instantiated for each count so that its state and coefficients live in registers.
#define SOS_SCAN_MAX_SECTIONS 16
// Doubles of shared memory per block (33,280 bytes: six blocks fit an SM). sos-scan.ts SCAN_SHARED
// checks that threads * (chunk + 1) (the staged tile) and 2 * threads * d (the tree twice) fit.
#define SOS_SCAN_SHARED 4160
// Threads per block of the tile kernels (sos-scan.ts SCAN_THREADS), and the blocks an SM should hold
// at once (the shared memory allows six): registers are capped at 65536 / (64 * 6) = 170 a thread, so
// eight sections (state and coefficients in registers) never spill and six blocks are resident.
#define SOS_SCAN_THREADS 64
#define SOS_SCAN_BLOCKS_PER_SM 6

// The CPU emulation (test/unit/signal/emulation) runs a block's threads together through this hook,
// so that __syncthreads and shared memory mean what they mean on the GPU; here it is the call.
#ifndef COOPERATIVE_BLOCK
#define COOPERATIVE_BLOCK(...) __VA_ARGS__
#endif

// The coefficients of S sections in registers (a0 = 1 is never read).
template <int S> struct SosCoefficients {
  double b0[S], b1[S], b2[S], a1[S], a2[S];
};

template <int S> __device__ __forceinline__ void sos_load(const double* sos, SosCoefficients<S>& c) {
#pragma unroll
  for (int s = 0; s < S; s++) {
    c.b0[s] = sos[6 * s];
    c.b1[s] = sos[6 * s + 1];
    c.b2[s] = sos[6 * s + 2];
    c.a1[s] = sos[6 * s + 4];
    c.a2[s] = sos[6 * s + 5];
  }
}

// `n` samples of v (a staged chunk) through the cascade from state z, direct form II transposed (as
// filter.cu's cascade and scipy's _sosfilt); with `write`, each sample is replaced by its output.
template <int S>
__device__ __forceinline__ void sos_run(const SosCoefficients<S>& c, double* z, double* v, int n, bool write) {
  for (int t = 0; t < n; t++) {
    double x = v[t];
#pragma unroll
    for (int s = 0; s < S; s++) {
      const double y = c.b0[s] * x + z[2 * s];
      z[2 * s] = c.b1[s] * x - c.a1[s] * y + z[2 * s + 1];
      z[2 * s + 1] = c.b2[s] * x - c.a2[s] * y;
      x = y;
    }
    if (write) v[t] = x;
  }
}

// Where a tile lies: series b, first sample, samples in it (the last tile of a series may be short).
struct SosTile {
  sos_i64 series, begin;
  int length;
};

__device__ __forceinline__ SosTile sos_tile(sos_i64 tile, sos_i64 tiles, sos_i64 span, int length) {
  SosTile t;
  t.series = tile / tiles;
  t.begin = (tile - t.series * tiles) * span;
  const sos_i64 rest = (sos_i64)length - t.begin;
  t.length = (int)(rest < span ? rest : span);
  return t;
}

// log2 of a power of two (the host passes powers of two for chunk and threads).
__device__ __forceinline__ int sos_log2(int v) {
  int l = 0;
  while ((1 << l) < v) l++;
  return l;
}

// Loads in flight per thread while staging: each thread issues this many independent loads before it
// stores any, so a block of two warps keeps enough memory requests in flight.
#define SOS_STAGE_UNROLL 8

// The tile's samples into shared memory, chunk i at sh[i * (chunk + 1)]: consecutive threads load
// consecutive samples; the padding of one double keeps a warp's chunk reads on distinct banks.
template <typename T> __device__ void sos_stage(const T* x, double* sh, int length, int chunk, int shift) {
  const int step = blockDim.x;
  int k = threadIdx.x;
  for (; k + (SOS_STAGE_UNROLL - 1) * step < length; k += SOS_STAGE_UNROLL * step) {
    double v[SOS_STAGE_UNROLL];
#pragma unroll
    for (int u = 0; u < SOS_STAGE_UNROLL; u++) v[u] = (double)x[k + u * step];
#pragma unroll
    for (int u = 0; u < SOS_STAGE_UNROLL; u++) {
      const int i = k + u * step;
      sh[(i >> shift) * (chunk + 1) + (i & (chunk - 1))] = v[u];
    }
  }
  for (; k < length; k += step) sh[(k >> shift) * (chunk + 1) + (k & (chunk - 1))] = (double)x[k];
}

// `n` doubles from global into shared memory, with the loads batched as in sos_stage.
__device__ void sos_copy_in(double* sh, const double* in, int n) {
  const int step = blockDim.x;
  int k = threadIdx.x;
  for (; k + (SOS_STAGE_UNROLL - 1) * step < n; k += SOS_STAGE_UNROLL * step) {
    double v[SOS_STAGE_UNROLL];
#pragma unroll
    for (int u = 0; u < SOS_STAGE_UNROLL; u++) v[u] = in[k + u * step];
#pragma unroll
    for (int u = 0; u < SOS_STAGE_UNROLL; u++) sh[k + u * step] = v[u];
  }
  for (; k < n; k += step) sh[k] = in[k];
}

template <typename T> __device__ void sos_unstage(T* y, const double* sh, int length, int chunk, int shift) {
  for (int k = threadIdx.x; k < length; k += blockDim.x) y[k] = (T)sh[(k >> shift) * (chunk + 1) + (k & (chunk - 1))];
}

// Blelloch's up-sweep over the blockDim.x vectors e[i * d .. i * d + d): at level j, the right node of
// each pair becomes A^(chunk * 2^j) e_left + e_right. One (pair, row) per thread at a time.
__device__ void sos_up_sweep(double* e, const double* powers, int d) {
  const int threads = blockDim.x;
  for (int j = 0, half = 1; half < threads; j++, half <<= 1) {
    const double* m = powers + (sos_i64)j * d * d;
    const int items = threads / (2 * half) * d;
    for (int item = threadIdx.x; item < items; item += threads) {
      const int pair = item / d, r = item - pair * d;
      const int right = (2 * pair + 2) * half - 1, left = right - half;
      double acc = e[right * d + r], acc2 = 0.0;
      for (int k = 0; k < d; k += 2) {
        acc += m[k * d + r] * e[left * d + k];
        acc2 += m[(k + 1) * d + r] * e[left * d + k + 1];
      }
      e[right * d + r] = acc + acc2;
    }
    __syncthreads();
  }
}

// Blelloch's down-sweep from the root (the tile's start state): the left node takes its parent's
// start, the right node A^(chunk * 2^j) parent start + e_left. `next` holds a level's results until
// every thread has read the old ones.
__device__ void sos_down_sweep(double* e, double* next, const double* powers, int d) {
  const int threads = blockDim.x;
  for (int j = sos_log2(threads) - 1, half = threads / 2; half >= 1; j--, half >>= 1) {
    const double* m = powers + (sos_i64)j * d * d;
    const int items = threads / (2 * half) * d;
    for (int item = threadIdx.x; item < items; item += threads) {
      const int pair = item / d, r = item - pair * d;
      const int right = (2 * pair + 2) * half - 1, left = right - half;
      double acc = e[left * d + r], acc2 = 0.0;
      for (int k = 0; k < d; k += 2) {
        acc += m[k * d + r] * e[right * d + k];
        acc2 += m[(k + 1) * d + r] * e[right * d + k + 1];
      }
      next[left * d + r] = e[right * d + r];
      next[right * d + r] = acc + acc2;
    }
    __syncthreads();
    for (int item = threadIdx.x; item < items; item += threads) {
      const int pair = item / d, r = item - pair * d;
      const int right = (2 * pair + 2) * half - 1, left = right - half;
      e[left * d + r] = next[left * d + r];
      e[right * d + r] = next[right * d + r];
    }
    __syncthreads();
  }
}

// Pass 1: every chunk from a zero state, combined up its tile's tree; the tree (blockDim.x * d
// doubles per tile, tile-major) to `tree`.
template <typename T, int S>
__device__ void sos_scan_up_run(double* sh, const T* x, const double* sos, const double* powers, double* tree, int batch, int length, int chunk) {
  const int d = 2 * S, threads = blockDim.x, me = threadIdx.x, shift = sos_log2(chunk);
  const sos_i64 span = (sos_i64)threads * chunk, tiles = ((sos_i64)length + span - 1) / span;
  SosCoefficients<S> c;
  sos_load<S>(sos, c);
  for (sos_i64 tile = blockIdx.x; tile < (sos_i64)batch * tiles; tile += gridDim.x) {
    const SosTile at = sos_tile(tile, tiles, span, length);
    sos_stage<T>(x + at.series * length + at.begin, sh, at.length, chunk, shift);
    __syncthreads();
    double z[2 * S];
#pragma unroll
    for (int k = 0; k < 2 * S; k++) z[k] = 0.0;
    const int first = me * chunk, rest = at.length - first;
    sos_run<S>(c, z, sh + me * (chunk + 1), rest < 0 ? 0 : rest < chunk ? rest : chunk, false);
    __syncthreads(); // every chunk read before the tree takes the staging's place
#pragma unroll
    for (int k = 0; k < 2 * S; k++) sh[me * d + k] = z[k];
    __syncthreads();
    sos_up_sweep(sh, powers, d);
    double* out = tree + tile * threads * d;
    for (int k = me; k < threads * d; k += threads) out[k] = sh[k];
    __syncthreads(); // the tree stored before the next tile's staging overwrites it
  }
}

// Pass 3: the tree swept down from the tile's start (written over the root by pass 2), then every
// chunk filtered again from its start, written to y (y may be x: a block reads its whole tile before
// writing it). The thread holding the series' last sample writes the final state to zf (scipy's
// layout (sections, batch, 2)) when has_zf.
template <typename T, int S>
__device__ void sos_scan_down_run(double* sh, const T* x, T* y, const double* sos, const double* powers, double* tree, T* zf, int batch, int length, int chunk, int has_zf) {
  const int d = 2 * S, threads = blockDim.x, me = threadIdx.x, shift = sos_log2(chunk);
  const sos_i64 span = (sos_i64)threads * chunk, tiles = ((sos_i64)length + span - 1) / span;
  SosCoefficients<S> c;
  sos_load<S>(sos, c);
  for (sos_i64 tile = blockIdx.x; tile < (sos_i64)batch * tiles; tile += gridDim.x) {
    const SosTile at = sos_tile(tile, tiles, span, length);
    sos_copy_in(sh, tree + tile * threads * d, threads * d);
    __syncthreads();
    sos_down_sweep(sh, sh + threads * d, powers, d);
    double z[2 * S];
#pragma unroll
    for (int k = 0; k < 2 * S; k++) z[k] = sh[me * d + k];
    __syncthreads(); // every start read before the staging takes the tree's place
    sos_stage<T>(x + at.series * length + at.begin, sh, at.length, chunk, shift);
    __syncthreads();
    const int first = me * chunk, rest = at.length - first;
    const int n = rest < 0 ? 0 : rest < chunk ? rest : chunk;
    sos_run<S>(c, z, sh + me * (chunk + 1), n, true);
    if (has_zf && n > 0 && first + n == at.length && at.begin + at.length == length) {
#pragma unroll
      for (int k = 0; k < 2 * S; k++) zf[((sos_i64)(k / 2) * batch + at.series) * 2 + (k & 1)] = (T)z[k];
    }
    __syncthreads();
    sos_unstage<T>(y + at.series * length + at.begin, sh, at.length, chunk, shift);
    __syncthreads(); // the tile stored before the next tile's tree overwrites it
  }
}

// One instantiation per section count, chosen at run time (the host checks 1 <= sections <= 16).
#define SOS_SECTIONS_SWITCH(CASE) \
  switch (sections) {             \
    CASE(1)                       \
    CASE(2)                       \
    CASE(3)                       \
    CASE(4)                       \
    CASE(5)                       \
    CASE(6)                       \
    CASE(7)                       \
    CASE(8)                       \
    CASE(9)                       \
    CASE(10)                      \
    CASE(11)                      \
    CASE(12)                      \
    CASE(13)                      \
    CASE(14)                      \
    CASE(15)                      \
    CASE(16)                      \
    default: break;               \
  }

template <typename T>
__device__ void sos_scan_up_impl(const T* x, const double* sos, const double* powers, double* tree, int batch, int length, int sections, int chunk) {
  // One array for every instantiation (each declaring its own would multiply the block's shared memory).
  __shared__ double sh[SOS_SCAN_SHARED];
#define SOS_UP_CASE(S) \
  case S: sos_scan_up_run<T, S>(sh, x, sos, powers, tree, batch, length, chunk); break;
  SOS_SECTIONS_SWITCH(SOS_UP_CASE)
#undef SOS_UP_CASE
}

template <typename T>
__device__ void sos_scan_down_impl(const T* x, T* y, const double* sos, const double* powers, double* tree, T* zf, int batch, int length, int sections, int chunk, int has_zf) {
  __shared__ double sh[SOS_SCAN_SHARED];
#define SOS_DOWN_CASE(S) \
  case S: sos_scan_down_run<T, S>(sh, x, y, sos, powers, tree, zf, batch, length, chunk, has_zf); break;
  SOS_SECTIONS_SWITCH(SOS_DOWN_CASE)
#undef SOS_DOWN_CASE
}

// Pass 2, one block per series (blockDim.x >= d): the tile starts in order, S_0 = zi (scipy's layout
// (sections, batch, 2)) or zero, S_{g+1} = A^(tile) S_g + E_g, E_g read from the root of tile g's
// tree and S_g written over it. `threads` is the tile kernels' block size (the tree's width). Thread r
// computes row r; the next root is loaded ahead so that its latency hides behind the row's sums.
template <typename T>
__device__ void sos_scan_tiles_impl(double* tree, const double* powers, const T* zi, int batch, int length, int sections, int chunk, int threads, int has_zi) {
  __shared__ double s[2 * SOS_SCAN_MAX_SECTIONS];
  __shared__ double p[4 * SOS_SCAN_MAX_SECTIONS * SOS_SCAN_MAX_SECTIONS];
  const int d = 2 * sections, r = threadIdx.x;
  const sos_i64 span = (sos_i64)threads * chunk, tiles = ((sos_i64)length + span - 1) / span;
  const double* tile_power = powers + (sos_i64)sos_log2(threads) * d * d;
  for (int k = threadIdx.x; k < d * d; k += blockDim.x) p[k] = tile_power[k];
  for (sos_i64 b = blockIdx.x; b < batch; b += gridDim.x) {
    if (r < d) s[r] = has_zi ? (double)zi[((sos_i64)(r / 2) * batch + b) * 2 + (r & 1)] : 0.0;
    __syncthreads();
    double* root = tree + ((b * tiles) * threads + threads - 1) * d;
    double e = r < d ? root[r] : 0.0;
    for (sos_i64 g = 0; g < tiles; g++) {
      double* next_root = root + (sos_i64)threads * d;
      const double e_next = r < d && g + 1 < tiles ? next_root[r] : 0.0;
      double acc = e, acc2 = 0.0;
      if (r < d)
        for (int k = 0; k < d; k += 2) {
          acc += p[k * d + r] * s[k];
          acc2 += p[(k + 1) * d + r] * s[k + 1];
        }
      __syncthreads();
      if (r < d) {
        root[r] = s[r];
        s[r] = acc + acc2;
      }
      __syncthreads();
      root = next_root;
      e = e_next;
    }
  }
}

// The exported kernels, one per precision (spelled out: codegen reads these signatures).
extern "C" __global__ void __launch_bounds__(SOS_SCAN_THREADS, SOS_SCAN_BLOCKS_PER_SM) sos_scan_up_f32(const float* x, const double* sos, const double* powers, double* tree, int batch, int length, int sections, int chunk) { COOPERATIVE_BLOCK(sos_scan_up_impl<float>(x, sos, powers, tree, batch, length, sections, chunk)); }
extern "C" __global__ void __launch_bounds__(SOS_SCAN_THREADS, SOS_SCAN_BLOCKS_PER_SM) sos_scan_up_f64(const double* x, const double* sos, const double* powers, double* tree, int batch, int length, int sections, int chunk) { COOPERATIVE_BLOCK(sos_scan_up_impl<double>(x, sos, powers, tree, batch, length, sections, chunk)); }
extern "C" __global__ void sos_scan_tiles_f32(double* tree, const double* powers, const float* zi, int batch, int length, int sections, int chunk, int threads, int has_zi) { COOPERATIVE_BLOCK(sos_scan_tiles_impl<float>(tree, powers, zi, batch, length, sections, chunk, threads, has_zi)); }
extern "C" __global__ void sos_scan_tiles_f64(double* tree, const double* powers, const double* zi, int batch, int length, int sections, int chunk, int threads, int has_zi) { COOPERATIVE_BLOCK(sos_scan_tiles_impl<double>(tree, powers, zi, batch, length, sections, chunk, threads, has_zi)); }
extern "C" __global__ void __launch_bounds__(SOS_SCAN_THREADS, SOS_SCAN_BLOCKS_PER_SM) sos_scan_down_f32(const float* x, float* y, const double* sos, const double* powers, double* tree, float* zf, int batch, int length, int sections, int chunk, int has_zf) { COOPERATIVE_BLOCK(sos_scan_down_impl<float>(x, y, sos, powers, tree, zf, batch, length, sections, chunk, has_zf)); }
extern "C" __global__ void __launch_bounds__(SOS_SCAN_THREADS, SOS_SCAN_BLOCKS_PER_SM) sos_scan_down_f64(const double* x, double* y, const double* sos, const double* powers, double* tree, double* zf, int batch, int length, int sections, int chunk, int has_zf) { COOPERATIVE_BLOCK(sos_scan_down_impl<double>(x, y, sos, powers, tree, zf, batch, length, sections, chunk, has_zf)); }
