// Every planner on instances whose optimum is known, with alignment and fixed offsets, and the
// exact search against brute force.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "footprint/core/error.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "plan_test_support.hpp"

namespace footprint::plan {
namespace {

using testing::buffer;
using testing::expect_valid;

PlanOptions quick() {
  PlanOptions o;
  o.time_limit_s = 5;
  o.max_iterations = 2000;
  return o;
}

// A chain: each buffer meets only its neighbours, so two slots of 100 suffice.
std::vector<Buffer> chain() {
  return {buffer(0, 2, 100), buffer(1, 3, 100), buffer(2, 4, 100), buffer(3, 5, 100),
          buffer(4, 6, 100)};
}

// Greedy by size puts the 60 at the bottom, the second 40 into the 60's old space and then
// has no 30-byte gap left: 130 bytes. The optimum meets the lower bound of 110: the long 40 at
// the bottom, the 60 on it, and the later 40 and 30 into the 60's space. (The 10 at time 0
// meets none of them: else the long 40, meeting every buffer, would go to the bottom first.)
std::vector<Buffer> greedy_trap() {
  return {buffer(2, 5, 40), buffer(3, 5, 40), buffer(3, 4, 30), buffer(2, 3, 60), buffer(0, 1, 10)};
}

class EveryPlanner : public ::testing::TestWithParam<std::string_view> {};

TEST_P(EveryPlanner, EmptyAndSingle) {
  const std::vector<Buffer> none;
  EXPECT_EQ(plan_buffers(none, GetParam(), quick()).arena_bytes, 0);
  const std::vector<Buffer> one = {buffer(0, 1, 64)};
  const Plan p = plan_buffers(one, GetParam(), quick());
  expect_valid(one, p);
  EXPECT_EQ(p.arena_bytes, 64);
  EXPECT_TRUE(p.optimal);
}

TEST_P(EveryPlanner, ReusesWhatIsDead) {
  const auto buffers = chain();
  const Plan p = plan_buffers(buffers, GetParam(), quick());
  expect_valid(buffers, p);
  EXPECT_EQ(p.lower_bound_bytes, 200);
  if (GetParam() == "naive") {
    EXPECT_EQ(p.arena_bytes, 500);
  } else {
    EXPECT_EQ(p.arena_bytes, 200);
    EXPECT_TRUE(p.optimal);
  }
}

TEST_P(EveryPlanner, HonoursAlignmentAndFixedOffsets) {
  std::vector<Buffer> buffers = {buffer(0, 4, 10, 16), buffer(0, 2, 30, 32),
                                 buffer(1, 3, 8, 1, 100), buffer(2, 4, 30, 32), buffer(3, 5, 5, 4)};
  const Plan p = plan_buffers(buffers, GetParam(), quick());
  expect_valid(buffers, p);
  EXPECT_EQ(p.offsets[2], 100);
  EXPECT_GE(p.arena_bytes, 108);
}

TEST_P(EveryPlanner, ZeroSizeBuffersTakeNoSpace) {
  const std::vector<Buffer> buffers = {buffer(0, 3, 0), buffer(0, 3, 50), buffer(1, 2, 0, 8)};
  const Plan p = plan_buffers(buffers, GetParam(), quick());
  expect_valid(buffers, p);
  EXPECT_EQ(p.arena_bytes, 50);
}

INSTANTIATE_TEST_SUITE_P(Planners, EveryPlanner, ::testing::ValuesIn(planner_names()),
                         [](const auto& param_info) {
                           std::string name(param_info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(Planners, NamesAndErrors) {
  const auto names = planner_names();
  EXPECT_EQ(names.size(), 7u);
  EXPECT_EQ(make_planner("best-fit")->name(), "best-fit");
  EXPECT_THROW(make_planner("quantum"), UsageError);
  try {
    (void)make_planner("quantum");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("greedy-size"), std::string::npos) << e.what();
  }
  const std::vector<Buffer> reversed = {buffer(3, 3, 8)};
  EXPECT_THROW(plan_buffers(reversed), Error);
  const std::vector<Buffer> misaligned = {buffer(0, 1, 8, 16, 8)};
  EXPECT_THROW(plan_buffers(misaligned), Error);
}

TEST(Planners, GreedyBySizeFallsIntoTheTrapExactDoesNot) {
  const auto buffers = greedy_trap();
  EXPECT_EQ(lower_bound_bytes(buffers), 110);
  const Plan greedy = plan_buffers(buffers, "greedy-size");
  expect_valid(buffers, greedy);
  EXPECT_EQ(greedy.arena_bytes, 130);
  for (const char* algo : {"exact", "auto"}) {
    const Plan p = plan_buffers(buffers, algo);
    expect_valid(buffers, p);
    EXPECT_EQ(p.arena_bytes, 110) << algo;
    EXPECT_TRUE(p.optimal) << algo;
  }
}

// Optima above the lower bound, which only a complete search can prove: a fixed buffer splits
// the arena so that the 2-byte buffers cannot use the byte below it (lower bound 3, optimum 4),
// and alignment leaves holes (lower bound 3, optimum 9).
TEST(Planners, ExactProvesOptimaAboveTheLowerBound) {
  const std::vector<Buffer> split = {buffer(0, 4, 1, 1, 1), buffer(0, 2, 2), buffer(2, 4, 2)};
  const std::vector<Buffer> holes = {buffer(0, 2, 1, 8), buffer(0, 2, 1, 8), buffer(1, 3, 1, 1)};
  for (const auto& buffers : {split, holes}) {
    const int64_t optimum = testing::brute_force_optimum(buffers);
    EXPECT_GT(optimum, lower_bound_bytes(buffers));
    const Plan p = plan_buffers(buffers, "exact");
    expect_valid(buffers, p);
    EXPECT_EQ(p.arena_bytes, optimum);
    EXPECT_TRUE(p.optimal);
    EXPECT_EQ(p.proven_bound_bytes, optimum);  // the search's proof, beside max-live
  }
}

TEST(Planners, ExactMatchesBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 150; ++trial) {
    const auto buffers =
        testing::random_instance(rng, 3 + trial % 5, trial % 3 == 1, trial % 4 == 2);
    const int64_t optimum = testing::brute_force_optimum(buffers);
    for (const std::string_view algo : planner_names()) {
      const Plan p = plan_buffers(buffers, algo, quick());
      expect_valid(buffers, p);
      EXPECT_GE(p.arena_bytes, optimum) << algo << " trial " << trial;
      if (algo == "exact" || algo == "auto") {
        EXPECT_EQ(p.arena_bytes, optimum) << algo << " trial " << trial;
        EXPECT_TRUE(p.optimal) << algo << " trial " << trial;
      }
      if (p.optimal) {
        EXPECT_EQ(p.arena_bytes, optimum) << algo << " trial " << trial;
      }
    }
  }
}

TEST(Planners, ExactStopsAtACapacity) {
  const auto buffers = greedy_trap();
  PlanOptions o;
  o.capacity_bytes = 120;  // greedy's 130 does not fit
  const Plan p = plan_buffers(buffers, "exact", o);
  expect_valid(buffers, p);
  EXPECT_LE(p.arena_bytes, 120);
  o.capacity_bytes = 10;  // below the lower bound: nothing fits, so it minimises instead
  EXPECT_EQ(plan_buffers(buffers, "exact", o).arena_bytes, 110);
}

// n buffers with lifetimes in [0, horizon + length) and sizes 1..max_size.
std::vector<Buffer> random_buffers(uint32_t seed, int n, int horizon, int length, int max_size) {
  std::mt19937 rng(seed);
  std::vector<Buffer> buffers;
  for (int i = 0; i < n; ++i) {
    const int64_t lower = rng() % horizon;
    buffers.push_back(buffer(lower, lower + 1 + rng() % length, 1 + rng() % max_size));
  }
  return buffers;
}

TEST(Planners, AnnealIsDeterministicForASeed) {
  const auto buffers = random_buffers(3, 40, 30, 8, 50);
  PlanOptions o;
  o.max_iterations = 3000;
  o.seed = 11;
  o.time_limit_s = 60;
  const Plan a = plan_buffers(buffers, "anneal", o);
  const Plan b = plan_buffers(buffers, "anneal", o);
  expect_valid(buffers, a);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_LE(a.arena_bytes, plan_buffers(buffers, "best-fit").arena_bytes);
}

TEST(Planners, ExactRespectsItsTimeLimit) {
  const auto buffers = random_buffers(5, 300, 200, 40, 1000);
  PlanOptions o;
  o.time_limit_s = 0.2;
  const Plan p = plan_buffers(buffers, "exact", o);
  expect_valid(buffers, p);
  EXPECT_LT(p.solve_ms, 2000);
  EXPECT_LE(p.arena_bytes, plan_buffers(buffers, "best-fit").arena_bytes);
}

TEST(MemoryPlanner, WorksLikeTfliteMicrosPlanner) {
  MemoryPlanner planner("greedy-size");
  const size_t a = planner.add_buffer(1024, 0, 2);
  const size_t b = planner.add_buffer(512, 1, 3);
  const size_t c = planner.add_buffer(1024, 2, 4);
  EXPECT_EQ(planner.arena_bytes(), 1536);
  EXPECT_EQ(planner.offset(a), planner.offset(c));  // c reuses a's bytes
  EXPECT_NE(planner.offset(a), planner.offset(b));
  EXPECT_FALSE(find_violation(planner.buffers(), planner.plan().offsets));
  planner.add_buffer(256, 0, 4);  // plans again on the next question
  EXPECT_EQ(planner.arena_bytes(), 1792);
  EXPECT_THROW((void)planner.offset(9), UsageError);
}

}  // namespace
}  // namespace footprint::plan
