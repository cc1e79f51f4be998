#pragma once
// 16-bit floating point storage types (IEEE half and bfloat16), converted through float for
// arithmetic.
//
//   const float f = to_float(t.as<const Float16>()[i]);
//   out.as<BFloat16>()[i] = to_bfloat16(f);
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "footprint/core/dtype.hpp"
#include "footprint/core/float16.hpp"

namespace footprint::runtime::kernels {

struct Float16 {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

// The conversions are core's (footprint/core/float16.hpp), the ones value propagation and the
// output checks use, so a folded Cast and a run one round alike.
inline float to_float(Float16 h) {
  return float_from_half(h.bits);
}
inline Float16 to_float16(float f) {
  return {half_from_float(f)};
}
inline float to_float(BFloat16 b) {
  return float_from_bfloat16(b.bits);
}
inline BFloat16 to_bfloat16(float f) {
  return {bfloat16_from_float(f)};
}

template <class T>
constexpr bool is_16bit_float = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// The same for a tensor's dtype.
inline bool is_16bit(DType t) {
  return t == DType::float16 || t == DType::bfloat16;
}

// The type a kernel computes T in: float for the 16-bit floats (their arithmetic, sums included,
// runs in float registers and rounds once on store), T itself otherwise.
template <class T>
using ComputeType = std::conditional_t<is_16bit_float<T>, float, T>;

// A 16-bit float type from float (H is Float16 or BFloat16).
template <class H>
H from_float(float f) {
  if constexpr (std::is_same_v<H, Float16>) {
    return to_float16(f);
  } else {
    return to_bfloat16(f);
  }
}

// An element as the kernel computes it, and back to storage (rounded to nearest even for the
// 16-bit floats; a plain cast otherwise).
template <class T>
ComputeType<T> widen(T v) {
  if constexpr (is_16bit_float<T>) {
    return to_float(v);
  } else {
    return v;
  }
}
template <class T, class C>
T narrow(C v) {
  if constexpr (is_16bit_float<T>) {
    return from_float<T>(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// n elements at once, as to_float and to_float16 convert each (the same bits, NaNs included),
// with the CPU's conversion instructions where it has them (F16C): what the kernels that widen
// whole rows use.
void halves_to_floats(const Float16* in, float* out, size_t n);
void floats_to_halves(const float* in, Float16* out, size_t n);

// Each of n floats rounded to the nearest half and back, in place (the same bits as
// to_float(to_float16(x))).
void round_through_halves(float* v, size_t n);

// A row of H (Float16 or BFloat16) as floats and back.
template <class H>
void widen_row(const H* in, float* out, size_t n) {
  if constexpr (std::is_same_v<H, Float16>) {
    halves_to_floats(in, out, n);
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
  }
}
template <class H>
void narrow_row(const float* in, H* out, size_t n) {
  if constexpr (std::is_same_v<H, Float16>) {
    floats_to_halves(in, out, n);
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = to_bfloat16(in[i]);
  }
}

// Rounds n floats in place to the values H (Float16 or BFloat16) holds, nearest even: what a
// kernel computing several nodes in float stores between them, where each node stored H.
template <class H>
void round_through(float* v, size_t n) {
  if constexpr (std::is_same_v<H, Float16>) {
    round_through_halves(v, n);
  } else {
    for (size_t i = 0; i < n; ++i) v[i] = to_float(to_bfloat16(v[i]));
  }
}

// Orders 16-bit floats as the values they hold (a max pool's or a max reduction's compare).
inline bool operator<(Float16 a, Float16 b) {
  return to_float(a) < to_float(b);
}
inline bool operator>(Float16 a, Float16 b) {
  return to_float(a) > to_float(b);
}
inline bool operator<(BFloat16 a, BFloat16 b) {
  return to_float(a) < to_float(b);
}
inline bool operator>(BFloat16 a, BFloat16 b) {
  return to_float(a) > to_float(b);
}

}  // namespace footprint::runtime::kernels
