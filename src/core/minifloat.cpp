#include "footprint/core/minifloat.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace footprint {
namespace {

struct Format {
  int exponent_bits = 4;
  int mantissa_bits = 3;
  int bias = 7;
  bool ieee = false;  // e5m2: infinities and NaNs at the top exponent
  bool fnuz = false;  // one NaN (0x80), no negative zero
  double max = 448;
};

Format format_of(DType t) {
  switch (t) {
    case DType::float8e4m3fnuz:
      return {4, 3, 8, false, true, 240};
    case DType::float8e5m2:
      return {5, 2, 15, true, false, 57344};
    case DType::float8e5m2fnuz:
      return {5, 2, 16, false, true, 57344};
    default:
      return {};
  }
}

uint8_t nan_of(const Format& f, bool negative) {
  if (f.fnuz) return 0x80;
  const uint8_t sign = negative ? 0x80 : 0;
  return static_cast<uint8_t>(sign | 0x7F);  // e4m3fn's only NaN, e5m2's quiet one
}

}  // namespace

bool is_float8(DType t) {
  return t == DType::float8e4m3fn || t == DType::float8e4m3fnuz || t == DType::float8e5m2 ||
         t == DType::float8e5m2fnuz;
}

float decode_float8(DType t, uint8_t bits) {
  const Format f = format_of(t);
  if (f.fnuz && bits == 0x80) return std::numeric_limits<float>::quiet_NaN();
  const bool negative = (bits & 0x80) != 0;
  const int exponent = (bits >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  const int top = (1 << f.exponent_bits) - 1;
  if (f.ieee && exponent == top) {
    if (mantissa != 0) return std::numeric_limits<float>::quiet_NaN();
    return negative ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity();
  }
  if (!f.ieee && !f.fnuz && exponent == top && mantissa == (1 << f.mantissa_bits) - 1) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  const double value = exponent == 0
                           ? std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits)
                           : std::ldexp(static_cast<double>(mantissa + (1 << f.mantissa_bits)),
                                        exponent - f.bias - f.mantissa_bits);
  return static_cast<float>(negative ? -value : value);
}

uint8_t encode_float8(DType t, double v, bool saturate) {
  const Format f = format_of(t);
  const bool negative = std::signbit(v);
  if (std::isnan(v)) return nan_of(f, negative);
  const uint8_t sign = negative && !f.fnuz ? 0x80 : 0;
  const double a = std::fabs(v);
  const int max_exponent = static_cast<int>(std::ilogb(f.max));
  const auto max_bits = static_cast<uint8_t>(
      ((max_exponent + f.bias) << f.mantissa_bits) |
      static_cast<int>(std::ldexp(f.max, f.mantissa_bits - max_exponent) - (1 << f.mantissa_bits)));
  const auto overflow = [&]() -> uint8_t {
    if (saturate) return static_cast<uint8_t>((negative ? 0x80 : 0) | max_bits);
    if (f.ieee) return static_cast<uint8_t>(sign | 0x7C);
    return nan_of(f, negative);
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return sign;
  // The step between representable values around a: a normal number's, or the subnormals'.
  const int min_normal = 1 - f.bias;
  const int e = std::max(static_cast<int>(std::ilogb(a)), min_normal);
  const double step = std::ldexp(1.0, e - f.mantissa_bits);
  const double rounded = std::nearbyint(a / step) * step;  // half to even
  if (rounded > f.max) return overflow();
  if (rounded == 0) return sign;
  const int re = std::max(static_cast<int>(std::ilogb(rounded)), min_normal);
  const auto units = static_cast<int>(std::ldexp(rounded, f.mantissa_bits - re));
  const bool normal = units >= (1 << f.mantissa_bits);
  const int exponent_field = normal ? re + f.bias : 0;
  const int mantissa = normal ? units - (1 << f.mantissa_bits) : units;
  const auto bits = static_cast<uint8_t>((exponent_field << f.mantissa_bits) | mantissa);
  if (f.fnuz && bits == 0) return 0;  // no negative zero
  return static_cast<uint8_t>((negative ? 0x80 : 0) | bits);
}

float decode_float4e2m1(uint8_t nibble) {
  const bool negative = (nibble & 0x8) != 0;
  const int exponent = (nibble >> 1) & 0x3;
  const int mantissa = nibble & 0x1;
  const double value =
      exponent == 0 ? 0.5 * mantissa : std::ldexp(1.0 + 0.5 * mantissa, exponent - 1);
  return static_cast<float>(negative ? -value : value);
}

uint8_t encode_float4e2m1(double v) {
  if (std::isnan(v)) return 0x8;
  const uint8_t sign = std::signbit(v) ? 0x8 : 0;
  const double a = std::fabs(v);
  if (a >= 6) return static_cast<uint8_t>(sign | 0x7);
  // The step around a: 0.5 below 2 (the subnormals' and exponent 1's), then the exponent's.
  const int e = std::max(static_cast<int>(std::ilogb(std::max(a, 1.0))), 0);
  const double step = std::ldexp(0.5, e);
  const double rounded = std::min(std::nearbyint(a / step) * step, 6.0);
  for (uint8_t code = 0; code < 8; ++code) {
    if (decode_float4e2m1(code) == rounded) return static_cast<uint8_t>(sign | code);
  }
  return static_cast<uint8_t>(sign | 0x7);  // unreachable: every rounded value is a code's
}

}  // namespace footprint
