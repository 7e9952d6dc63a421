// CPU emulation of src/kernels/signal.cu, filter.cu and sos.cu: compiled with g++ against include/cuda_runtime.h.
#include <cuda_runtime.h>
extern "C" {
thread_local uint3 threadIdx = {0, 0, 0};
uint3 blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
unsigned emu_threads = 1;
// Selects the emulated block: the test calls a kernel once per block index 0..grid-1.
void emu_block(unsigned block, unsigned grid) {
  blockIdx.x = block;
  gridDim.x = grid;
}
// The threads of a block for the cooperative kernels (the launch's block size); the others run one.
void emu_block_threads(unsigned threads) { emu_threads = threads; }
}
thread_local EmuBarrier* emu_barrier = nullptr;
#include "../../../../src/kernels/signal.cu"
#include "../../../../src/kernels/filter.cu"
#include "../../../../src/kernels/sos.cu"
