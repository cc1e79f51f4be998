#pragma once
// 16-bit floating point storage types (IEEE half and bfloat16), converted through float for
// arithmetic.
//
//   const float f = to_float(t.as<const Float16>()[i]);
//   out.as<BFloat16>()[i] = to_bfloat16(f);
#include <bit>
#include <cstdint>
#include <cstring>

namespace footprint::runtime::kernels {

struct Float16 {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

inline float to_float(Float16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // Subnormal: normalise the mantissa.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(112 - e) << 23) |
                              ((mant & 0x3ffu) << 13));
}

// Round to nearest even, as IEEE conversion does; overflow gives infinity.
inline Float16 to_float16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (kept quiet)
    return {static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u))};
  }
  if (abs >= 0x477ff000u) return {static_cast<uint16_t>(sign | 0x7c00u)};  // rounds past 65504
  if (abs < 0x38800000u) {
    // Subnormal or zero in half: scale so the float adder rounds to nearest even for us.
    const float magic = std::bit_cast<float>(0x3f000000u);  // 0.5: 2^-1 aligns 2^-24 ulps
    const float r = std::bit_cast<float>(abs) + magic;
    return {static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(r) - 0x3f000000u))};
  }
  const uint32_t odd = (abs >> 13) & 1u;
  const uint32_t rounded = abs + 0xc8000fffu + odd;  // rebias exponent (-112 << 23) and round
  return {static_cast<uint16_t>(sign | (rounded >> 13))};
}

inline float to_float(BFloat16 b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16);
}

inline BFloat16 to_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((x >> 16) | 0x40u)};  // NaN
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);  // nearest even
  return {static_cast<uint16_t>(rounded >> 16)};
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
