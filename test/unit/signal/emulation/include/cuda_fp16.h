// Host stand-in for <cuda_fp16.h> (CPU emulation of src/kernels/signal.cu): __half as its bits,
// conversions rounding to nearest even as the device's do.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
struct __half { uint16_t bits; };
inline float __half2float(__half h) {
  uint32_t s = (h.bits & 0x8000u) << 16, e = (h.bits >> 10) & 0x1f, m = h.bits & 0x3ff;
  float v = e == 0 ? std::ldexp((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp((float)(m | 0x400), (int)e - 25);
  return s ? -v : v;
}
inline __half __double2half(double x) {
  __half h;
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (std::isnan(x)) { h.bits = 0x7e00; return h; }
  if (a >= 65520.0) { h.bits = sign | 0x7c00; return h; }
  if (a < std::ldexp(1.0, -14)) { h.bits = sign | (uint16_t)std::nearbyint(a * std::ldexp(1.0, 24)); return h; }
  int e;
  double f = std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  double m = std::nearbyint((f * 2 - 1) * 1024);  // default rounding: to nearest even
  if (m == 1024) { m = 0; e++; }
  h.bits = sign | (uint16_t)(((e - 1 + 15) << 10) | (int)m);
  return h;
}
inline __half __float2half_rn(float x) { return __double2half((double)x); }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
