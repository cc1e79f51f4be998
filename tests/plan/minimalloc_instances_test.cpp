// The eleven MiniMalloc benchmark instances (../shared/benchmarks/minimalloc): `auto` must plan
// every one within MiniMalloc's capacity of 1,048,576 bytes, validated. The full table, with
// every algorithm and the times, is bench/plan_tables.sh's.
#include <gtest/gtest.h>

#include <filesystem>

#include "footprint/plan/buffer_csv.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "plan_test_support.hpp"
#include "test_support.hpp"

namespace footprint::plan {
namespace {

constexpr int64_t kCapacity = 1048576;

class MiniMallocInstance : public ::testing::TestWithParam<char> {};

TEST_P(MiniMallocInstance, AutoFitsTheCapacity) {
  const auto dir = footprint::testing::shared_dir();
  if (dir.empty()) GTEST_SKIP() << "../shared not found (set FOOTPRINT_SHARED): skipped";
  const auto path =
      dir / "benchmarks" / "minimalloc" / (std::string(1, GetParam()) + ".1048576.csv");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found: skipped";
  const auto buffers = read_buffers_csv(path);
  PlanOptions o;
  o.capacity_bytes = kCapacity;
  o.time_limit_s = 30;  // a safety net; Release needs well under a second (docs/BENCHMARKS.md)
  const Plan p = plan_buffers(buffers, "auto", o);
  testing::expect_valid(buffers, p);
  EXPECT_LE(p.arena_bytes, kCapacity) << "after " << p.solve_ms << " ms";
  EXPECT_GE(p.arena_bytes, lower_bound_bytes(buffers));
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, MiniMallocInstance,
                         ::testing::Values('A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K'),
                         [](const auto& param_info) { return std::string(1, param_info.param); });

}  // namespace
}  // namespace footprint::plan
