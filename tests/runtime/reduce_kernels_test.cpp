// Reductions, ArgMax/ArgMin, the Softmax family and CumSum on small hand-checked cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/test_kernel_context.hpp"

namespace footprint::testing {
namespace {

const TestTensor k2x3 = f32({2, 3}, {1, 2, 3, 4, 5, 6});
TEST(ReduceKernels, InnerAndOuterAxes) {
  const Ran sum = run_f32("ReduceSum", {k2x3, i64({1}, {1})});
  EXPECT_EQ(sum.dims, (std::vector<int64_t>{2, 1}));
  expect_near(sum.values, {6, 15});
  const Ran mean = run_f32("ReduceMean", {k2x3, i64({1}, {0})}, {attr("keepdims", 0)});
  EXPECT_EQ(mean.dims, (std::vector<int64_t>{3}));
  expect_near(mean.values, {2.5f, 3.5f, 4.5f});
  expect_near(run_f32("ReduceMax", {k2x3}).values, {6});
  expect_near(run_f32("ReduceMin", {k2x3}, {}, 13).values, {1});
  expect_near(run_f32("ReduceProd", {k2x3, i64({1}, {-1})}).values, {6, 120});
}

TEST(ReduceKernels, MiddleAndSeveralAxes) {
  const TestTensor x = f32({2, 3, 2}, iota(12));
  expect_near(run_f32("ReduceSum", {x, i64({1}, {1})}).values, {6, 9, 24, 27});
  expect_near(run_f32("ReduceSum", {x, i64({2}, {0, 2})}).values, {14, 22, 30});
  // Attribute axes before opset 18 (13 for ReduceSum).
  expect_near(run_f32("ReduceMax", {x}, {attr("axes", std::vector<int64_t>{0, 1})}, 13).values,
              {10, 11});
  expect_near(run_f32("ReduceSum", {x}, {attr("axes", std::vector<int64_t>{2})}, 11).values,
              {1, 5, 9, 13, 17, 21});
}

TEST(ReduceKernels, EmptyAxes) {
  const Ran all = run_f32("ReduceSum", {k2x3, i64({0}, {})});
  expect_near(all.values, {21});
  const Ran noop = run_f32("ReduceSum", {k2x3, i64({0}, {})}, {attr("noop_with_empty_axes", 1)});
  EXPECT_EQ(noop.dims, (std::vector<int64_t>{2, 3}));
  expect_near(noop.values, {1, 2, 3, 4, 5, 6});
}

TEST(ReduceKernels, NormsAndLogs) {
  const TestTensor x = f32({2, 2}, {3, -1, 4, 1});
  expect_near(run_f32("ReduceL2", {x, i64({1}, {0})}).values, {5, std::sqrt(2.0f)});
  expect_near(run_f32("ReduceL1", {x, i64({1}, {1})}).values, {4, 5});
  expect_near(run_f32("ReduceSumSquare", {x, i64({1}, {1})}).values, {10, 17});
  expect_near(run_f32("ReduceLogSum", {x, i64({1}, {1})}).values, {std::log(2.0f), std::log(5.0f)});
  expect_near(run_f32("ReduceLogSumExp", {k2x3, i64({1}, {1})}).values, {3.4076059f, 6.4076059f});
  // Large values do not overflow: the maximum is factored out; outer axis too.
  expect_near(run_f32("ReduceLogSumExp", {f32({2, 1}, {1000, 1000}), i64({1}, {0})}).values,
              {1000 + std::log(2.0f)}, 1e-3f);
}

TEST(ReduceKernels, IntegerReduce) {
  KernelRun k("ReduceSum", {i64({2, 2}, {1, 2, 3, 4}), i64({1}, {0})});
  k.run();
  EXPECT_EQ(k.out(0).values<int64_t>(), (std::vector<int64_t>{4, 6}));
}

TEST(ReduceKernels, ArgMaxArgMin) {
  const TestTensor x = f32({2, 3}, {1, 3, 3, 5, 2, 5});
  KernelRun first("ArgMax", {x}, {attr("axis", 1)});
  first.run();
  EXPECT_EQ(first.out(0).values<int64_t>(), (std::vector<int64_t>{1, 0}));
  KernelRun last("ArgMax", {x}, {attr("axis", 1), attr("select_last_index", 1)});
  last.run();
  EXPECT_EQ(last.out(0).values<int64_t>(), (std::vector<int64_t>{2, 2}));
  KernelRun min("ArgMin", {x}, {attr("axis", 0), attr("keepdims", 0)});
  min.run();
  EXPECT_EQ(min.out(0).dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(min.out(0).values<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
}

TEST(ReduceKernels, SoftmaxFamily) {
  expect_near(run_f32("Softmax", {f32({1, 3}, {1, 2, 3})}).values,
              {0.09003057f, 0.24472847f, 0.66524096f});
  // Opset 13: one axis, here strided (axis 0).
  expect_near(run_f32("Softmax", {f32({2, 2}, {0, 1, 0, 3})}, {attr("axis", 0)}).values,
              {0.5f, 0.11920292f, 0.5f, 0.88079708f});
  // Before 13: coerced to 2-D at axis 1, so each row of 4 sums to 1.
  expect_near(run_f32("Softmax", {f32({2, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1})}, {}, 11).values,
              {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f});
  expect_near(run_f32("LogSoftmax", {f32({1, 2}, {0, 0})}).values,
              {-std::log(2.0f), -std::log(2.0f)});
  expect_near(run_f32("Hardmax", {f32({2, 3}, {1, 3, 3, 7, 2, 5})}).values, {0, 1, 0, 1, 0, 0});
}

// Contiguous float rows take a vector path (maximum, exponentials with their sum, scaling, at 4,
// 8 or 16 lanes): rows shorter than a vector, whole vectors and tails agree with a reference in
// double, the maximum found in any lane.
TEST(ReduceKernels, SoftmaxOnLongRows) {
  for (int64_t n : {int64_t{3}, int64_t{16}, int64_t{37}, int64_t{197}}) {
    std::vector<float> x(static_cast<size_t>(2 * n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * 9.0f;
    x[static_cast<size_t>(n + n / 2)] = 30;  // the second row's maximum, mid-row
    const auto soft = run_f32("Softmax", {f32({2, n}, x)}).values;
    const auto log_soft = run_f32("LogSoftmax", {f32({2, n}, x)}).values;
    for (int64_t r = 0; r < 2; ++r) {
      double m = -1e30, sum = 0;
      for (int64_t i = 0; i < n; ++i)
        m = std::max(m, static_cast<double>(x[static_cast<size_t>(r * n + i)]));
      for (int64_t i = 0; i < n; ++i) sum += std::exp(x[static_cast<size_t>(r * n + i)] - m);
      for (int64_t i = 0; i < n; ++i) {
        const auto at = static_cast<size_t>(r * n + i);
        const double want = std::exp(x[at] - m) / sum;
        EXPECT_NEAR(soft[at], want, 1e-6 * want + 1e-12) << n << " " << at;
        EXPECT_NEAR(log_soft[at], x[at] - m - std::log(sum), 2e-5) << n << " " << at;
      }
    }
  }
}

TEST(ReduceKernels, CumSum) {
  const TestTensor x = f32({3}, {1, 2, 3});
  expect_near(run_f32("CumSum", {x, i64({}, {0})}).values, {1, 3, 6});
  expect_near(run_f32("CumSum", {x, i32({}, {0})}, {attr("exclusive", 1)}).values, {0, 1, 3});
  expect_near(run_f32("CumSum", {x, i64({}, {0})}, {attr("reverse", 1)}).values, {6, 5, 3});
  expect_near(
      run_f32("CumSum", {x, i64({}, {0})}, {attr("reverse", 1), attr("exclusive", 1)}).values,
      {5, 3, 0});
  expect_near(run_f32("CumSum", {k2x3, i64({}, {1})}).values, {1, 3, 6, 4, 9, 15});
  expect_near(run_f32("CumSum", {k2x3, i64({}, {0})}).values, {1, 2, 3, 5, 7, 9});
}

TEST(ReduceKernels, TopK) {
  KernelRun k("TopK", {f32({3, 4}, iota(12)), i64({1}, {3})}, {}, 18, 2);
  k.run();
  EXPECT_EQ(k.allocations(), 0u);
  EXPECT_EQ(k.out(0).values<float>(), (std::vector<float>{3, 2, 1, 7, 6, 5, 11, 10, 9}));
  EXPECT_EQ(k.out(1).values<int64_t>(), (std::vector<int64_t>{3, 2, 1, 3, 2, 1, 3, 2, 1}));
  // Ties go to the lower index, smallest and largest alike.
  KernelRun small("TopK", {f32({1, 5}, {3, 1, 1, 2, 1}), i64({1}, {2})}, {attr("largest", 0)}, 18,
                  2);
  small.run();
  EXPECT_EQ(small.out(0).values<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(small.out(1).values<int64_t>(), (std::vector<int64_t>{1, 2}));
  KernelRun ties("TopK", {f32({4}, {2, 5, 5, 1}), i64({1}, {2})}, {}, 18, 2);
  ties.run();
  EXPECT_EQ(ties.out(1).values<int64_t>(), (std::vector<int64_t>{1, 2}));
  // Along a strided axis.
  KernelRun col("TopK", {f32({3, 2}, {1, 6, 3, 4, 2, 5}), i64({1}, {2})}, {attr("axis", 0)}, 18, 2);
  col.run();
  EXPECT_EQ(col.out(0).values<float>(), (std::vector<float>{3, 6, 2, 5}));
  EXPECT_EQ(col.out(1).values<int64_t>(), (std::vector<int64_t>{1, 0, 2, 2}));
}

}  // namespace
}  // namespace footprint::testing
