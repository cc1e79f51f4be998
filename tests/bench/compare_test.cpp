// compare: the U test agrees with scipy's mannwhitneyu; an injected 10% slowdown and a 5% memory
// growth fail their thresholds; two runs of the same build pass.
#include "footprint/bench/compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "bench/run_options.hpp"
#include "footprint/bench/mann_whitney.hpp"
#include "footprint/bench/runner.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"

namespace footprint::bench {
namespace {

TEST(MannWhitney, MatchesScipy) {
  // scipy.stats.mannwhitneyu(a, b) (two-sided, method auto).
  const UTest exact = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_TRUE(exact.exact);
  EXPECT_DOUBLE_EQ(exact.u, 0);
  EXPECT_NEAR(exact.p_value, 0.007936507936507936, 1e-12);
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {4, 5, 6}).p_value, 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_u({1, 3, 5}, {2, 4, 6}).p_value, 0.7, 1e-12);
  std::vector<double> a, b;
  for (int i = 1; i <= 10; ++i) {
    a.push_back(i);
    b.push_back(i + 10);
  }
  const UTest normal = mann_whitney_u(a, b);
  EXPECT_FALSE(normal.exact);
  EXPECT_NEAR(normal.p_value, 0.0001826717911095504, 1e-9);
  EXPECT_DOUBLE_EQ(mann_whitney_u(a, a).p_value, 1.0);
}

TEST(Threshold, Parses) {
  const Threshold t = parse_threshold("time:5%");
  EXPECT_EQ(t.metric, "time");
  EXPECT_DOUBLE_EQ(t.percent, 5);
  EXPECT_DOUBLE_EQ(parse_threshold("peak_heap:1").percent, 1);
  EXPECT_THROW(parse_threshold("speed:5%"), UsageError);
  EXPECT_THROW(parse_threshold("time"), UsageError);
  EXPECT_THROW(parse_threshold("time:x%"), UsageError);
}

// Spins until a wall-clock deadline: the time is what was asked, whatever else shares the core.
void spin_for(double ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// A build whose benchmark takes `ms` and holds `bytes` at its peak.
RunRecords build_run(double ms, size_t bytes) {
  Registry reg;
  reg.add("work", [ms, bytes](State&) {
    auto v = std::make_unique<char[]>(bytes);
    v[0] = 1;
    asm volatile("" : : "r"(v.get()) : "memory");
    spin_for(ms);
  });
  // Many short repetitions: on a loaded machine a sample is sometimes preempted past its
  // deadline, and the U test needs most samples clean.
  return run(reg, test_support::reps(25));
}

const std::vector<Threshold> kGates = {{"time", 5}, {"peak_heap", 1}};

// A run whose one benchmark took `wall` (ms per repetition) and peaked at `peak` bytes: the
// comparison's logic on fixed samples (real runs of one build, and real injected regressions,
// are bench/bench_compare.sh's job: a timed unit test would fail on a busy machine).
RunRecords synthetic_run(const std::vector<double>& wall, uint64_t peak) {
  RunRecords r;
  Record rec;
  rec.name = rec.family = "work";
  rec.wall_ms = wall;
  rec.cpu_ms = wall;
  rec.wall = summarize(wall);
  rec.cpu = summarize(wall);
  rec.peak_heap_bytes = peak;
  r.records.push_back(rec);
  return r;
}

std::vector<double> samples(double base, double spread, int n) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(base + spread * ((i * 7) % n) / n);
  return out;
}

TEST(Compare, TwoRunsOfTheSameBuildPass) {
  std::vector<double> b = samples(0.5, 0.01, 25);
  std::reverse(b.begin(), b.end());
  const Comparison c =
      compare(synthetic_run(samples(0.5, 0.01, 25), 1 << 20), synthetic_run(b, 1 << 20), kGates);
  EXPECT_FALSE(c.failed);
}

TEST(Compare, TwoRealRunsOfTheSameWorkPassTheMemoryGate) {
  if (!heap::available()) GTEST_SKIP() << "needs the counting allocator";
  const RunRecords a = build_run(0.2, 1 << 20);
  const RunRecords b = build_run(0.2, 1 << 20);
  for (const auto& m : compare(a, b, kGates).changes) {
    if (m.metric == "peak_heap") {
      EXPECT_FALSE(m.failed);
    }
  }
}

