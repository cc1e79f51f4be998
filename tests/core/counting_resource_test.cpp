#include "footprint/core/counting_resource.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace footprint {
namespace {

TEST(CountingResource, TracksCurrentPeakAndLargest) {
  CountingResource r;
  void* a = r.allocate(100, 8);
  void* b = r.allocate(300, 8);
  r.deallocate(a, 100, 8);
  void* c = r.allocate(50, 8);
  EXPECT_EQ(r.current_bytes(), 350u);
  EXPECT_EQ(r.peak_bytes(), 400u);
  EXPECT_EQ(r.largest_request(), 300u);
  EXPECT_EQ(r.allocations(), 3u);
  r.deallocate(b, 300, 8);
  r.deallocate(c, 50, 8);
  EXPECT_EQ(r.current_bytes(), 0u);
}

TEST(CountingResource, RefusesPastTheLimit) {
  CountingResource r(1000);
  void* a = r.allocate(600, 8);
  EXPECT_THROW((void)r.allocate(500, 8), std::bad_alloc);
  EXPECT_EQ(r.refused(), 1u);
  void* b = r.allocate(400, 8);  // exactly at the limit is fine
  EXPECT_EQ(r.current_bytes(), 1000u);
  r.deallocate(a, 600, 8);
  r.deallocate(b, 400, 8);
}

TEST(CountingResource, WorksAsAPmrResource) {
  CountingResource r;
  {
    std::pmr::vector<int> v(&r);
    v.resize(1000);
    EXPECT_GE(r.current_bytes(), 4000u);
  }
  EXPECT_EQ(r.current_bytes(), 0u);
}

}  // namespace
}  // namespace footprint
