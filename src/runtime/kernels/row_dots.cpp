#include "row_dots.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "simd_math.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define FOOTPRINT_ROW_DOTS_AVX512 1
#endif

namespace footprint::runtime::kernels {
namespace {

// Rows summed together: four sums in flight hide the multiply-add's latency.
constexpr size_t kRowsAtOnce = 4;

template <class W>
float widened(W v) {
  if constexpr (std::is_same_v<W, float>) {
    return v;
  } else {
    return to_float(v);
  }
}

// A vector V of W's elements at p, as floats.
template <class V, class W>
V load_as(const W* p) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  V v;
  if constexpr (std::is_same_v<W, float>) {
    std::memcpy(&v, p, sizeof v);
  } else {
    std::array<float, lanes> wide{};
    for (size_t l = 0; l < lanes; ++l) wide[l] = widened(p[l]);
    std::memcpy(&v, wide.data(), sizeof v);
  }
  return v;
}

// Rows [i, i + N) summed together, at V's lanes.
template <size_t N, class V, class W>
void rows_as(const W* w, size_t stride, const float* x, float* y, size_t cols, size_t i) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  const size_t whole = cols - cols % lanes;
  std::array<V, N> acc{};
  for (size_t k = 0; k < whole; k += lanes) {
    V v;
    std::memcpy(&v, x + k, sizeof v);
    for (size_t r = 0; r < N; ++r) acc[r] += load_as<V>(w + (i + r) * stride + k) * v;
  }
  for (size_t r = 0; r < N; ++r) {
    const W* row = w + (i + r) * stride;
    float sum = 0;
    for (size_t l = 0; l < lanes; ++l) sum += acc[r][l];
    for (size_t k = whole; k < cols; ++k) sum += widened(row[k]) * x[k];
    y[i + r] = sum;
  }
}

// The portable form (vector extensions at the widest lanes with_widest gives), where AVX-512 or
// F16C is missing.
template <class W>
void row_dots_any(const W* w, size_t stride, const float* x, float* y, size_t cols, size_t rows) {
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    size_t i = 0;
    for (; i + kRowsAtOnce <= rows; i += kRowsAtOnce) {
      rows_as<kRowsAtOnce, V>(w, stride, x, y, cols, i);
    }
    for (; i < rows; ++i) rows_as<1, V>(w, stride, x, y, cols, i);
  });
}

#if defined(FOOTPRINT_ROW_DOTS_AVX512)
__attribute__((target("avx512f,avx2,f16c,fma"))) inline __m512 load16(const float* p) {
  return _mm512_loadu_ps(p);
}
__attribute__((target("avx512f,avx2,f16c,fma"))) inline __m512 load16(const Float16* p) {
  // The masked forms: GCC 12 warns that the plain ones read an undefined register.
  return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
__attribute__((target("avx512f,avx2,f16c,fma"))) inline __m512 load16(const BFloat16* p) {
  const __m512i wide =
      _mm512_maskz_cvtepu16_epi32(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, wide, 16));
}

// A row's sum: the lanes first to last, then the columns past the last whole vector.
template <class H>
__attribute__((target("avx512f,avx2,f16c,fma"))) float finish(__m512 acc, const H* row,
                                                              const float* x, size_t whole,
                                                              size_t cols) {
  alignas(64) std::array<float, 16> part;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  _mm512_store_ps(part.data(), acc);
  float sum = 0;
  for (const float p : part) sum += p;
  for (size_t k = whole; k < cols; ++k) sum = std::fma(widened(row[k]), x[k], sum);
  return sum;
}

// Sixteen lanes, the 16-bit weights widened by the load (vcvtph2ps for float16, a shift for
// bfloat16), float weights loaded as they are: one code for the three, so a 16-bit row sums as
// its float copy does.
template <class H>
__attribute__((target("avx512f,avx2,f16c,fma"))) void row_dots_avx512(const H* w, size_t stride,
                                                                      const float* x, float* y,
                                                                      size_t cols, size_t rows) {
  constexpr size_t lanes = 16;
  const size_t whole = cols - cols % lanes;
  size_t i = 0;
  for (; i + kRowsAtOnce <= rows; i += kRowsAtOnce) {
    const H* r0 = w + i * stride;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t k = 0; k < whole; k += lanes) {
      const __m512 v = _mm512_loadu_ps(x + k);
      a0 = _mm512_fmadd_ps(load16(r0 + k), v, a0);
      a1 = _mm512_fmadd_ps(load16(r0 + stride + k), v, a1);
      a2 = _mm512_fmadd_ps(load16(r0 + 2 * stride + k), v, a2);
      a3 = _mm512_fmadd_ps(load16(r0 + 3 * stride + k), v, a3);
    }
    y[i] = finish(a0, r0, x, whole, cols);
    y[i + 1] = finish(a1, r0 + stride, x, whole, cols);
    y[i + 2] = finish(a2, r0 + 2 * stride, x, whole, cols);
    y[i + 3] = finish(a3, r0 + 3 * stride, x, whole, cols);
  }
  for (; i < rows; ++i) {
    const H* row = w + i * stride;
    __m512 a = _mm512_setzero_ps();
    for (size_t k = 0; k < whole; k += lanes) {
      a = _mm512_fmadd_ps(load16(row + k), _mm512_loadu_ps(x + k), a);
    }
    y[i] = finish(a, row, x, whole, cols);
  }
}

bool avx512_with_f16c() {
  static const bool yes = [] {
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    // F16C is CPUID leaf 1, ECX bit 29 (as float16.cpp asks it).
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1U << 29)) != 0;
    return f16c && __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}
#endif

template <class W>
void row_dots_widest(const W* w, size_t stride, const float* x, float* y, size_t cols,
                     size_t rows) {
#if defined(FOOTPRINT_ROW_DOTS_AVX512)
  if (avx512_with_f16c()) return row_dots_avx512(w, stride, x, y, cols, rows);
#endif
  row_dots_any(w, stride, x, y, cols, rows);
}

}  // namespace

void row_dots(const float* w, size_t stride, const float* x, float* y, size_t cols, size_t rows) {
  row_dots_widest(w, stride, x, y, cols, rows);
}

void row_dots(const Float16* w, size_t stride, const float* x, float* y, size_t cols, size_t rows) {
  row_dots_widest(w, stride, x, y, cols, rows);
}

void row_dots(const BFloat16* w, size_t stride, const float* x, float* y, size_t cols,
              size_t rows) {
  row_dots_widest(w, stride, x, y, cols, rows);
}

}  // namespace footprint::runtime::kernels
