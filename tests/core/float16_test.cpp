#include "footprint/core/float16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace footprint {
namespace {

// Independent oracles, in double arithmetic from the formats' definitions.
double half_value(uint16_t h) {
  const double sign = (h & 0x8000u) != 0 ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 31) return mantissa == 0 ? sign * INFINITY : NAN;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

// x rounded to the nearest representable value with `bits` fraction bits and normals from
// 2^lowest (ties to even through nearbyint in the default rounding mode).
double round_to_format(double x, int bits, int lowest) {
  if (x == 0 || !std::isfinite(x)) return x;
  int exponent = 0;
  std::frexp(x, &exponent);
  const double quantum = std::ldexp(1.0, std::max(exponent - 1, lowest) - bits);
  return std::nearbyint(x / quantum) * quantum;
}

bool is_nan_half(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

TEST(Float16, EveryHalfWidensExactlyAndRoundTrips) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const float f = float_from_half(h);
    if (is_nan_half(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << i;
      EXPECT_TRUE(is_nan_half(half_from_float(f))) << std::hex << i;
      EXPECT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), half_value(h)) << std::hex << i;
    EXPECT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << i;  // -0 stays -0
    ASSERT_EQ(half_from_float(f), h) << std::hex << i;
  }
}

TEST(Float16, NaNBecomesTheQuietNaNOfItsSign) {
  EXPECT_EQ(half_from_float(float_from_half(0x7e01)), 0x7e00);
  EXPECT_EQ(half_from_float(float_from_half(0xfe00)), 0xfe00);
  EXPECT_EQ(half_from_float(float_from_half(0x7c01)), 0x7e00);  // signalling: quiet now
  // A float NaN whose payload lies only in bits a half cannot hold.
  EXPECT_EQ(half_from_float(std::bit_cast<float>(0x7f800001u)), 0x7e00);
  EXPECT_EQ(half_from_float(std::bit_cast<float>(0xffffffffu)), 0xfe00);
}

TEST(Float16, InfinityOverflowAndSubnormals) {
  EXPECT_EQ(half_from_float(INFINITY), 0x7c00);
  EXPECT_EQ(half_from_float(-INFINITY), 0xfc00);
  EXPECT_EQ(half_from_float(65504.0f), 0x7bff);
  EXPECT_EQ(half_from_float(65519.996f), 0x7bff);  // below the midpoint to 65536
  EXPECT_EQ(half_from_float(65520.0f), 0x7c00);    // the midpoint: ties to even is infinity
  EXPECT_EQ(half_from_float(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(half_from_float(0x1p-24f), 0x0001);      // smallest subnormal
  EXPECT_EQ(half_from_float(0x1p-25f), 0x0000);      // half of it: a tie, to the even zero
  EXPECT_EQ(half_from_float(0x1.8p-25f), 0x0001);    // above the tie
  EXPECT_EQ(half_from_float(-0x1p-26f), 0x8000);     // underflow keeps the sign
  EXPECT_EQ(half_from_float(0x1.ffcp-15f), 0x0400);  // past the largest subnormal: a tie, to 2^-14
  EXPECT_EQ(half_from_float(0.1f), 0x2e66);
}

// Every pair of neighbouring halves: their midpoint goes to the even one, and anything nearer to
// one of them goes to that one.
TEST(Float16, NarrowingRoundsToNearestEven) {
  for (uint32_t i = 0; i < 0x7bff; ++i) {
    const auto lo = static_cast<uint16_t>(i);
    const auto hi = static_cast<uint16_t>(i + 1);
    const double a = half_value(lo);
    const double b = half_value(hi);
    const auto mid = static_cast<float>((a + b) / 2);  // exact: 12 significant bits
    const uint16_t even = (lo & 1u) == 0 ? lo : hi;
    ASSERT_EQ(half_from_float(mid), even) << std::hex << i;
    ASSERT_EQ(half_from_float(-mid), even | 0x8000u) << std::hex << i;
    ASSERT_EQ(half_from_float(std::nextafter(mid, 0.0f)), lo) << std::hex << i;
    ASSERT_EQ(half_from_float(std::nextafter(mid, INFINITY)), hi) << std::hex << i;
  }
}

// A sweep over the floats (every 4099th pattern, both signs, all exponents) against the oracle.
TEST(Float16, NarrowingMatchesTheDefinitionAcrossFloats) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(f)) continue;
    double want = round_to_format(f, 10, -14);
    if (std::fabs(want) > 65504) want = std::copysign(INFINITY, want);
    const double got = half_value(half_from_float(f));
    ASSERT_EQ(got, want) << std::hex << bits;
    ASSERT_EQ(std::signbit(got), std::signbit(f)) << std::hex << bits;
  }
}

TEST(BFloat16, EveryPatternWidensExactlyAndRoundTrips) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float f = float_from_bfloat16(b);
    EXPECT_EQ(std::bit_cast<uint32_t>(f), i << 16);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(float_from_bfloat16(bfloat16_from_float(f)))) << std::hex << i;
      continue;
    }
    ASSERT_EQ(bfloat16_from_float(f), b) << std::hex << i;
  }
}

TEST(BFloat16, NarrowingRoundsToNearestEven) {
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even below
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, even above
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x3f807fffu)), 0x3f80);
  EXPECT_EQ(bfloat16_from_float(std::numeric_limits<float>::max()), 0x7f80);  // to infinity
  EXPECT_EQ(bfloat16_from_float(-INFINITY), 0xff80);
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x00018000u)), 0x0002);  // subnormal tie
  EXPECT_EQ(bfloat16_from_float(-0.0f), 0x8000);
  // Signalling NaN with payload only in the dropped bits: still NaN, now quiet.
  EXPECT_EQ(bfloat16_from_float(std::bit_cast<float>(0x7f800001u)), 0x7fc0);
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(f) || std::isinf(f)) continue;
    const double want = round_to_format(f, 7, -126);
    const double got = float_from_bfloat16(bfloat16_from_float(f));
    if (std::fabs(want) > std::numeric_limits<float>::max()) {
      ASSERT_TRUE(std::isinf(got)) << std::hex << bits;
    } else {
      ASSERT_EQ(got, want) << std::hex << bits;
    }
  }
}

static_assert(half_from_float(1.0f) == 0x3c00 && float_from_half(0xc000) == -2.0f);
static_assert(bfloat16_from_float(1.0f) == 0x3f80 && float_from_bfloat16(0x4040) == 3.0f);

}  // namespace
}  // namespace footprint
