#include "float16.hpp"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define FOOTPRINT_F16C 1
#endif

namespace footprint::runtime::kernels {
namespace {

void halves_to_floats_scalar(const Float16* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
}

void floats_to_halves_scalar(const float* in, Float16* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = to_float16(in[i]);
}

void round_through_halves_scalar(float* v, size_t n) {
  for (size_t i = 0; i < n; ++i) v[i] = to_float(to_float16(v[i]));
}

#if defined(FOOTPRINT_F16C)
// F16C is CPUID leaf 1, ECX bit 29 (asked directly: not every compiler's __builtin_cpu_supports
// knows it).
bool has_f16c() {
  static const bool yes = [] {
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1U << 29)) != 0;
    return f16c && __builtin_cpu_supports("avx2");
  }();
  return yes;
}

// Eight at a time with F16C, which converts as IEEE does (exact widening; narrowing to nearest,
// ties to even, under the default MXCSR). Only NaNs differ from core's functions (F16C quiets a
// signalling NaN when widening and keeps payload bits when narrowing, where core keeps the
// pattern, and makes the one quiet NaN): a group of eight holding a NaN is converted by core's.
__attribute__((target("avx2,f16c"))) void halves_to_floats_f16c(const Float16* in, float* out,
                                                                size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      halves_to_floats_scalar(in + i, out + i, 8);
    } else {
      _mm256_storeu_ps(out + i, v);
    }
  }
  // The last few through a group of eight padded with zeros, which F16C converts as one.
  if (i < n) {
    alignas(16) Float16 part[8] = {};
    alignas(32) float wide[8];
    std::memcpy(part, in + i, (n - i) * sizeof(Float16));
    halves_to_floats_f16c(part, wide, 8);
    std::memcpy(out + i, wide, (n - i) * sizeof(float));
  }
}

__attribute__((target("avx2,f16c"))) void floats_to_halves_f16c(const float* in, Float16* out,
                                                                size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      floats_to_halves_scalar(in + i, out + i, 8);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                       _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
  }
  if (i < n) {
    alignas(32) float part[8] = {};
    alignas(16) Float16 narrow[8];
    std::memcpy(part, in + i, (n - i) * sizeof(float));
    floats_to_halves_f16c(part, narrow, 8);
    std::memcpy(out + i, narrow, (n - i) * sizeof(Float16));
  }
}

// Sixteen at a time where the CPU has AVX-512 (the same instructions' 512-bit forms, so the same
// bits and the same NaN rule); the last few through the eight-wide ones. Whole float16 models
// convert every convolution's input and output (through_float32.hpp): at eight a time with a
// compare and a mask move each, those took a fifth of MobileNetV3-Small float16's run.
bool has_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && has_f16c();
  }();
  return yes;
}

__attribute__((target("avx512f,avx2,f16c"))) void halves_to_floats_avx512(const Float16* in,
                                                                          float* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v =
        _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) {
      halves_to_floats_scalar(in + i, out + i, 16);
    } else {
      _mm512_storeu_ps(out + i, v);
    }
  }
  if (i < n) halves_to_floats_f16c(in + i, out + i, n - i);
}

__attribute__((target("avx512f,avx2,f16c"))) void floats_to_halves_avx512(const float* in,
                                                                          Float16* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(in + i);
    if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0) {
      floats_to_halves_scalar(in + i, out + i, 16);
    } else {
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(out + i),
          _mm512_maskz_cvtps_ph(0xFFFF, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
  }
  if (i < n) floats_to_halves_f16c(in + i, out + i, n - i);
}

// Both conversions in registers, sixteen at a time; a group holding a NaN through core's.
__attribute__((target("avx512f,avx2,f16c"))) void round_through_halves_avx512(float* v, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(v + i);
    if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) != 0) {
      round_through_halves_scalar(v + i, 16);
    } else {
      const __m256i h =
          _mm512_maskz_cvtps_ph(0xFFFF, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm512_storeu_ps(v + i, _mm512_maskz_cvtph_ps(0xFFFF, h));
    }
  }
  round_through_halves_scalar(v + i, n - i);
}
#endif

}  // namespace

void round_through_halves(float* v, size_t n) {
#if defined(FOOTPRINT_F16C)
  if (has_avx512()) return round_through_halves_avx512(v, n);
#endif
  round_through_halves_scalar(v, n);
}

void halves_to_floats(const Float16* in, float* out, size_t n) {
#if defined(FOOTPRINT_F16C)
  if (has_avx512()) return halves_to_floats_avx512(in, out, n);
  if (has_f16c()) return halves_to_floats_f16c(in, out, n);
#endif
  halves_to_floats_scalar(in, out, n);
}

void floats_to_halves(const float* in, Float16* out, size_t n) {
#if defined(FOOTPRINT_F16C)
  if (has_avx512()) return floats_to_halves_avx512(in, out, n);
  if (has_f16c()) return floats_to_halves_f16c(in, out, n);
#endif
  floats_to_halves_scalar(in, out, n);
}

}  // namespace footprint::runtime::kernels
