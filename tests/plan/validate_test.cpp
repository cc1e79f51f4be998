// The validator: it must catch every way a plan can be wrong, and accept what is right.
#include <gtest/gtest.h>

#include "footprint/core/error.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "plan_test_support.hpp"

namespace footprint::plan {
namespace {

using testing::buffer;

std::string violation(const std::vector<Buffer>& buffers, const std::vector<int64_t>& offsets) {
  const auto v = find_violation(buffers, offsets);
  return v.value_or("");
}

TEST(Validate, AcceptsDisjointPlans) {
  const std::vector<Buffer> b = {buffer(0, 2, 10), buffer(1, 3, 10), buffer(2, 4, 10)};
  EXPECT_EQ(violation(b, {0, 10, 0}), "");  // the first and last never meet in time
  EXPECT_EQ(violation(b, {10, 0, 10}), "");
  EXPECT_NO_THROW(validate_plan(b, std::vector<int64_t>{0, 10, 0}));
}

TEST(Validate, CatchesOverlapsInTimeAndSpace) {
  const std::vector<Buffer> b = {buffer(0, 2, 10), buffer(1, 3, 10), buffer(2, 4, 10)};
  EXPECT_NE(violation(b, {0, 5, 20}), "");   // [0,10) and [5,15) live together at 1
  EXPECT_NE(violation(b, {0, 0, 20}), "");   // the same offset
  EXPECT_NE(violation(b, {5, 0, 20}), "");   // the second below the first
  EXPECT_NE(violation(b, {0, 10, 19}), "");  // the last meets the second's [10,20)
  const std::string v = violation(b, {0, 5, 20});
  EXPECT_NE(v.find(b[0].id), std::string::npos) << v;
  EXPECT_NE(v.find(b[1].id), std::string::npos) << v;
  EXPECT_THROW(validate_plan(b, std::vector<int64_t>{0, 5, 20}), Error);
}

TEST(Validate, HalfOpenLifetimesThatTouchMayShare) {
  const std::vector<Buffer> b = {buffer(0, 5, 64), buffer(5, 9, 64)};
  EXPECT_EQ(violation(b, {0, 0}), "");
  const std::vector<Buffer> c = {buffer(0, 6, 64), buffer(5, 9, 64)};
  EXPECT_NE(violation(c, {0, 0}), "");
}

TEST(Validate, ZeroSizeBuffersNeverOverlap) {
  const std::vector<Buffer> b = {buffer(0, 5, 0), buffer(0, 5, 64)};
  EXPECT_EQ(violation(b, {10, 0}), "");
}

TEST(Validate, CatchesMisalignmentAndMovedFixedOffsets) {
  const std::vector<Buffer> aligned = {buffer(0, 1, 8, 64), buffer(0, 1, 8, 64)};
  EXPECT_EQ(violation(aligned, {0, 64}), "");
  EXPECT_NE(violation(aligned, {0, 32}).find("aligned"), std::string::npos);
  const std::vector<Buffer> fixed = {buffer(0, 1, 8, 1, 128)};
  EXPECT_EQ(violation(fixed, {128}), "");
  EXPECT_NE(violation(fixed, {0}).find("fixed"), std::string::npos);
}

TEST(Validate, CatchesMalformedOffsets) {
  const std::vector<Buffer> b = {buffer(0, 1, 8), buffer(1, 2, 8)};
  EXPECT_NE(violation(b, {0}), "");
  EXPECT_NE(violation(b, {0, -8}), "");
  EXPECT_NE(violation(b, {0, int64_t{1} << 62 | 1}), "");
}

TEST(Validate, CatchesOverlapsAmongManyBuffers) {
  // A valid plan of 200 buffers, then one buffer moved onto a neighbour in time.
  std::vector<Buffer> b;
  std::vector<int64_t> offsets;
  for (int i = 0; i < 200; ++i) {
    b.push_back(buffer(i, i + 10, 16));
    offsets.push_back((i % 10) * 16);
  }
  EXPECT_EQ(violation(b, offsets), "");
  offsets[105] = offsets[100];
  EXPECT_NE(violation(b, offsets), "");
}

TEST(LowerBound, IsTheMostBytesLiveAtOnce) {
  EXPECT_EQ(lower_bound_bytes({}), 0);
  const std::vector<Buffer> b = {buffer(0, 2, 10), buffer(1, 3, 20), buffer(2, 4, 40),
                                 buffer(3, 4, 1)};
  EXPECT_EQ(lower_bound_bytes(b), 60);  // at 2: 20 + 40 ([0,2) is dead at 2)
  const std::vector<Buffer> fixed = {buffer(0, 1, 10), buffer(5, 6, 8, 1, 100)};
  EXPECT_EQ(lower_bound_bytes(fixed), 108);
}

}  // namespace
}  // namespace footprint::plan
