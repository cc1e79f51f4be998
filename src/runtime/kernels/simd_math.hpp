#pragma once
// Vectorised float math: exp, sigmoid, tanh and erf on a vector of floats, at the CPU's widest.
//
//   simd::map(x, y, n, [](auto v) { return simd::exp(v); });
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {

//
// exp, sigmoid, tanh and erf on GCC vectors: the compiler does not vectorise loops that call
// libm, and these ops dominate activations (SiLU is half of EfficientNet's time on four lanes).
// Each function is a template over the vector, so one text serves 4 lanes (the SSE2 baseline),
// 8 (AVX2) and 16 (AVX-512): map() runs the widest the CPU has, compiled for it. Within about
// 2 ulp of libm (Cephes' expf and tanhf); NaN propagates, overflow gives infinity.
namespace simd {

using f32x4 = float __attribute__((vector_size(16)));
using f32x8 = float __attribute__((vector_size(32)));
using f32x16 = float __attribute__((vector_size(64)));
// The lane-wise integers of a float vector: what comparing two of them gives.
template <class V>
using ints_of = decltype(V{} < V{});

template <class V>
V splat(float v) {
  return V{} + v;
}

template <class V>
V abs(V x) {
  return reinterpret_cast<V>(reinterpret_cast<ints_of<V>>(x) & 0x7fffffff);
}

// x = n ln2 + r; exp(r) by a polynomial; 2^n built in the exponent bits as two factors, so that
// n = 128 still reaches infinity and n = -150 zero.
template <class V>
V exp(V x) {
  x = x < splat<V>(-104.0f) ? splat<V>(-104.0f) : x;
  x = x > splat<V>(88.8f) ? splat<V>(88.8f) : x;
  // x / ln2 rounded to nearest by adding and removing 1.5 x 2^23.
  const V n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const V r = x - n * 0.693359375f + n * 2.12194440e-4f;
  V p = splat<V>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  using I = ints_of<V>;
  const I k = __builtin_convertvector(n, I);
  const I k1 = k >> 1;
  const I k2 = k - k1;
  return p * reinterpret_cast<V>((k1 + 127) << 23) * reinterpret_cast<V>((k2 + 127) << 23);
}

// 1 / (1 + exp(-x)) from e = exp(-|x|), which cannot overflow.
template <class V>
V sigmoid(V x) {
  const V e = exp(-abs(x));
  const V r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// An odd polynomial near 0 (where 1 - e cancels), else (1 - e) / (1 + e) with e = exp(-2|x|).
template <class V>
V tanh(V x) {
  using I = ints_of<V>;
  const V a = abs(x);
  const V z = x * x;
  V small = splat<V>(-5.70498872745e-3f);
  small = small * z + 2.06390887954e-2f;
  small = small * z - 5.37397155531e-2f;
  small = small * z + 1.33314422036e-1f;
  small = small * z - 3.33332819422e-1f;
  small = small * z * x + x;
  const V e = exp(-2.0f * a);
  const V magnitude = (1.0f - e) / (1.0f + e);
  const V large = reinterpret_cast<V>(reinterpret_cast<I>(magnitude) |
                                      (reinterpret_cast<I>(x) & (-0x7fffffff - 1)));
  return a < 0.625f ? small : large;
}

// erf(x) as x P(x^2) / Q(x^2) on [-4, 4] (Eigen's float erf), within 5e-7 absolute.
template <class V>
V erf(V x) {
  x = x < splat<V>(-4.0f) ? splat<V>(-4.0f) : x;
  x = x > splat<V>(4.0f) ? splat<V>(4.0f) : x;
  const V z = x * x;
  V p = z * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = z * p - 2.10102402082508e-06f;
  p = z * p - 5.69250639462346e-05f;
  p = z * p - 7.34990630326855e-04f;
  p = z * p - 2.95459980854025e-03f;
  p = z * p - 1.60960333262415e-02f;
  V q = z * -1.45660718464996e-05f - 2.13374055278905e-04f;
  q = z * q - 1.68282697438203e-03f;
  q = z * q - 7.37332916720468e-03f;
  q = z * q - 1.42647390514189e-02f;
  return x * p / q;
}

// y[i] = f(x[i]) on vectors of V (the tail through a zero-padded vector); y may be x.
template <class V, class F>
void map_as(const float* x, float* y, size_t n, const F& f) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v = f(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    V v{};
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = f(v);
    std::memcpy(y + i, &v, (n - i) * sizeof(float));
  }
}

// body(V{}) with V the widest vector the CPU has, compiled for that instruction set (the body
// is inlined into each copy).
template <class F>
void with_widest(const F& body) {
#if defined(FOOTPRINT_WIDE_VECTORS)
  switch (wide::host_isa()) {
    case wide::Isa::avx512:
      return wide::on_avx512([&] { body(f32x16{}); });
    case wide::Isa::avx2:
      return wide::on_avx2([&] { body(f32x8{}); });
    case wide::Isa::baseline:
      break;
  }
#endif
  body(f32x4{});
}

// map_as at the widest vector the CPU has; f is generic over the vector (`[](auto v)`).
template <class F>
void map(const float* x, float* y, size_t n, const F& f) {
  with_widest([&](auto tag) { map_as<decltype(tag)>(x, y, n, f); });
}

// The largest of x[0, n) (n > 0), a vector at a time; NaNs are passed over as `x > m` does.
template <class V>
float max_as(const float* x, size_t n) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  float m = x[0];
  size_t i = 0;
  if (n >= lanes) {
    V mv = splat<V>(m);
    for (; i + lanes <= n; i += lanes) {
      V v;
      std::memcpy(&v, x + i, sizeof v);
      mv = v > mv ? v : mv;
    }
    for (size_t l = 0; l < lanes; ++l) m = mv[l] > m ? mv[l] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// y[i] = exp(x[i] - m) for i < n, returning their sum (lanes summed separately, then together).
template <class V>
float exp_sum_as(const float* x, float* y, size_t n, float m) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  V acc{};
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v = exp(v - m);
    std::memcpy(y + i, &v, sizeof v);
    acc += v;
  }
  float sum = 0;
  for (size_t l = 0; l < lanes; ++l) sum += acc[l];
  if (i < n) {
    V v{};
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = exp(v - m);
    std::memcpy(y + i, &v, (n - i) * sizeof(float));
    for (size_t l = 0; l < n - i; ++l) sum += v[l];
  }
  return sum;
}

// The sum of x[0, n) and, given its mean, the sum of squared deviations: lanes summed separately,
// then together (two passes, so the variance does not cancel as sum(x^2) - n*mean^2 would).
template <class V>
float sum_as(const float* x, size_t n) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  V acc{};
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    acc += v;
  }
  float sum = 0;
  for (size_t l = 0; l < lanes; ++l) sum += acc[l];
  for (; i < n; ++i) sum += x[i];
  return sum;
}

template <class V>
float squared_deviation_sum_as(const float* x, size_t n, float mean) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  V acc{};
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v -= mean;
    acc += v * v;
  }
  float sum = 0;
  for (size_t l = 0; l < lanes; ++l) sum += acc[l];
  for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  return sum;
}

}  // namespace simd

}  // namespace footprint::runtime::kernels
