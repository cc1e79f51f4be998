#pragma once
// IEEE 754 binary16 ("half", ONNX float16) and bfloat16, as the 16-bit patterns ONNX stores,
// converted to and from float. One definition for every layer: value propagation, output checks
// and kernels must round the same way, or a predicted constant differs from the computed one.
//
//   const uint16_t h = half_from_float(0.1f);   // 0x2e66, the nearest half
//   const float back = float_from_half(h);      // 0.0999755859375f
//   const uint16_t b = bfloat16_from_float(back);
//
// Widening is exact (every half and bfloat16 is a float). Narrowing rounds to nearest, ties to
// even, as IEEE conversion and numpy's astype do; finite values past the largest half (65504) by
// half an ulp or more become infinity; NaN stays NaN and quiet, with its sign (to half: the one
// quiet NaN 0x7e00 of that sign; to bfloat16: the top payload bits kept).
#include <bit>
#include <cstdint>

namespace footprint {

constexpr float float_from_half(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) {
    // Rebias from 15 to 127.
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  // Zero or subnormal: mantissa * 2^-24, exact in float (a normal there).
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign != 0 ? -magnitude : magnitude;
}

constexpr uint16_t half_from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  // NaN: the quiet NaN of that sign. (A float payload mostly lies in bits a half drops, so
  // keeping only some of it would say nothing; the kernels have always written this one.)
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  // 65520 (0x477ff000) is halfway from 65504 to the next binade; 65504 is odd, so it rounds up.
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  // At most 2^-25, half of the smallest subnormal: a tie there goes to the even 0.
  if (magnitude <= 0x33000000u) return sign;
  uint32_t kept = 0;
  uint32_t dropped = 0;
  uint32_t tie = 0;
  if (magnitude >= 0x38800000u) {
    // Normal in half: rebias the exponent, keep 10 of the 23 mantissa bits.
    kept = (((magnitude >> 23) - 112) << 10) | ((magnitude >> 13) & 0x3ffu);
    dropped = magnitude & 0x1fffu;
    tie = 0x1000u;
  } else {
    // Subnormal in half: the float's significand (implicit bit made explicit) in units of 2^-24.
    const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - (magnitude >> 23);  // 14 (2^-15) ... 24 (2^-25)
    kept = significand >> shift;
    dropped = significand & ((1u << shift) - 1);
    tie = 1u << (shift - 1);
  }
  // A carry out of the mantissa moves to the next exponent (or from subnormal to normal), which
  // is the right encoding in both cases.
  if (dropped > tie || (dropped == tie && (kept & 1u) != 0)) ++kept;
  return static_cast<uint16_t>(sign | kept);
}

constexpr float float_from_bfloat16(uint16_t b) {
  return std::bit_cast<float>(uint32_t{b} << 16);
}

constexpr uint16_t bfloat16_from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t kept = x >> 16;
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(kept | 0x40u);
  const uint32_t dropped = x & 0xffffu;
  // Rounding up the largest finite values carries into the exponent and gives infinity.
  if (dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u) != 0)) ++kept;
  return static_cast<uint16_t>(kept);
}

}  // namespace footprint
