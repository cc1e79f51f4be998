// analysis::fit_dim as a specification: the largest value whose figure fits, the value above it
// and why it does not, a model that refuses a value, and a figure that does not grow.
#include "footprint/analysis/dim_fit.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "footprint/core/error.hpp"

namespace footprint::analysis {
namespace {

// A timeline whose total peak is `total(v)` and whose activations peak is half of it.
std::function<Timeline(int64_t)> peaks(std::function<uint64_t(int64_t)> total,
                                       int64_t refuse_from = INT64_MAX) {
  return [total = std::move(total), refuse_from](int64_t v) {
    if (v >= refuse_from) throw Error("position table of " + std::to_string(refuse_from));
    Timeline t;
    t.total_peak_bytes = total(v);
    t.activations_peak_bytes = total(v) / 2;
    return t;
  };
}

TEST(DimFit, FindsTheLargestValueThatFits) {
  // 1000 + 24 v^2 bytes (attention-like): 1000 + 24 * 204^2 = 999,784 <= 10^6 < 1000 + 24*205^2.
  const auto quadratic = peaks([](int64_t v) { return 1000 + 24 * static_cast<uint64_t>(v * v); });
  const DimFit f = fit_dim(quadratic, "seq", FitFigure::total_peak, 1'000'000);
  ASSERT_TRUE(f.largest);
  EXPECT_EQ(*f.largest, 204);
  EXPECT_EQ(f.bytes_at_largest, 1000u + 24u * 204 * 204);
  EXPECT_EQ(f.above, 205);
  ASSERT_TRUE(f.bytes_above);
  EXPECT_GT(*f.bytes_above, 1'000'000u);
  EXPECT_FALSE(f.at_limit);
  EXPECT_LE(f.probes.size(), 2u * 9 + 2) << "doubling then bisection: O(log answer) analyses";
  // The other figure: half the bytes, so a larger answer.
  const DimFit half = fit_dim(quadratic, "seq", FitFigure::activations_peak, 1'000'000);
  EXPECT_EQ(*half.largest, 288);  // 500 + 12 v^2 <= 10^6
}

TEST(DimFit, SaysWhatStopsIt) {
  // Nothing fits: the smallest value is over already.
  const DimFit none = fit_dim(peaks([](int64_t v) { return 100 + static_cast<uint64_t>(v); }), "N",
                              FitFigure::total_peak, 50);
  EXPECT_FALSE(none.largest);
  EXPECT_EQ(none.above, 1);
  // The model refuses seq >= 257 before the budget binds: the answer is 256, and why.
  const DimFit table = fit_dim(peaks([](int64_t v) { return static_cast<uint64_t>(v); }, 257),
                               "seq", FitFigure::total_peak, 1'000'000);
  ASSERT_TRUE(table.largest);
  EXPECT_EQ(*table.largest, 256);
  EXPECT_EQ(table.above, 257);
  EXPECT_FALSE(table.bytes_above);
  EXPECT_EQ(table.refused, "position table of 257");
  // Everything up to the limit fits.
  const DimFit limit = fit_dim(peaks([](int64_t) { return uint64_t{10}; }), "N",
                               FitFigure::total_peak, 100, 1, 1000);
  EXPECT_TRUE(limit.at_limit);
  EXPECT_EQ(*limit.largest, 1000);
}

TEST(DimFit, AFigureThatFallsIsAnError) {
  // 100 B up to 7, then 10 B: the probe at 8 shows it falling.
  const auto falling = peaks([](int64_t v) { return v < 8 ? uint64_t{100} : uint64_t{10}; });
  EXPECT_THROW(
      {
        try {
          fit_dim(falling, "N", FitFigure::total_peak, 150);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("falls as N grows"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

}  // namespace
}  // namespace footprint::analysis
