// BatchNormalization (inference and training mode), InstanceNormalization and
// LayerNormalization (axes, broadcast Scale/B, statistics outputs) against naive loops.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

Tensor positive(Ints dims, unsigned seed) {
  Tensor t = random_floats(std::move(dims), seed);
  auto v = t.floats();
  for (float& e : v) e = std::fabs(e) + 0.1f;
  return floats(t.dims, v);
}

// x seen as [N, C, rest]; y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + b[c].
std::vector<float> ref_bn(const Tensor& x, const std::vector<float>& scale,
                          const std::vector<float>& b, const std::vector<double>& mean,
                          const std::vector<double>& var, float eps) {
  const int64_t channels = x.dims[1];
  const int64_t rest = static_cast<int64_t>(x.numel()) / (x.dims[0] * channels);
  const auto v = x.floats();
  std::vector<float> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const auto c = static_cast<size_t>((static_cast<int64_t>(i) / rest) % channels);
    y[i] = static_cast<float>((v[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + b[c]);
  }
  return y;
}

TEST(BatchNormKernel, InferenceOnEveryRank) {
  unsigned seed = 1;
  for (const Ints& dims :
       {Ints{4, 3}, Ints{2, 3, 5}, Ints{2, 5, 4, 3}, Ints{1, 2, 3, 2, 4}, Ints{1, 2, 2, 2, 2, 3},
        Ints{1, 3, 7, 11}}) {  // 77-element planes: full vectors of every width and a tail
    const int64_t c = dims[1];
    const Tensor x = random_floats(dims, seed++);
    const Tensor scale = random_floats({c}, seed++), b = random_floats({c}, seed++);
    const Tensor mean = random_floats({c}, seed++), var = positive({c}, seed++);
    const auto mv = mean.floats(), vv = var.floats();
    const auto want = ref_bn(x, scale.floats(), b.floats(), {mv.begin(), mv.end()},
                             {vv.begin(), vv.end()}, 1e-3f);
    // Parameters known when preparing (weights: the per-channel affine is built then) or not.
    for (const bool constants : {false, true}) {
      PreparedRun k("BatchNormalization", {x, scale, b, mean, var}, {attr_float("epsilon", 1e-3f)});
      if (constants) k.constants({1, 2, 3, 4});
      k.run();
      expect_close(k.out(0).floats(), want);
      EXPECT_EQ(k.allocations(), 0u);
    }
  }
}

TEST(BatchNormKernel, TrainingModeUsesBatchStatisticsAndMovesTheRunningOnes) {
  const Tensor x = random_floats({3, 2, 4}, 7);
  const Tensor scale = random_floats({2}, 8), b = random_floats({2}, 9);
  const Tensor mean = random_floats({2}, 10), var = positive({2}, 11);
  PreparedRun k("BatchNormalization", {x, scale, b, mean, var},
                {attr("training_mode", int64_t{1}), attr_float("momentum", 0.8f)}, 15, 3);
  k.run();
  const auto v = x.floats();
  std::vector<double> bm(2, 0), bv(2, 0);
  for (size_t i = 0; i < v.size(); ++i) bm[(i / 4) % 2] += v[i] / 12.0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double d = v[i] - bm[(i / 4) % 2];
    bv[(i / 4) % 2] += d * d / 12.0;
  }
  expect_close(k.out(0).floats(), ref_bn(x, scale.floats(), b.floats(), bm, bv, 1e-5f));
  const auto m0 = mean.floats(), v0 = var.floats();
  expect_close(k.out(1).floats(), {static_cast<float>(m0[0] * 0.8 + bm[0] * 0.2),
                                   static_cast<float>(m0[1] * 0.8 + bm[1] * 0.2)});
  expect_close(k.out(2).floats(), {static_cast<float>(v0[0] * 0.8 + bv[0] * 0.2),
                                   static_cast<float>(v0[1] * 0.8 + bv[1] * 0.2)});
}

