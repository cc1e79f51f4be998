// The output check's rule: |got - want| <= atol + rtol |want| per element, atol at least a share
// of the output's largest expected magnitude when asked (what two correct float32 runs differ by
// near zero on large outputs), integers exact; a wrong kernel still fails.
#include "footprint/runtime/output_check.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace footprint::runtime {
namespace {

Tensor floats(const std::vector<float>& v, const std::string& name = "y") {
  Tensor t(name, DType::float32, std::vector<int64_t>{static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.ref().span<float>().begin());
  return t;
}

// Tensors are move-only: a list of them, built by moving.
template <class... T>
std::vector<Tensor> list(T&&... ts) {
  std::vector<Tensor> v;
  (v.push_back(std::forward<T>(ts)), ...);
  return v;
}

TEST(OutputCheck, AtolScalesWithTheOutputsLargestMagnitudeWhenAsked) {
  // Logits up to 100; one near zero off by 3e-3 (a float32 sum of terms of size 100 rounds by
  // more than that): within 1e-4 x 100 = 0.01, not within a fixed 1e-5 + 1e-3 x 0.001.
  const std::vector<Tensor> want = list(floats({100, -40, 0.001F, 7}));
  const std::vector<Tensor> near = list(floats({100.02F, -40.01F, 0.004F, 7}));
  const OutputCheck fixed = check_outputs(near, want, 1e-3, 1e-5);
  EXPECT_FALSE(fixed.match);
  EXPECT_NE(fixed.problem.find("element 2"), std::string::npos) << fixed.problem;
  EXPECT_EQ(fixed.atol_used, 1e-5);
  const OutputCheck scaled = check_outputs(near, want, 1e-3, 1e-5, 1e-4);
  EXPECT_TRUE(scaled.match) << scaled.problem;
  EXPECT_DOUBLE_EQ(scaled.atol_used, 1e-4 * 100);

  // A wrong kernel's error is of the outputs' own size: 7 -> 7.5 fails either way.
  const std::vector<Tensor> wrong = list(floats({100, -40, 0.001F, 7.5F}));
  const OutputCheck bad = check_outputs(wrong, want, 1e-3, 1e-5, 1e-4);
  EXPECT_FALSE(bad.match);
  EXPECT_NE(bad.problem.find("element 3"), std::string::npos) << bad.problem;

  // Each output is scaled by its own magnitude: a small second output keeps a small atol.
  const std::vector<Tensor> two_want = list(floats({100}, "a"), floats({0.01F, 0.02F}, "b"));
  const std::vector<Tensor> two_got = list(floats({100}, "a"), floats({0.012F, 0.02F}, "b"));
  EXPECT_FALSE(check_outputs(two_got, two_want, 1e-3, 1e-5, 1e-4).match)
      << "b's atol is 1e-4 x 0.02, not a's 0.01";

  // Integers compare exactly whatever the tolerances.
  Tensor ints("i", DType::int64, std::vector<int64_t>{2});
  ints.ref().span<int64_t>()[0] = 1000;
  ints.ref().span<int64_t>()[1] = 1;
  Tensor off("i", DType::int64, std::vector<int64_t>{2});
  off.ref().span<int64_t>()[0] = 1000;
  off.ref().span<int64_t>()[1] = 2;
  const std::vector<Tensor> iw = list(std::move(ints));
  const std::vector<Tensor> ig = list(std::move(off));
  EXPECT_FALSE(check_outputs(ig, iw, 1e-3, 1e-5, 1e-4).match);
}

}  // namespace
}  // namespace footprint::runtime
