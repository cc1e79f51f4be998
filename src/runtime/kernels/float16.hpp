#pragma once
// 16-bit floating point storage types (IEEE half and bfloat16), converted through float for
// arithmetic.
//
//   const float f = to_float(t.as<const Float16>()[i]);
//   out.as<BFloat16>()[i] = to_bfloat16(f);
#include <cstdint>
#include <type_traits>

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

// A 16-bit float type from float (H is Float16 or BFloat16).
template <class H>
H from_float(float f) {
  if constexpr (std::is_same_v<H, Float16>) {
    return to_float16(f);
  } else {
    return to_bfloat16(f);
  }
}

}  // namespace footprint::runtime::kernels
