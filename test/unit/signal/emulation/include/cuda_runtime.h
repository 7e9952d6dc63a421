// Host stand-in for <cuda_runtime.h> so src/kernels/signal.cu compiles as C++ for the CPU emulation
// (test/unit/signal/kernels-emulated.test.ts). One emulated thread per block (blockDim = 1): every
// kernel's grid-stride loops then cover all work, and block reductions reduce one value. A kernel
// whose block works together (sos.cu, through COOPERATIVE_BLOCK) runs emu_threads threads of the
// block at once, each a std::thread with its own threadIdx, __syncthreads a barrier among them and
// __shared__ (static) one array for all: what the GPU does, so a missing barrier can show as a race.
// The kernels with dynamic shared memory (filter.cu's tiled upfirdn, harness.cpp's emu_<kernel>) run
// every thread of a block as a fiber instead, which __syncthreads switches between, over the
// dynamic shared memory emu_dynamic_shared.
#pragma once
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
struct uint3 { unsigned x, y, z; };
extern "C" { extern thread_local uint3 threadIdx; extern uint3 blockIdx, blockDim, gridDim; extern unsigned emu_threads; }
// A reusable barrier for the threads of one emulated block.
struct EmuBarrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned count = 1, waiting = 0, generation = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    const unsigned gen = generation;
    if (++waiting == count) {
      waiting = 0;
      generation++;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return gen != generation; });
    }
  }
};
extern thread_local EmuBarrier* emu_barrier;
extern "C" { void emu_fiber_syncthreads(); extern unsigned char* emu_dynamic_shared; }
// A barrier among the block's threads (COOPERATIVE_BLOCK) or among its fibers (emu_<kernel>).
inline void emu_syncthreads() { if (emu_barrier) emu_barrier->wait(); else emu_fiber_syncthreads(); }
// Runs `body` as the emu_threads threads of the current block (blockDim.x = emu_threads meanwhile).
template <typename F> void emu_cooperative(F body) {
  EmuBarrier barrier;
  barrier.count = emu_threads;
  blockDim.x = emu_threads;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < emu_threads; t++)
    threads.emplace_back([&barrier, &body, t] {
      threadIdx.x = t;
      emu_barrier = &barrier;
      body();
    });
  for (auto& thread : threads) thread.join();
  blockDim.x = 1;
}
#define COOPERATIVE_BLOCK(...) emu_cooperative([&] { __VA_ARGS__; })
#define __launch_bounds__(...)
struct float2 { float x, y; };
struct double2 { double x, y; };
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __syncthreads() emu_syncthreads()
#define FILTER_DYNAMIC_SHARED(type, name) type* name = (type*)emu_dynamic_shared
inline double atomicAdd(double* a, double v) { double o = *a; *a += v; return o; }
inline unsigned long long atomicMin(unsigned long long* a, unsigned long long v) { unsigned long long o = *a; if (v < o) *a = v; return o; }
inline unsigned __float_as_uint(float v) { unsigned u; std::memcpy(&u, &v, 4); return u; }
inline long long __double_as_longlong(double v) { long long u; std::memcpy(&u, &v, 8); return u; }
inline void sincospi(double x, double* s, double* c) { *s = std::sin(M_PI * x); *c = std::cos(M_PI * x); }
using std::sqrt;
using std::exp;
using std::fabs;
