// Host stand-in for <cuda_runtime.h> so src/kernels/signal.cu compiles as C++ for the CPU emulation
// (test/unit/signal/kernels-emulated.test.ts). One emulated thread per block (blockDim = 1): every
// kernel's grid-stride loops then cover all work, and block reductions reduce one value. The
// block-cooperative kernels (harness.cpp's emu_<kernel>) run every thread of a block instead, as
// fibers that __syncthreads switches between, over the dynamic shared memory emu_dynamic_shared.
#pragma once
#include <cmath>
#include <cstring>
struct uint3 { unsigned x, y, z; };
extern "C" { extern uint3 threadIdx, blockIdx, blockDim, gridDim; }
struct float2 { float x, y; };
struct double2 { double x, y; };
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
extern "C" { void emu_syncthreads(); extern unsigned char* emu_dynamic_shared; }
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
