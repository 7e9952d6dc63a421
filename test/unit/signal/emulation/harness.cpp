// CPU emulation of src/kernels/signal.cu, filter.cu and sos.cu: compiled with g++ against include/cuda_runtime.h.
#include <cuda_runtime.h>
#include <cmath>
#include <functional>
#include <ucontext.h>
#include <vector>
extern "C" {
thread_local uint3 threadIdx = {0, 0, 0};
uint3 blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
unsigned emu_threads = 1;
unsigned char* emu_dynamic_shared = nullptr;
// Selects the emulated block: the test calls a kernel once per block index 0..grid-1.
void emu_block(unsigned block, unsigned grid) {
  blockIdx.x = block;
  gridDim.x = grid;
}
// The threads of a block for the cooperative kernels (the launch's block size); the others run one.
void emu_block_threads(unsigned threads) { emu_threads = threads; }
}
thread_local EmuBarrier* emu_barrier = nullptr;

// Block-cooperative kernels: every thread of the block is a fiber (ucontext) on the one OS thread.
// __syncthreads (emu_fiber_syncthreads) returns to the scheduler, which runs each live fiber up to its
// next barrier (or its end) in turn, so a barrier is passed once every thread has reached it.
// Threads run one after another between barriers: a thread reading shared memory that another
// writes without a barrier between them reads the poison (NaN) or stale values, and the results show it.
namespace {
ucontext_t scheduler;
std::vector<ucontext_t> fibers;
std::vector<char> waiting;  // per thread: stopped at a barrier (else ended) in this round
unsigned current = 0;
bool cooperative = false;
bool barrier_diverged = false;
unsigned block_threads = 1;
std::vector<unsigned char> shared_memory;
const std::function<void()>* body = nullptr;

void fiber_main() { (*body)(); }  // returning resumes uc_link: the scheduler

// Runs `kernel` as each of the block_threads threads of block blockIdx.x.
void run_block(const std::function<void()>& kernel) {
  const unsigned n = block_threads;
  const size_t stack = 64 * 1024;
  std::vector<std::vector<char>> stacks(n, std::vector<char>(stack));
  std::vector<char> ended(n, 0);
  fibers.assign(n, ucontext_t());
  waiting.assign(n, 0);
  body = &kernel;
  for (unsigned t = 0; t < n; t++) {
    getcontext(&fibers[t]);
    fibers[t].uc_stack.ss_sp = stacks[t].data();
    fibers[t].uc_stack.ss_size = stack;
    fibers[t].uc_link = &scheduler;
    makecontext(&fibers[t], fiber_main, 0);
  }
  // Poisoned like fresh device memory: a slot read before any thread of the block wrote it gives NaN.
  const double nan = std::nan("");
  for (size_t i = 0; i + sizeof(double) <= shared_memory.size(); i += sizeof(double))
    std::memcpy(shared_memory.data() + i, &nan, sizeof(double));
  cooperative = true;
  blockDim.x = n;
  for (unsigned live = n; live > 0;) {
    unsigned finished = 0;
    for (unsigned t = 0; t < n; t++) {
      if (ended[t]) continue;
      current = t;
      threadIdx.x = t;
      waiting[t] = 0;
      swapcontext(&scheduler, &fibers[t]);
      if (!waiting[t]) ended[t] = 1, finished++;
    }
    // A barrier that some threads of the block reach while others end: undefined in CUDA.
    if (finished != 0 && finished != live) barrier_diverged = true;
    live -= finished;
  }
  cooperative = false;
  blockDim.x = 1;
  threadIdx.x = 0;
}
}  // namespace

extern "C" {
void emu_fiber_syncthreads() {
  if (!cooperative) return;  // one thread per block: nothing to wait for
  waiting[current] = 1;
  swapcontext(&fibers[current], &scheduler);
}
// Sets the threads per block and the dynamic shared memory of the next cooperative launches (emu_<kernel>).
void emu_cooperative(unsigned threads, unsigned shared_bytes) {
  block_threads = threads;
  shared_memory.assign(shared_bytes + 16, 0);
  emu_dynamic_shared = shared_memory.data();
}
// Whether a barrier diverged since the last call (then the kernel is wrong, whatever it wrote); clears it.
int emu_barrier_diverged() {
  const int d = barrier_diverged ? 1 : 0;
  barrier_diverged = false;
  return d;
}
}

#include "../../../../src/kernels/signal.cu"
#include "../../../../src/kernels/filter.cu"
#include "../../../../src/kernels/sos.cu"

// emu_<kernel>: the block-cooperative kernel run as all threads of the block selected by emu_block.
#define COOPERATIVE(name, params, args) \
  extern "C" void emu_##name params { run_block([&] { name args; }); }
COOPERATIVE(upfirdn_tiled_f32, (const float* x, float* y, const double* phased, int batch, int length, int phase_taps, int up, int down, int out_length, int start, int per_class, int span, int tiles), (x, y, phased, batch, length, phase_taps, up, down, out_length, start, per_class, span, tiles))
COOPERATIVE(upfirdn_tiled_f64, (const double* x, double* y, const double* phased, int batch, int length, int phase_taps, int up, int down, int out_length, int start, int per_class, int span, int tiles), (x, y, phased, batch, length, phase_taps, up, down, out_length, start, per_class, span, tiles))
