// The small floats (8-bit and float4e2m1): every code decodes to the value its format gives and
// encodes back to itself, ties round to even, and values past the largest saturate or overflow as
// Cast's `saturate` says; the dtype table reads and writes them through the same functions.
#include "footprint/core/minifloat.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "footprint/core/dtype.hpp"

namespace footprint {
namespace {

constexpr DType kAll[] = {DType::float8e4m3fn, DType::float8e4m3fnuz, DType::float8e5m2,
                          DType::float8e5m2fnuz};

TEST(Float8, EveryCodeRoundTrips) {
  for (const DType t : kAll) {
    int nans = 0;
    for (int code = 0; code < 256; ++code) {
      const auto bits = static_cast<uint8_t>(code);
      const float v = decode_float8(t, bits);
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      EXPECT_EQ(encode_float8(t, v, false), bits) << dtype_name(t) << " code " << code;
    }
    // e4m3fn: S.1111.111; e5m2: S.11111.(01, 10, 11); the fnuz types: 0x80 alone.
    const int want = t == DType::float8e4m3fn ? 2 : t == DType::float8e5m2 ? 6 : 1;
    EXPECT_EQ(nans, want) << dtype_name(t);
  }
}

TEST(Float8, KnownValuesTiesAndRanges) {
  EXPECT_EQ(decode_float8(DType::float8e4m3fn, 0x7E), 448.0F);
  EXPECT_EQ(decode_float8(DType::float8e4m3fnuz, 0x7F), 240.0F);
  EXPECT_EQ(decode_float8(DType::float8e5m2, 0x7B), 57344.0F);
  EXPECT_EQ(decode_float8(DType::float8e5m2, 0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(decode_float8(DType::float8e4m3fn, 0x01), std::ldexp(1.0F, -9));  // the least
  EXPECT_EQ(decode_float8(DType::float8e4m3fnuz, 0x01), std::ldexp(1.0F, -10));
  // 1.0625 lies halfway between 1 and 1.125 (e4m3's step at 1 is 1/8): to even, 1.
  EXPECT_EQ(encode_float8(DType::float8e4m3fn, 1.0625, true), 0x38);
  EXPECT_EQ(encode_float8(DType::float8e4m3fn, 1.1875, true), 0x3A);  // 1.1875 -> 1.25
  // Past the largest: saturate, or NaN (e4m3) / infinity (e5m2).
  EXPECT_EQ(encode_float8(DType::float8e4m3fn, 500, true), 0x7E);
  EXPECT_EQ(encode_float8(DType::float8e4m3fn, -500, true), 0xFE);
  EXPECT_EQ(encode_float8(DType::float8e4m3fn, 500, false), 0x7F);
  EXPECT_EQ(encode_float8(DType::float8e4m3fn, 460, false), 0x7E);  // rounds down to 448
  EXPECT_EQ(encode_float8(DType::float8e5m2, 1e6, false), 0x7C);
  EXPECT_EQ(encode_float8(DType::float8e5m2, -INFINITY, true), 0xFB);
  EXPECT_EQ(encode_float8(DType::float8e4m3fnuz, 1e6, false), 0x80);
  // No negative zero in the fnuz types; e4m3fn keeps it.
  EXPECT_EQ(encode_float8(DType::float8e4m3fnuz, -0.0, true), 0x00);
  EXPECT_EQ(encode_float8(DType::float8e4m3fn, -0.0, true), 0x80);
  EXPECT_EQ(encode_float8(DType::float8e5m2fnuz, -1e-30, true), 0x00);  // rounds to zero
}

TEST(Float4e2m1, EveryNibbleRoundTripsTiesGoToEvenAndLargeValuesSaturate) {
  const float values[8] = {0, 0.5F, 1, 1.5F, 2, 3, 4, 6};
  for (uint8_t code = 0; code < 16; ++code) {
    const float v = decode_float4e2m1(code);
    EXPECT_EQ(std::fabs(v), values[code & 7]) << int{code};
    EXPECT_EQ(std::signbit(v), (code & 8) != 0) << int{code};
    EXPECT_EQ(encode_float4e2m1(v), code) << int{code};
  }
  EXPECT_EQ(encode_float4e2m1(0.25), 0x0);  // a tie between 0 and 0.5: to 0 (even)
  EXPECT_EQ(encode_float4e2m1(1.75), 0x4);  // between 1.5 and 2: to 2
  EXPECT_EQ(encode_float4e2m1(-3.5), 0xE);  // between 3 and 4: to -4
  EXPECT_EQ(encode_float4e2m1(5.0), 0x6);   // between 4 and 6: to 4
  EXPECT_EQ(encode_float4e2m1(1e6), 0x7);
  EXPECT_EQ(encode_float4e2m1(-INFINITY), 0xF);
  EXPECT_EQ(encode_float4e2m1(NAN), 0x8);  // ml_dtypes' NaN: negative zero
}

TEST(Float8, TheDtypeTableReadsAndWritesThem) {
  for (const DType t : kAll) {
    const DTypeTraits& tr = dtype_traits(t);
    ASSERT_NE(tr.read_real, nullptr) << dtype_name(t);
    ASSERT_NE(tr.write_real, nullptr) << dtype_name(t);
    uint8_t b = 0;
    tr.write_real(-3.5, &b);
    EXPECT_EQ(tr.read_real(&b), -3.5) << dtype_name(t);
  }
}

}  // namespace
}  // namespace footprint
