// Symbolic dim expressions as shape inference builds them: simplification, exact division of an
// element count, nested floor divisions of strided layers, evaluation under bindings.
#include <gtest/gtest.h>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/shape.hpp"

namespace footprint {
namespace {

const Dim N = Dim::named("N");
const Dim H = Dim::named("H");
Dim k(int64_t v) {
  return Dim::known(v);
}

TEST(DimExpr, ConstantsGatherLastSoEqualExpressionsReadTheSame) {
  EXPECT_EQ((N * k(3) * H).to_string(), "N*H*3");
  EXPECT_EQ((k(3) * N * H).to_string(), "N*H*3");
  EXPECT_EQ((N + k(2) - k(3)).to_string(), "N-1");
  EXPECT_EQ((N + k(2) + H).to_string(), "N+H+2");
  EXPECT_TRUE(N * k(3) * H == k(3) * N * H);
}

TEST(DimExpr, ExactDivisionCancelsCommonFactors) {
  EXPECT_EQ(exact_div(N * k(2048), N).to_string(), "2048");
  EXPECT_EQ(exact_div(N * H * k(12), k(6)).to_string(), "N*H*2");
  EXPECT_EQ(exact_div(N * H * k(12), N * k(4)).to_string(), "H*3");
  // Factors that do not cancel fall back to a floor division.
  EXPECT_EQ(exact_div(N * k(4), H).to_string(), "floor(N*4/H)");
  EXPECT_TRUE(exact_div(Dim::unknown(), N).is_unknown());
}

TEST(DimExpr, NestedFloorDivisionsFold) {
  // Two stride-2 layers in a row: floor(floor(x/2)/2) = floor(x/4).
  const Dim once = floor_div(H - k(1), k(2));
  EXPECT_EQ(once.to_string(), "floor((H-1)/2)");
  EXPECT_EQ(floor_div(once, k(2)).to_string(), "floor((H-1)/4)");
  EXPECT_EQ(ceil_div(ceil_div(H, k(2)), k(3)).to_string(), "ceil(H/6)");
  for (int64_t h = -9; h <= 40; ++h) {
    const DimBindings b{{"H", h}};
    const int64_t x = h - 1;
    const int64_t twice = (x >= 0 ? x / 2 : -((-x + 1) / 2));
    const int64_t expected = (twice >= 0 ? twice / 2 : -((-twice + 1) / 2));
    EXPECT_EQ(floor_div(once, k(2)).evaluate(b), expected) << h;
  }
}

TEST(DimExpr, ConvOutputEvaluatesUnderBindings) {
  const Dim out = floor_div(H + k(2) - k(3), k(2)) + k(1);
  EXPECT_EQ(out.to_string(), "floor((H-1)/2)+1");
  EXPECT_EQ(out.evaluate({{"H", 224}}), 112);
  EXPECT_EQ(out.evaluate({{"W", 224}}), std::nullopt);
}

// An extent past int64 is an error, never an unknown dim that would later be counted as 0 bytes.
TEST(DimExpr, OverflowingExtentsThrowInsteadOfBecomingUnknown) {
  const int64_t big = int64_t{1} << 62;
  EXPECT_THROW((void)(k(big) + k(big)), SizeOverflow);
  EXPECT_THROW((void)(k(3) * k(6148914691236517206)), SizeOverflow);
  EXPECT_THROW((void)(N * k(big) * k(4)), SizeOverflow) << "the coefficient itself overflows";
  const Dim n3 = N * k(3);
  EXPECT_EQ(n3.evaluate({{"N", 5}}), 15);
  try {
    (void)n3.evaluate({{"N", INT64_MAX}});
    FAIL() << "no overflow reported";
  } catch (const SizeOverflow& e) {
    EXPECT_STREQ(e.what(), "extent arithmetic: 9223372036854775807 x 3 overflows int64");
  }
  EXPECT_FALSE(n3.evaluate({}).has_value()) << "unbound is still unknown, not an error";
}

// A data-dependent extent (NonZero's count) is between 0 and its bound: never a value, but a
// range that arithmetic carries, and distinct from every other such extent.
TEST(DimExpr, DataDependentExtentsCarryTheirBound) {
  const Dim nz = Dim::bounded(N * k(8), "'nz' (NonZero)");
  EXPECT_FALSE(nz.is_known());
  EXPECT_FALSE(nz.is_unknown());
  EXPECT_TRUE(nz.is_data_dependent());
  EXPECT_FALSE((N * k(8)).is_data_dependent());
  EXPECT_EQ(nz.to_string(), "<=N*8");
  EXPECT_FALSE(nz.evaluate({{"N", 2}}).has_value()) << "not exact under any binding";
  EXPECT_EQ(nz.range({{"N", 2}}), (std::pair<int64_t, int64_t>{0, 16}));
  EXPECT_FALSE(nz.range({}).has_value()) << "the bound needs N";
  EXPECT_EQ((nz * k(4)).range({{"N", 2}}), (std::pair<int64_t, int64_t>{0, 64}));
  EXPECT_EQ((nz * k(4)).to_string(), "(<=N*8)*4");
  // Subtraction needs the other operand's low end: 16 - [0, 16] is [0, 16].
  EXPECT_EQ((N * k(8) - nz).range({{"N", 2}}), (std::pair<int64_t, int64_t>{0, 16}));
  EXPECT_EQ(min(nz, k(5)).range({{"N", 2}}), (std::pair<int64_t, int64_t>{0, 5}));
  EXPECT_EQ(floor_div(nz, k(3)).range({{"N", 2}}), (std::pair<int64_t, int64_t>{0, 5}));
  EXPECT_EQ(k(7).range({}), (std::pair<int64_t, int64_t>{7, 7}));
  std::vector<std::string> symbols;
  nz.collect_symbols(symbols);
  EXPECT_EQ(symbols, std::vector<std::string>{"N"});
  std::vector<std::string> origins;
  (nz + N).collect_bound_origins(origins);
  EXPECT_EQ(origins, std::vector<std::string>{"'nz' (NonZero)"});
}

TEST(DimExpr, TwoDataDependentExtentsAreNotEqualEvenWithOneBound) {
  const Dim a = Dim::bounded(k(100), "'a' (NonZero)");
  const Dim b = Dim::bounded(k(100), "'b' (NonZero)");
  EXPECT_TRUE(a == a);
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a * k(4) == b * k(4));
  EXPECT_TRUE(a * k(4) == a * k(4));
  // Exact division cancels only the same extent.
  EXPECT_EQ(exact_div(a * k(4), a).to_string(), "4");
  EXPECT_NE(exact_div(a * k(4), b).to_string(), "4");
  EXPECT_TRUE(Dim::bounded(Dim::unknown(), "x").is_unknown()) << "no bound, no bounded extent";
}

TEST(DimExpr, ExtentsAreNeverNegative) {
  EXPECT_TRUE(N.is_nonnegative());
  EXPECT_TRUE((N * k(3) + H).is_nonnegative());
  EXPECT_TRUE(Dim::bounded(k(9), "x").is_nonnegative());
  EXPECT_FALSE((N - k(1)).is_nonnegative()) << "N may be 0";
  EXPECT_FALSE(k(-1).is_nonnegative());
  EXPECT_TRUE(max(N - k(1), k(0)).is_nonnegative());
}

}  // namespace
}  // namespace footprint
