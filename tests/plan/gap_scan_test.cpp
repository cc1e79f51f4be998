// Reading a stretch of a run's gaps for the least key (src/plan/gap_scan.hpp) as a
// specification: the AVX2 scan and the one-by-one scan give what a plain loop over the gaps
// gives, for every start, every stopping point and every size.
#include "plan/gap_scan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace footprint::plan::detail {
namespace {

// Sorted, disjoint spans with gaps drawn from a few lengths (ties), some of them 1.
std::vector<Span> random_run(std::mt19937_64& rng, size_t count) {
  std::vector<Span> run;
  int64_t at = static_cast<int64_t>(rng() % 5);
  for (size_t k = 0; k < count; ++k) {
    const int64_t gap = 1 + static_cast<int64_t>(rng() % 6) * 3;
    run.push_back({at + gap, at + gap + 1 + static_cast<int64_t>(rng() % 9)});
    at = run.back().end;
  }
  return run;
}

LeastKey by_loop(const std::vector<Span>& run, size_t from, int64_t before, int64_t size) {
  LeastKey out{std::numeric_limits<int64_t>::max(), from};
  for (; out.end < run.size() && run[out.end].begin < before; ++out.end) {
    const int64_t gap = run[out.end].begin - run[out.end - 1].end;
    if (gap >= size && gap < out.key) out.key = gap;
  }
  return out;
}

TEST(GapScan, BothWaysGiveTheLeastKeyAndWhereTheStretchEnds) {
  std::mt19937_64 rng(41);
  const bool avx2 = gap_scan_has_avx2();
  size_t stretches = 0;
  for (int round = 0; round < 200; ++round) {
    const std::vector<Span> run = random_run(rng, 1 + rng() % 40);
    const int64_t top = run.back().end;
    for (size_t from = 1; from <= run.size(); ++from) {
      for (const int64_t size : {int64_t{1}, int64_t{4}, int64_t{9}, int64_t{20}}) {
        // Stop inside the run (at a begin, just past one), before it, or never.
        const int64_t before = round % 4 == 0 ? std::numeric_limits<int64_t>::max()
                                              : static_cast<int64_t>(rng() % (top + 2));
        const LeastKey want = by_loop(run, from, before, size);
        const LeastKey scalar = least_gap_key_scalar(run.data(), from, run.size(), before, size);
        EXPECT_EQ(scalar.key, want.key);
        EXPECT_EQ(scalar.end, want.end);
#if defined(__x86_64__)
        if (avx2) {
          const LeastKey wide = least_gap_key_avx2(run.data(), from, run.size(), before, size);
          ASSERT_EQ(wide.key, want.key) << "round " << round << ", from " << from;
          ASSERT_EQ(wide.end, want.end) << "round " << round << ", from " << from;
        }
#endif
        if (want.key == std::numeric_limits<int64_t>::max()) continue;
        size_t first = from;
        while (run[first].begin - run[first - 1].end != want.key) ++first;
        EXPECT_EQ(first_with_key_scalar(run.data(), from, want.key, size), first);
#if defined(__x86_64__)
        if (avx2) {
          ASSERT_EQ(first_with_key_avx2(run.data(), from, want.end, want.key, size), first)
              << "round " << round << ", from " << from;
        }
#endif
        ++stretches;
      }
    }
  }
  EXPECT_GT(stretches, 1000u);
  if (!avx2) GTEST_SKIP() << "no AVX2 here: only the one-by-one scan was checked";
}

}  // namespace
}  // namespace footprint::plan::detail
