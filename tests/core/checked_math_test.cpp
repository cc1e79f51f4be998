#include "footprint/core/checked_math.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace footprint {
namespace {

constexpr uint64_t kMaxU = std::numeric_limits<uint64_t>::max();
constexpr int64_t kMaxI = std::numeric_limits<int64_t>::max();

TEST(CheckedMath, AddSubMulDetectWrapBothSigns) {
  EXPECT_EQ(checked_add<uint64_t>(kMaxU - 1, 1), kMaxU);
  EXPECT_EQ(checked_add<uint64_t>(kMaxU, 1), std::nullopt);
  EXPECT_EQ(checked_add<int64_t>(kMaxI, 1), std::nullopt);
  EXPECT_EQ(checked_sub<uint64_t>(0, 1), std::nullopt);
  EXPECT_EQ(checked_sub<int64_t>(-kMaxI, 2), std::nullopt);
  EXPECT_EQ(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 31), uint64_t{1} << 63);
  EXPECT_EQ(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32), std::nullopt);
  // The wrap in issue 20: 3 x 6148914691236517206 is 2 modulo 2^64.
  EXPECT_EQ(checked_mul<int64_t>(3, 6148914691236517206), std::nullopt);
}

TEST(CheckedMath, RoundUpToAlignment) {
  EXPECT_EQ(checked_round_up<uint64_t>(0, 64), 0u);
  EXPECT_EQ(checked_round_up<uint64_t>(1, 64), 64u);
  EXPECT_EQ(checked_round_up<uint64_t>(128, 64), 128u);
  EXPECT_EQ(checked_round_up<uint64_t>(kMaxU - 10, 64), std::nullopt);
  EXPECT_EQ(checked_round_up<int64_t>(-5, 4), -4);
  EXPECT_EQ(checked_round_up<int64_t>(7, 0), std::nullopt);
}

TEST(CheckedMath, ThrowingFormsNameWhatWasComputed) {
  EXPECT_EQ(add_or_throw<uint64_t>(2, 3, "x"), 5u);
  try {
    add_or_throw<uint64_t>(kMaxU, 30, "total peak at step 4");
    FAIL() << "no overflow reported";
  } catch (const SizeOverflow& e) {
    EXPECT_STREQ(e.what(), "total peak at step 4: 18446744073709551615 + 30 overflows uint64");
  }
  EXPECT_THROW(mul_or_throw<int64_t>(kMaxI, 2, "bytes of 'x'"), SizeOverflow);
  EXPECT_THROW(round_up_or_throw<uint64_t>(kMaxU, 64, "arena buffer"), Error);
}

}  // namespace
}  // namespace footprint
