// Host stand-in for <cuda_runtime.h> so src/kernels/signal.cu and filter.cu compile as C++ for the CPU
// emulation (test/unit/signal/*-emulated.test.ts, filter-kernels.test.ts). A kernel runs once per emulated
// block with one thread (blockDim = 1): its grid-stride loops then cover all work, and block reductions
// reduce one value. A kernel whose threads cooperate (warp shuffles, shared memory across threads) wraps
// its body in BLOCK_COOPERATIVE: here that runs `emu_threads` threads (set by the test) as fibers on the
// calling thread, switching only at barriers (__syncthreads, __syncwarp, each shuffle), so a block's
// threads share its __shared__ (static) memory and exchange values as on the GPU, deterministically.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
#include <vector>
struct uint3 { unsigned x, y, z; };
extern "C" { extern uint3 threadIdx, blockIdx, blockDim, gridDim; }
struct float2 { float x, y; };
struct double2 { double x, y; };
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
inline double atomicAdd(double* a, double v) { double o = *a; *a += v; return o; }
inline unsigned long long atomicMin(unsigned long long* a, unsigned long long v) { unsigned long long o = *a; if (v < o) *a = v; return o; }
inline unsigned __float_as_uint(float v) { unsigned u; std::memcpy(&u, &v, 4); return u; }
inline long long __double_as_longlong(double v) { long long u; std::memcpy(&u, &v, 8); return u; }
inline void sincospi(double x, double* s, double* c) { *s = std::sin(M_PI * x); *c = std::cos(M_PI * x); }
using std::sqrt;
using std::exp;
using std::fabs;

namespace emu {
// Threads per block of the next cooperative kernel (emu_threads in harness.cpp; 1 by default).
inline unsigned threads = 1;
// Barrier groups: one per warp of the block, then the block itself (index warps).
struct Group { unsigned arrived = 0, generation = 0; };
struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  bool done = false;
  int waiting = -1;          // the group whose barrier it waits at, or -1
  unsigned waited = 0;       // that group's generation when it arrived
  unsigned shuffles = 0;     // shuffles it made (their slots alternate between two sets)
};
inline std::vector<Fiber> fibers;  // kept from block to block (their stacks are reused)
inline bool running = false;        // inside a cooperative block
inline std::vector<Group> groups;
inline std::vector<unsigned long long> slots[2];  // one exchange slot per thread, two sets
inline ucontext_t scheduler;
inline unsigned current = 0;
inline unsigned long long progress = 0;  // arrivals and completions: the scheduler's deadlock check
inline const std::function<void()>* body = nullptr;

inline unsigned warp_size(unsigned warp) { return threads - 32 * warp < 32 ? threads - 32 * warp : 32; }

// Waits until every thread of `group` (of `size` threads) has arrived. Outside a cooperative kernel
// (one thread, no fibers) every barrier is passed at once.
inline void barrier(unsigned group, unsigned size) {
  if (!running || size <= 1) return;
  Group& g = groups[group];
  progress++;
  if (++g.arrived == size) {
    g.arrived = 0;
    g.generation++;
    return;
  }
  Fiber& f = fibers[current];
  f.waiting = (int)group;
  f.waited = g.generation;
  swapcontext(&f.context, &scheduler);
}

inline void sync_warp() { barrier(threadIdx.x / 32, warp_size(threadIdx.x / 32)); }
inline void sync_block() { barrier((threads + 31) / 32, threads); }

// The value `v` of lane `src` of the caller's warp (every lane of the warp calls it together).
template <typename V>
inline V shuffle(V v, unsigned src) {
  static_assert(sizeof(V) <= sizeof(unsigned long long), "shuffled values are at most 8 bytes");
  if (!running) return v;
  std::vector<unsigned long long>& s = slots[fibers[current].shuffles++ & 1];
  std::memcpy(&s[threadIdx.x], &v, sizeof(V));
  sync_warp();
  const unsigned base = threadIdx.x / 32 * 32;
  V out;
  std::memcpy(&out, &s[base + (src < warp_size(threadIdx.x / 32) ? src : threadIdx.x - base)], sizeof(V));
  return out;
}

inline void fiber_entry() {
  (*body)();
  fibers[current].done = true;
  progress++;
  swapcontext(&fibers[current].context, &scheduler);
}

// Runs `kernel` as `threads` fibers (threadIdx.x = 0 .. threads - 1, blockDim.x = threads).
inline void run_block(const std::function<void()>& kernel) {
  if (threads <= 1) {
    kernel();
    return;
  }
  body = &kernel;
  if (fibers.size() < threads) fibers.resize(threads);
  groups.assign((threads + 31) / 32 + 1, Group());
  slots[0].assign(threads, 0);
  slots[1].assign(threads, 0);
  blockDim.x = threads;
  for (unsigned i = 0; i < threads; i++) {
    Fiber& f = fibers[i];
    f.done = false;
    f.waiting = -1;
    f.shuffles = 0;
    if (f.stack.empty()) f.stack.resize(1 << 16);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.data();
    f.context.uc_stack.ss_size = f.stack.size();
    f.context.uc_link = nullptr;
    makecontext(&f.context, fiber_entry, 0);
  }
  running = true;
  for (unsigned live = threads; live > 0;) {
    const unsigned long long before = progress;
    live = 0;
    for (unsigned i = 0; i < threads; i++) {
      Fiber& f = fibers[i];
      if (f.done) continue;
      live++;
      if (f.waiting >= 0 && groups[f.waiting].generation == f.waited) continue;
      f.waiting = -1;
      current = i;
      threadIdx.x = i;
      swapcontext(&scheduler, &f.context);
    }
    if (live > 0 && progress == before) {
      std::fprintf(stderr, "emulated block deadlocked: threads wait at barriers the others never reach\n");
      std::abort();
    }
  }
  running = false;
  threadIdx.x = 0;
  blockDim.x = 1;
}
}  // namespace emu

#define BLOCK_COOPERATIVE(...) emu::run_block([&] { __VA_ARGS__; })
#define __syncthreads() emu::sync_block()
#define __syncwarp(...) emu::sync_warp()
template <typename V> inline V __shfl_sync(unsigned, V v, int src) { return emu::shuffle(v, (unsigned)src & 31u); }
template <typename V> inline V __shfl_up_sync(unsigned, V v, unsigned delta) {
  const unsigned lane = threadIdx.x & 31u;
  return emu::shuffle(v, lane >= delta ? lane - delta : lane);
}
