// CPU emulation of src/kernels/signal.cu and filter.cu: compiled with g++ against include/cuda_runtime.h.
#include <cuda_runtime.h>
extern "C" {
uint3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
// Selects the emulated block: the test calls a kernel once per block index 0..grid-1.
void emu_block(unsigned block, unsigned grid) {
  blockIdx.x = block;
  gridDim.x = grid;
}
}
#include "../../../../src/kernels/signal.cu"
#include "../../../../src/kernels/filter.cu"
