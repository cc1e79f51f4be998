// core's one table of element types: every layer reads a dtype's bits, kind, numpy counterpart
// and scalar conversions from it, so each row is specified here.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "footprint/core/dtype.hpp"
#include "footprint/core/float16.hpp"

namespace footprint {
namespace {

TEST(DTypeTraits, EveryKnownCodeHasItsRow) {
  size_t rows = 0;
  for (int32_t code = 1; is_known_dtype(code); ++code) {
    const auto t = static_cast<DType>(code);
    const DTypeTraits& r = dtype_traits(t);
    EXPECT_EQ(r.dtype, t) << code;
    EXPECT_EQ(r.name, dtype_name(t));
    EXPECT_EQ(dtype_from_name(r.name), t);
    EXPECT_EQ(r.bits, dtype_bits(t));
    // A scalar reader comes with a writer, and only for whole-byte elements.
    EXPECT_EQ(r.read_real != nullptr, r.write_real != nullptr) << r.name;
    if (r.read_real != nullptr) {
      EXPECT_EQ(r.bits % 8, 0) << r.name;
    }
    EXPECT_EQ(r.read_int != nullptr, r.is_integer() && !r.packed) << r.name;
    ++rows;
  }
  EXPECT_EQ(rows, 23u);
  EXPECT_EQ(dtype_traits(static_cast<DType>(99)).dtype, DType::undefined);
}

TEST(DTypeTraits, KindsPackingAndNumpy) {
  EXPECT_TRUE(dtype_traits(DType::bfloat16).is_float());
  EXPECT_EQ(dtype_traits(DType::bfloat16).numpy, 0) << "numpy has no bfloat16";
  EXPECT_EQ(dtype_traits(DType::float16).numpy, 'f');
  EXPECT_EQ(dtype_traits(DType::uint32).kind, DTypeKind::unsigned_int);
  EXPECT_EQ(dtype_traits(DType::int4).kind, DTypeKind::signed_int);
  EXPECT_TRUE(dtype_traits(DType::int4).packed);
  EXPECT_EQ(dtype_traits(DType::int4).read_int, nullptr) << "packed: no scalar reader";
  EXPECT_EQ(dtype_traits(DType::complex64).kind, DTypeKind::complex);
  EXPECT_EQ(dtype_traits(DType::string).bits, 0);
  EXPECT_TRUE(dtype_traits(DType::boolean).is_integer());
  EXPECT_EQ(dtype_traits(DType::boolean).numpy, 'b');
}

TEST(DTypeTraits, ScalarsReadAndWriteAsACastDoes) {
  alignas(8) unsigned char buf[8] = {};
  for (int32_t code = 1; is_known_dtype(code); ++code) {
    const DTypeTraits& r = dtype_traits(static_cast<DType>(code));
    if (r.write_real == nullptr) continue;
    r.write_real(1.0, buf);
    EXPECT_EQ(r.read_real(buf), 1.0) << r.name;
    if (r.read_int != nullptr) {
      EXPECT_EQ(r.read_int(buf), 1) << r.name;
    }
  }
  // 16-bit floats round to nearest even through float, as the Cast kernel does.
  const DTypeTraits& half = dtype_traits(DType::float16);
  half.write_real(0.1, buf);
  uint16_t bits = 0;
  std::memcpy(&bits, buf, 2);
  EXPECT_EQ(bits, half_from_float(0.1f));
  EXPECT_EQ(half.read_real(buf), static_cast<double>(float_from_half(bits)));
  // Integers read exactly, past what a double holds.
  const int64_t big = std::numeric_limits<int64_t>::max() - 1;
  std::memcpy(buf, &big, 8);
  EXPECT_EQ(dtype_traits(DType::int64).read_int(buf), big);
  const int8_t minus = -5;
  std::memcpy(buf, &minus, 1);
  EXPECT_EQ(dtype_traits(DType::int8).read_int(buf), -5);
  EXPECT_EQ(dtype_traits(DType::uint8).read_int(buf), 251);
}

TEST(DTypeTraits, IntegerRanges) {
  EXPECT_TRUE(dtype_traits(DType::int8).holds(-128));
  EXPECT_FALSE(dtype_traits(DType::int8).holds(128));
  EXPECT_TRUE(dtype_traits(DType::int32).holds(INT32_MAX));
  EXPECT_FALSE(dtype_traits(DType::int32).holds(int64_t{INT32_MAX} + 1));
  EXPECT_TRUE(dtype_traits(DType::int64).holds(INT64_MIN));
  EXPECT_FALSE(dtype_traits(DType::uint8).holds(-1));
  EXPECT_TRUE(dtype_traits(DType::uint32).holds(UINT32_MAX));
  EXPECT_FALSE(dtype_traits(DType::uint32).holds(int64_t{UINT32_MAX} + 1));
  EXPECT_TRUE(dtype_traits(DType::uint64).holds(INT64_MAX));
  EXPECT_FALSE(dtype_traits(DType::uint64).holds(-1));
  EXPECT_FALSE(dtype_traits(DType::boolean).holds(2));
  EXPECT_TRUE(dtype_traits(DType::float32).holds(INT64_MAX)) << "not an integer type";
}

TEST(DTypeSet, MembershipAndNames) {
  constexpr DTypeSet floats{DType::float32, DType::float64};
  static_assert(floats.contains(DType::float64) && !floats.contains(DType::float16));
  EXPECT_EQ(floats.to_string(), "float, double");
  EXPECT_EQ((floats | DTypeSet{DType::int8}).to_string(), "float, int8, double");
  EXPECT_EQ(floats.without(DType::float32).to_string(), "double");
  EXPECT_EQ((floats & DTypeSet{DType::float64, DType::int64}).to_string(), "double");
  EXPECT_TRUE(DTypeSet().empty());
  const DTypeSet whole = DTypeSet::whole_bytes();
  EXPECT_TRUE(whole.contains(DType::complex128));
  EXPECT_TRUE(whole.contains(DType::float8e5m2));
  EXPECT_FALSE(whole.contains(DType::int4));
  EXPECT_FALSE(whole.contains(DType::string));
  EXPECT_TRUE(DTypeSet::all().contains(DType::string));
  EXPECT_FALSE(DTypeSet::all().contains(DType::undefined));
}

}  // namespace
}  // namespace footprint
