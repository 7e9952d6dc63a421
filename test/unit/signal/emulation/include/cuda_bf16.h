// Host stand-in for <cuda_bf16.h> (CPU emulation of src/kernels/signal.cu): __nv_bfloat16 as its
// bits, conversions rounding to nearest even.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
struct __nv_bfloat16 { uint16_t bits; };
inline float __bfloat162float(__nv_bfloat16 b) {
  uint32_t u = (uint32_t)b.bits << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline __nv_bfloat16 __float2bfloat16_rn(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  __nv_bfloat16 b;
  if (std::isnan(x)) { b.bits = 0x7fc0; return b; }
  u += 0x7fffu + ((u >> 16) & 1u);
  b.bits = (uint16_t)(u >> 16);
  return b;
}
inline __nv_bfloat16 __double2bfloat16(double x) { return __float2bfloat16_rn((float)x); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.bits; }