TEST(Compare, FlagsATenPercentSlowdown) {
  std::vector<double> slow = samples(0.5, 0.01, 25);
  for (double& v : slow) v *= 1.10;
  const Comparison c =
      compare(synthetic_run(samples(0.5, 0.01, 25), 1 << 20), synthetic_run(slow, 1 << 20), kGates);
  EXPECT_TRUE(c.failed);
  bool time_failed = false;
  for (const auto& m : c.changes) {
    if (m.metric == "time") {
      time_failed = m.failed;
      EXPECT_NEAR(m.change, 0.10, 0.01);
      ASSERT_TRUE(m.p_value);
      EXPECT_LT(*m.p_value, 0.05);
    }
    if (m.metric == "peak_heap") {
      EXPECT_FALSE(m.failed);
    }
  }
  EXPECT_TRUE(time_failed);
}

TEST(Compare, FlagsAFivePercentMemoryGrowth) {
  if (!heap::available()) GTEST_SKIP() << "needs the counting allocator";
  const RunRecords a = build_run(0.2, 1 << 20);
  const RunRecords b = build_run(0.2, (1 << 20) + (1 << 20) / 20);
  const Comparison c = compare(a, b, kGates);
  EXPECT_TRUE(c.failed);
  for (const auto& m : c.changes) {
    if (m.metric == "peak_heap") {
      EXPECT_TRUE(m.failed);
      EXPECT_NEAR(m.change, 0.05, 0.01);
    }
  }
}

TEST(Compare, ReportsBenchmarksOnOneSideOnly) {
  RunRecords a, b;
  a.records.push_back({});
  a.records.back().name = "x";
  b.records.push_back({});
  b.records.back().name = "y";
  const Comparison c = compare(a, b, {});
  EXPECT_EQ(c.only_in_base, std::vector<std::string>{"x"});
  EXPECT_EQ(c.only_in_contender, std::vector<std::string>{"y"});
  EXPECT_FALSE(c.failed);
  // With thresholds, nothing in common is no pass: the contender was never held to them.
  try {
    (void)compare(a, b, kGates);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "no benchmark is in both runs (1 in the baseline, 1 in the contender): nothing "
                 "to check --fail-on against");
  }
}

// A record without time samples reads as a median of 0, a "-100 %" that passes any threshold.
TEST(Compare, AThresholdedTimeWithoutSamplesIsAnError) {
  RunRecords a, b;
  a.records.push_back({});
  a.records.back().name = "x";
  a.records.back().wall_ms = {1.0, 1.1, 1.2};
  a.records.back().cpu_ms = {1.0, 1.1, 1.2};
  b.records.push_back({});
  b.records.back().name = "x";
  try {
    (void)compare(a, b, {{"time", 5.0}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "benchmark 'x': the contender record has no time samples, so --fail-on time "
                 "cannot be checked");
  }
  const Comparison unchecked = compare(a, b, {});
  EXPECT_FALSE(unchecked.failed);
  EXPECT_EQ(unchecked.changes[0].note, "no time samples in the contender");
}

// Every byte and count metric: a figure the record file did not carry is never a 0 that passes.
TEST(Compare, AThresholdedFigureARecordLacksIsAnError) {
  for (const std::string metric : {"peak_heap", "net_heap", "allocations", "peak_rss"}) {
    for (const bool in_base : {true, false}) {
      RunRecords a, b;
      for (RunRecords* r : {&a, &b}) {
        r->records.push_back({});
        r->records.back().name = "x";
        r->records.back().peak_heap_bytes = 100;
      }
      (in_base ? a : b).records.back().absent.insert(metric);
      const std::string side = in_base ? "baseline" : "contender";
      try {
        (void)compare(a, b, {{metric, 1.0}});
        ADD_FAILURE() << metric << " missing in the " << side << " passed";
      } catch (const Error& e) {
        std::string want = "benchmark 'x': the ";
        want += side;
        want += " record has no " + metric + " figure, so --fail-on ";
        want += metric + " cannot be checked";
        EXPECT_EQ(std::string(e.what()), want);
      }
      const Comparison unchecked = compare(a, b, {});
      EXPECT_FALSE(unchecked.failed);
    }
  }
}

// predicted_peak 0 is "no prediction" (a benchmark that is not a model's), not 0 bytes.
TEST(Compare, AThresholdedPredictionNeedsOneOnBothSides) {
  RunRecords a, b;
  for (RunRecords* r : {&a, &b}) {
    r->records.push_back({});
    r->records.back().name = "x";
  }
  a.records.back().predicted_peak_bytes = 4096;
  EXPECT_THROW((void)compare(a, b, {{"predicted_peak", 1.0}}), Error);
  b.records.back().predicted_peak_bytes = 4096;
  EXPECT_FALSE(compare(a, b, {{"predicted_peak", 1.0}}).failed);
  b.records.back().predicted_peak_bytes = 8192;
  EXPECT_TRUE(compare(a, b, {{"predicted_peak", 1.0}}).failed);
}

}  // namespace
}  // namespace footprint::bench
