#pragma once
// Vectorised float math: exp, sigmoid, tanh and erf on four floats at a time.
//
//   simd::map(x, y, n, [](simd::f32x4 v) { return simd::exp(v); });
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace footprint::runtime::kernels {

//
// exp, sigmoid, tanh and erf on four floats at a time with GCC vector extensions: the compiler
// does not vectorise loops that call libm, and these ops dominate activations. Within about
// 2 ulp of libm (Cephes' expf and tanhf); NaN propagates, overflow gives infinity.
namespace simd {

using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = int32_t __attribute__((vector_size(16)));
inline constexpr size_t kLanes = 4;

inline f32x4 splat(float v) {
  return f32x4{} + v;
}

inline f32x4 abs(f32x4 x) {
  return reinterpret_cast<f32x4>(reinterpret_cast<i32x4>(x) & 0x7fffffff);
}

// x = n ln2 + r; exp(r) by a polynomial; 2^n built in the exponent bits as two factors, so that
// n = 128 still reaches infinity and n = -150 zero.
inline f32x4 exp(f32x4 x) {
  x = x < splat(-104.0f) ? splat(-104.0f) : x;
  x = x > splat(88.8f) ? splat(88.8f) : x;
  // x / ln2 rounded to nearest by adding and removing 1.5 x 2^23.
  const f32x4 n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const f32x4 r = x - n * 0.693359375f + n * 2.12194440e-4f;
  f32x4 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const i32x4 k = __builtin_convertvector(n, i32x4);
  const i32x4 k1 = k >> 1;
  const i32x4 k2 = k - k1;
  return p * reinterpret_cast<f32x4>((k1 + 127) << 23) * reinterpret_cast<f32x4>((k2 + 127) << 23);
}

// 1 / (1 + exp(-x)) from e = exp(-|x|), which cannot overflow.
inline f32x4 sigmoid(f32x4 x) {
  const f32x4 e = exp(-abs(x));
  const f32x4 r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// An odd polynomial near 0 (where 1 - e cancels), else (1 - e) / (1 + e) with e = exp(-2|x|).
inline f32x4 tanh(f32x4 x) {
  const f32x4 a = abs(x);
  const f32x4 z = x * x;
  f32x4 small = splat(-5.70498872745e-3f);
  small = small * z + 2.06390887954e-2f;
  small = small * z - 5.37397155531e-2f;
  small = small * z + 1.33314422036e-1f;
  small = small * z - 3.33332819422e-1f;
  small = small * z * x + x;
  const f32x4 e = exp(-2.0f * a);
  const f32x4 magnitude = (1.0f - e) / (1.0f + e);
  const f32x4 large = reinterpret_cast<f32x4>(reinterpret_cast<i32x4>(magnitude) |
                                              (reinterpret_cast<i32x4>(x) & (-0x7fffffff - 1)));
  return a < 0.625f ? small : large;
}

// erf(x) as x P(x^2) / Q(x^2) on [-4, 4] (Eigen's float erf), within 5e-7 absolute.
inline f32x4 erf(f32x4 x) {
  x = x < splat(-4.0f) ? splat(-4.0f) : x;
  x = x > splat(4.0f) ? splat(4.0f) : x;
  const f32x4 z = x * x;
  f32x4 p = z * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = z * p - 2.10102402082508e-06f;
  p = z * p - 5.69250639462346e-05f;
  p = z * p - 7.34990630326855e-04f;
  p = z * p - 2.95459980854025e-03f;
  p = z * p - 1.60960333262415e-02f;
  f32x4 q = z * -1.45660718464996e-05f - 2.13374055278905e-04f;
  q = z * q - 1.68282697438203e-03f;
  q = z * q - 7.37332916720468e-03f;
  q = z * q - 1.42647390514189e-02f;
  return x * p / q;
}

// y[i] = f(x[i]) four at a time (the tail through a zero-padded vector); y may be x.
template <class F>
void map(const float* x, float* y, size_t n, F&& f) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    f32x4 v;
    std::memcpy(&v, x + i, sizeof v);
    v = f(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    f32x4 v{};
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = f(v);
    std::memcpy(y + i, &v, (n - i) * sizeof(float));
  }
}

}  // namespace simd

}  // namespace footprint::runtime::kernels
