// Choosing an offset among runs of taken space (src/plan/free_space.hpp) as a specification:
// read the long run gap by gap with a short one cutting in (choose_among), or take runs out of
// the free gaps (FreeGaps), the offset is the one choose_offset gives for all the spans merged.
#include "plan/free_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan::detail {
namespace {

// A sorted, disjoint run of `count` spans over [0, extent): random cuts, every other piece taken.
std::vector<Span> random_run(std::mt19937_64& rng, size_t count, int64_t extent) {
  std::vector<int64_t> cuts;
  for (size_t k = 0; k < 2 * count; ++k) {
    cuts.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(extent)));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Span> run;
  for (size_t k = 0; k + 1 < cuts.size(); k += 2) run.push_back({cuts[k], cuts[k + 1]});
  return run;
}

Buffer buffer(int64_t size, int64_t alignment) {
  return {"b", 0, 1, size, alignment, std::nullopt};
}

// choose_offset over every span of `runs`, the reference.
int64_t by_scan(const std::vector<std::vector<Span>>& runs, const Buffer& b, Fit fit) {
  std::vector<Span> all;
  for (const auto& run : runs) all.insert(all.end(), run.begin(), run.end());
  return choose_offset(all, b, fit);
}

int64_t by_free_gaps(const std::vector<std::vector<Span>>& runs, const Buffer& b, Fit fit) {
  FreeGaps free;
  free.reset(runs.front(), b.size);
  for (size_t k = 1; k < runs.size(); ++k) free.take_out(runs[k]);
  return free.choose(b, fit);
}

TEST(FreeSpace, ChoosesAsAScanOfEverySpan) {
  std::mt19937_64 rng(17);
  size_t cases = 0;
  for (int round = 0; round < 400; ++round) {
    const int64_t extent = 64 + static_cast<int64_t>(rng() % 4000);
    std::vector<std::vector<Span>> runs;
    const size_t count = 1 + rng() % 6;
    for (size_t k = 0; k < count; ++k) runs.push_back(random_run(rng, 1 + rng() % 40, extent));
    if (round % 7 == 0) runs.push_back({});                      // an empty run
    if (round % 5 == 0) runs.push_back({{extent, extent + 9}});  // above every other
    for (const int64_t alignment : {1, 8, 3}) {
      for (const int64_t size : {1, 2, 5, 17, 64, 300}) {
        const Buffer b = buffer(size, alignment);
        for (const Fit fit : {Fit::tightest, Fit::lowest}) {
          const int64_t expected = by_scan(runs, b, fit);
          const std::string what = "round " + std::to_string(round) + ", size " +
                                   std::to_string(size) + ", alignment " +
                                   std::to_string(alignment);
          ASSERT_EQ(by_free_gaps(runs, b, fit), expected) << what;
          // choose_among: the first run against the others joined.
          std::vector<Span> rest;
          for (size_t k = 1; k < runs.size(); ++k) {
            rest.insert(rest.end(), runs[k].begin(), runs[k].end());
          }
          join(rest);
          ASSERT_EQ(choose_among(runs.front(), rest, b, fit), expected) << what;
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 400u * 3 * 6 * 2);
}

// As a query over a short lifetime sees it: a long run (hundreds of gaps, most of which fit,
// shrinking along the offsets or not, many of equal length) and a few spans cutting in.
TEST(FreeSpace, ALongRunWithAFewSpansCuttingIn) {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 300; ++round) {
    const bool shrinking = round % 2 == 0;
    const int64_t lengths = 2 + static_cast<int64_t>(rng() % 12);  // few lengths: many ties
    std::vector<Span> run;
    int64_t at = static_cast<int64_t>(rng() % 3) * 5;
    const size_t count = 100 + rng() % 400;
    for (size_t k = 0; k < count; ++k) {
      const int64_t gap = shrinking ? 4 + static_cast<int64_t>((count - k) * 8 / count) * 3
                                    : 4 + static_cast<int64_t>(rng() % lengths) * 3;
      run.push_back({at + gap, at + gap + 1 + static_cast<int64_t>(rng() % 20)});
      at = run.back().end;
    }
    std::vector<Span> cutting;
    for (size_t k = rng() % 4; k > 0; --k) {
      const int64_t begin = static_cast<int64_t>(rng() % static_cast<uint64_t>(at + 10));
      cutting.push_back({begin, begin + 1 + static_cast<int64_t>(rng() % 30)});
    }
    join(cutting);
    for (const int64_t alignment : {1, 4}) {
      for (const int64_t size : {1, 4, 7, 10, 16, 40}) {
        for (const Fit fit : {Fit::tightest, Fit::lowest}) {
          const Buffer b = buffer(size, alignment);
          ASSERT_EQ(choose_among(run, cutting, b, fit), by_scan({run, cutting}, b, fit))
              << "round " << round << ", size " << size << ", alignment " << alignment;
        }
      }
    }
  }
}

TEST(FreeSpace, TightestFitTakesTheSmallestGapThenTheLowest) {
  // Gaps [0,10) 10, [20,25) 5, [30,35) 5, [40,44) 4, top 50.
  const std::vector<Span> run = {{10, 20}, {25, 30}, {35, 40}, {44, 50}};
  FreeGaps free;
  free.reset(run, 5);
  EXPECT_EQ(free.choose(buffer(5, 1), Fit::tightest), 20);  // of the two of 5, the lower
  EXPECT_EQ(free.choose(buffer(5, 1), Fit::lowest), 0);
  EXPECT_EQ(free.choose(buffer(5, 8), Fit::tightest), 0);    // 24 and 32 end past their gaps
  EXPECT_EQ(free.choose(buffer(11, 1), Fit::tightest), 50);  // none fits: on top
  EXPECT_EQ(choose_among(run, {}, buffer(4, 1), Fit::tightest), 40);
  // A span of the short run cuts [0,10) to [0,3) and [6,10): 4 fits there exactly, lower.
  const std::vector<Span> cut = {{3, 6}};
  EXPECT_EQ(choose_among(run, cut, buffer(4, 1), Fit::tightest), 6);
  free.reset(run, 4);
  EXPECT_EQ(free.choose(buffer(4, 1), Fit::tightest), 40);
  free.take_out(cut);  // [0,3) is dropped, too short for the buffer
  EXPECT_EQ(free.choose(buffer(4, 1), Fit::tightest), 6);
}

}  // namespace
}  // namespace footprint::plan::detail