TEST(InstanceNormKernel, NormalisesEachPlane) {
  const Tensor x = random_floats({2, 3, 4, 5}, 21);
  const Tensor scale = random_floats({3}, 22), b = random_floats({3}, 23);
  PreparedRun k("InstanceNormalization", {x, scale, b}, {attr_float("epsilon", 1e-2f)});
  k.run();
  const auto v = x.floats(), s = scale.floats(), bb = b.floats();
  std::vector<float> want(v.size());
  for (size_t p = 0; p < 6; ++p) {
    double mean = 0, var = 0;
    for (size_t i = 0; i < 20; ++i) mean += v[p * 20 + i] / 20.0;
    for (size_t i = 0; i < 20; ++i) var += (v[p * 20 + i] - mean) * (v[p * 20 + i] - mean) / 20.0;
    for (size_t i = 0; i < 20; ++i) {
      want[p * 20 + i] =
          static_cast<float>((v[p * 20 + i] - mean) / std::sqrt(var + 1e-2) * s[p % 3] + bb[p % 3]);
    }
  }
  expect_close(k.out(0).floats(), want);
  EXPECT_EQ(k.allocations(), 0u);
}

// Rows are the dims before `axis`; Scale and B repeat with `period` elements.
void check_layer_norm(const Ints& dims, int64_t axis, const Ints& scale_dims, bool with_b,
                      unsigned seed) {
  SCOPED_TRACE("axis " + std::to_string(axis));
  const Tensor x = random_floats(dims, seed);
  const Tensor scale = random_floats(scale_dims, seed + 1);
  const Tensor b = random_floats(scale_dims, seed + 2);
  std::vector<std::optional<Tensor>> inputs{x, scale};
  if (with_b) inputs.push_back(b);
  PreparedRun k("LayerNormalization", inputs, {attr("axis", axis), attr_float("epsilon", 1e-4f)},
                17, 3);
  k.run();
  const size_t rank = dims.size();
  const size_t from = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
  size_t rows = 1;
  for (size_t i = 0; i < from; ++i) rows *= static_cast<size_t>(dims[i]);
  const auto v = x.floats(), s = scale.floats(), bb = b.floats();
  const size_t cols = v.size() / rows, period = s.size();
  std::vector<float> want(v.size()), want_mean, want_inv;
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (size_t j = 0; j < cols; ++j) mean += v[r * cols + j] / static_cast<double>(cols);
    for (size_t j = 0; j < cols; ++j) {
      var += (v[r * cols + j] - mean) * (v[r * cols + j] - mean) / static_cast<double>(cols);
    }
    const double inv = 1 / std::sqrt(var + 1e-4);
    for (size_t j = 0; j < cols; ++j) {
      want[r * cols + j] = static_cast<float>((v[r * cols + j] - mean) * inv * s[j % period] +
                                              (with_b ? bb[j % period] : 0));
    }
    want_mean.push_back(static_cast<float>(mean));
    want_inv.push_back(static_cast<float>(inv));
  }
  expect_close(k.out(0).floats(), want);
  expect_close(k.out(1).floats(), want_mean);
  expect_close(k.out(2).floats(), want_inv);
  EXPECT_EQ(k.allocations(), 0u);
}

TEST(LayerNormKernel, AxesScaleShapesAndStatistics) {
  check_layer_norm({2, 3, 4}, -1, {4}, true, 1);
  check_layer_norm({2, 3, 4}, 1, {3, 4}, true, 2);
  check_layer_norm({2, 3, 4}, 1, {4}, false, 3);  // Scale repeats over the normalised dims
  check_layer_norm({2, 3, 4}, 0, {2, 3, 4}, true, 4);
  check_layer_norm({3, 5}, -2, {1}, true, 5);
}

TEST(LayerNormKernel, AScaleThatDoesNotBroadcastFailsClearly) {
  PreparedRun k("LayerNormalization", {random_floats({2, 3, 4}, 1), random_floats({3}, 2)},
                {attr("axis", int64_t{1})}, 17);
  EXPECT_NE(k.run_error().find("must broadcast over the normalised dims"), std::string::npos);
}

}  // namespace
}  // namespace footprint::testing
