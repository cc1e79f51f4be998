#include <gtest/gtest.h>

#include "footprint/core/dtype.hpp"
#include "footprint/core/shape.hpp"

namespace footprint {
namespace {

TEST(DType, CodesMatchOnnx) {
  EXPECT_EQ(static_cast<int>(DType::float32), 1);
  EXPECT_EQ(static_cast<int>(DType::int64), 7);
  EXPECT_EQ(static_cast<int>(DType::bfloat16), 16);
  EXPECT_EQ(static_cast<int>(DType::float4e2m1), 23);
  EXPECT_TRUE(is_known_dtype(23));
  EXPECT_FALSE(is_known_dtype(0));
  EXPECT_FALSE(is_known_dtype(24));
  EXPECT_FALSE(is_known_dtype(-1));
}

TEST(DType, StorageBytes) {
  EXPECT_EQ(dtype_storage_bytes(DType::float32, 10), 40u);
  EXPECT_EQ(dtype_storage_bytes(DType::boolean, 3), 3u);
  EXPECT_EQ(dtype_storage_bytes(DType::int4, 3), 2u) << "4-bit values pack two per byte";
  EXPECT_EQ(dtype_storage_bytes(DType::complex128, 2), 32u);
  EXPECT_FALSE(dtype_storage_bytes(DType::string, 2).has_value());
  EXPECT_FALSE(dtype_storage_bytes(DType::float64, UINT64_MAX / 4).has_value()) << "overflow";
  // Sizes up to uint64's limit, not an eighth of it (bits of 2^61 float32 values overflow).
  EXPECT_EQ(dtype_storage_bytes(DType::float32, uint64_t{1} << 61), uint64_t{1} << 63);
  EXPECT_FALSE(dtype_storage_bytes(DType::float32, uint64_t{1} << 62).has_value());
  EXPECT_EQ(dtype_storage_bytes(DType::int4, (uint64_t{1} << 62) + 1), (uint64_t{1} << 61) + 1);
}

TEST(DType, NamesRoundTrip) {
  for (int code = 1; code <= 23; ++code) {
    const auto t = static_cast<DType>(code);
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  }
  EXPECT_EQ(dtype_name(DType::float32), "float");
  EXPECT_FALSE(dtype_from_name("quaternion").has_value());
}

TEST(Shape, StaticAndSymbolic) {
  Shape s = Shape::of({1, 3, 224, 224});
  EXPECT_TRUE(s.is_static());
  EXPECT_EQ(s.numel(), 150528u);
  EXPECT_EQ(s.to_string(), "[1,3,224,224]");
  s.dims[0] = Dim::named("N");
  EXPECT_FALSE(s.is_static());
  EXPECT_FALSE(s.numel().has_value());
  EXPECT_EQ(s.to_string(), "[N,3,224,224]");
  EXPECT_EQ(Shape::unranked().to_string(), "?");
  EXPECT_EQ(Shape::of({}).numel(), 1u) << "a scalar has one element";
}

TEST(Shape, CheckedNumelRejectsOverflowAndNegatives) {
  const int64_t big[] = {INT64_MAX, 4};
  EXPECT_FALSE(checked_numel(big, 2).has_value());
  const int64_t neg[] = {2, -1};
  EXPECT_FALSE(checked_numel(neg, 2).has_value());
  const int64_t zero[] = {0, INT64_MAX};
  EXPECT_EQ(checked_numel(zero, 2), 0u);
}

}  // namespace
}  // namespace footprint
