// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv against the ONNX operator
// documentation's worked examples and a plain-loop reference on small random tensors (per-row,
// per-column and per-channel zero points and scales, batches that broadcast, groups, padding,
// strides, dilations, saturation and ties), each run with the weights constant when preparing
// and not, and their bad inputs refused in one line naming the node and the input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "footprint/runtime/op_kernels.hpp"
#include "prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

template <class T>
Tensor ints(Ints dims, const std::vector<T>& v) {
  const DType t = std::is_same_v<T, uint8_t>  ? DType::uint8
                  : std::is_same_v<T, int8_t> ? DType::int8
                                              : DType::int32;
  return Tensor::of(t, std::move(dims), v);
}

// Default bounds: T's range (int8_t's minimum read as the number -128, as intended).
Tensor scalar_f(float v) {
  return floats({}, {v});
}

// Round half to even, written out rather than through the rounding mode the kernel uses.
double round_half_even(double v) {
  const double f = std::floor(v);
  const double frac = v - f;
  if (frac > 0.5) return f + 1;
  if (frac < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

template <class T>
T saturate(double v) {
  return static_cast<T>(std::min<double>(std::numeric_limits<T>::max(),
                                         std::max<double>(std::numeric_limits<T>::min(), v)));
}

// Runs the node twice, weights (input `b`) constant while preparing and not: both must give
// `want`.
template <class TY>
void expect_both_ways(const std::string& op, const std::vector<std::optional<Tensor>>& in,
                      const std::vector<Wire>& attrs, size_t b, const std::vector<TY>& want,
                      const std::vector<size_t>& more_constants = {}) {
  for (const bool constant_b : {false, true}) {
    PreparedRun k(op, in, attrs, 13);
    std::vector<size_t> constants = more_constants;
    if (constant_b) constants.push_back(b);
    k.constants(constants);
    k.run();
    EXPECT_EQ(k.out(0).values<TY>(), want) << op << (constant_b ? " (constant weights)" : "");
    if (constant_b) {
      // oneDNN's execute makes a few small bookkeeping blocks (264 bytes in 6 with 2.6.3),
      // freed before it returns.
      EXPECT_LE(k.allocations(), 16u) << op;
    } else {
      EXPECT_EQ(k.allocations(), 0u) << op;
    }
  }
}

// ---- the worked examples of the ONNX operator documentation

TEST(IntegerProductsKernels, MatMulIntegerDocumentationExample) {
  const auto a = ints<uint8_t>({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  const auto b = ints<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6});
  expect_both_ways<int32_t>("MatMulInteger",
                            {a, b, ints<uint8_t>({}, {12}), ints<uint8_t>({}, {0})}, {}, 1,
                            {-38, -83, -44, -98, -50, -113, -56, -128});
}

TEST(IntegerProductsKernels, ConvIntegerDocumentationExamples) {
  const auto x = ints<uint8_t>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  const auto w = ints<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
  const auto zx = ints<uint8_t>({}, {1});
  expect_both_ways<int32_t>("ConvInteger", {x, w, zx}, {}, 1, {12, 16, 24, 28});
  // Padded: the pad reads as the zero point, adding nothing.
  expect_both_ways<int32_t>("ConvInteger", {x, w, zx}, {attr("pads", Ints{1, 1, 1, 1})}, 1,
                            {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9});
}

// ---- matrix products against a reference

struct MatmulCase {
  Ints a_dims, b_dims, y_dims;
  Ints za_dims, zb_dims;  // {} with an element: a scalar; "none": absent (empty optional)
  bool has_za = true, has_zb = true;
};

// y[batch, m, n] of numpy-broadcast A [..., M, K] and B [..., K, N] (both of rank >= 2, the same
// rank here), zero points indexed by (matrix of A / B, row / column) through `za` and `zb`.
template <class TA, class TB, class Za, class Zb>
std::vector<int32_t> reference_matmul(const std::vector<TA>& a, const Ints& ad,
                                      const std::vector<TB>& b, const Ints& bd, const Ints& yd,
                                      Za za, Zb zb) {
  const size_t r = yd.size();
  const int64_t m = ad[r - 2], k = ad[r - 1], n = bd[r - 1];
  int64_t batches = 1;
  for (size_t i = 0; i + 2 < r; ++i) batches *= yd[i];
  std::vector<int32_t> y;
  for (int64_t t = 0; t < batches; ++t) {
    // Batch coordinates, then A's and B's matrix index with broadcasting.
    Ints at(r - 2);
    int64_t rest = t;
    for (size_t i = r - 2; i-- > 0;) {
      at[i] = rest % yd[i];
      rest /= yd[i];
    }
    int64_t ai = 0, bi = 0;
    for (size_t i = 0; i + 2 < r; ++i) {
      ai = ai * ad[i] + (ad[i] == 1 ? 0 : at[i]);
      bi = bi * bd[i] + (bd[i] == 1 ? 0 : at[i]);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += (int64_t{a[(ai * m + i) * k + p]} - za(ai, i)) *
                 (int64_t{b[(bi * k + p) * n + j]} - zb(bi, j));
        }
        y.push_back(static_cast<int32_t>(acc));
      }
    }
  }
  return y;
}

TEST(IntegerProductsKernels, MatMulIntegerPerRowAndPerColumnZeroPoints) {
  // A int8 [5, 7] with one zero point per row, B uint8 [7, 6] with one per column.
  const auto a = random_ints<int8_t>(35, 1);
  const auto b = random_ints<uint8_t>(42, 2);
  const auto za = random_ints<int8_t>(5, 3);
  const auto zb = random_ints<uint8_t>(6, 4);
  const auto want = reference_matmul(
      a, {5, 7}, b, {7, 6}, {5, 6}, [&](int64_t, int64_t i) { return int64_t{za[i]}; },
      [&](int64_t, int64_t j) { return int64_t{zb[j]}; });
  expect_both_ways<int32_t>("MatMulInteger",
                            {ints<int8_t>({5, 7}, a), ints<uint8_t>({7, 6}, b),
                             ints<int8_t>({5}, za), ints<uint8_t>({6}, zb)},
                            {}, 1, want);
}

TEST(IntegerProductsKernels, MatMulIntegerBroadcastBatchesAndPerMatrixZeroPoints) {
  // A [2, 1, 3, 4] x B [3, 4, 5] -> Y [2, 3, 3, 5]; A's zero point per row of each of its two
  // matrices [2, 1, 3, 1], B's per column of each of its three [3, 1, 5].
  const auto a = random_ints<uint8_t>(24, 5);
  const auto b = random_ints<int8_t>(60, 6);
  const auto za = random_ints<uint8_t>(6, 7);
  const auto zb = random_ints<int8_t>(15, 8);
  const auto want = reference_matmul(
      a, {2, 1, 3, 4}, b, {1, 3, 4, 5}, {2, 3, 3, 5},
      [&](int64_t mat, int64_t i) { return int64_t{za[mat * 3 + i]}; },
      [&](int64_t mat, int64_t j) { return int64_t{zb[mat * 5 + j]}; });
  expect_both_ways<int32_t>("MatMulInteger",
                            {ints<uint8_t>({2, 1, 3, 4}, a), ints<int8_t>({3, 4, 5}, b),
                             ints<uint8_t>({2, 1, 3, 1}, za), ints<int8_t>({3, 1, 5}, zb)},
                            {}, 1, want);
}

TEST(IntegerProductsKernels, MatMulIntegerWithoutZeroPointsAndOneDimensionalOperands) {
  const auto a = random_ints<uint8_t>(6, 9);
  const auto b = random_ints<uint8_t>(18, 10);
  // A 1-D [6] is the row [1, 6]; the output drops that dim: [3].
  const auto want = reference_matmul(
      a, {1, 6}, b, {6, 3}, {1, 3}, [](int64_t, int64_t) { return int64_t{0}; },
      [](int64_t, int64_t) { return int64_t{0}; });
  expect_both_ways<int32_t>("MatMulInteger", {ints<uint8_t>({6}, a), ints<uint8_t>({6, 3}, b)}, {},
                            1, want);
}

TEST(IntegerProductsKernels, MatMulIntegerWideColumnsAndLongRows) {
  // More columns than one block of the kernel's accumulators (256), and rows to parallelise.
  const Ints ad{40, 33}, bd{33, 300};
  const auto a = random_ints<uint8_t>(size_t{40} * 33, 11);
  const auto b = random_ints<int8_t>(size_t{33} * 300, 12);
  const auto want = reference_matmul(
      a, ad, b, bd, {40, 300}, [](int64_t, int64_t) { return int64_t{131}; },
      [](int64_t, int64_t) { return int64_t{-3}; });
  for (const int threads : {1, 2}) {
    PreparedRun k("MatMulInteger",
                  {ints<uint8_t>(ad, a), ints<int8_t>(bd, b), ints<uint8_t>({}, {131}),
                   ints<int8_t>({1}, {-3})},
                  {}, 13);
    k.threads(threads).constants({1, 3});
    k.run();
    EXPECT_EQ(k.out(0).values<int32_t>(), want) << threads << " threads";
  }
}

// QLinearMatMul: scales that are powers of two make acc * a_scale * b_scale / y_scale exact, so
// the reference's rounding decides ties (acc odd times 0.5) the way the spec says.
TEST(IntegerProductsKernels, QLinearMatMulPerColumnScalesRoundsTiesToEvenAndSaturates) {
  const Ints ad{8, 4}, bd{4, 5};
  const auto a = random_ints<uint8_t>(32, 13);
  const auto b = random_ints<int8_t>(20, 14, -8, 8);
  const std::vector<float> b_scale{0.5F, 1.0F, 0.25F, 2.0F, 0.0625F};
  const std::vector<int8_t> zb{0, 1, -2, 3, 0};
  const float a_scale = 0.5F, y_scale = 4.0F;
  const uint8_t za = 128, zy = 100;
  const auto acc = reference_matmul(
      a, ad, b, bd, {8, 5}, [&](int64_t, int64_t) { return int64_t{za}; },
      [&](int64_t, int64_t j) { return int64_t{zb[j]}; });
  std::vector<uint8_t> want;
  int ties = 0, saturated = 0;
  for (size_t i = 0; i < acc.size(); ++i) {
    const double v = acc[i] * double{a_scale} * b_scale[i % 5] / y_scale;
    ties += v - std::floor(v) == 0.5 ? 1 : 0;
    const double q = round_half_even(v) + zy;
    saturated += q < 0 || q > 255 ? 1 : 0;
    want.push_back(saturate<uint8_t>(q));
  }
  expect_both_ways<uint8_t>(
      "QLinearMatMul",
      {ints<uint8_t>(ad, a), scalar_f(a_scale), ints<uint8_t>({}, {za}), ints<int8_t>(bd, b),
       floats({5}, b_scale), ints<int8_t>({5}, zb), scalar_f(y_scale), ints<uint8_t>({}, {zy})},
      {}, 3, want, {1, 4, 6});
  // The data exercise what the test is named for (fixed seeds).
  EXPECT_GT(ties, 0);
  EXPECT_GT(saturated, 0);
}

TEST(IntegerProductsKernels, QLinearMatMulHandComputed) {
  // a = [[2, 4], [6, 8]] - 2, b = [[1], [3]] - 1, scales 1 and 1 and 0.5: y = 2 acc + zy.
  // acc = [0*0 + 2*2, 4*0 + 6*2] = [4, 12] -> [8, 24] + (-5) = [3, 19] as int8.
  expect_both_ways<int8_t>("QLinearMatMul",
                           {ints<uint8_t>({2, 2}, {2, 4, 6, 8}), scalar_f(1),
                            ints<uint8_t>({}, {2}), ints<uint8_t>({2, 1}, {1, 3}), scalar_f(1),
                            ints<uint8_t>({}, {1}), scalar_f(0.5F), ints<int8_t>({}, {-5})},
                           {}, 3, std::vector<int8_t>{3, 19});
}

TEST(IntegerProductsKernels, QLinearMatMulBatchedRowsOverOneWeightPerRowParameters) {
  // A [2, 3, 5] over one B [5, 4] (the batch folds into rows where oneDNN runs it): A's zero
  // points and scales per row of each matrix [2, 3, 1], B's per column [4] (uint8), Y's scale per
  // row [3] and zero point per row of each matrix [2, 3, 1].
  const auto a = random_ints<int8_t>(30, 61, -20, 20);
  const auto b = random_ints<uint8_t>(20, 62);
  const auto za = random_ints<int8_t>(6, 63, -4, 4);
  const auto zb = random_ints<uint8_t>(4, 64, 120, 136);
  const std::vector<float> sa{0.5F, 1.0F, 0.25F, 2.0F, 0.5F, 1.0F};
  const std::vector<float> sb{0.125F, 0.25F, 0.5F, 1.0F};
  const std::vector<float> sy{4.0F, 8.0F, 2.0F};
  const auto zy = random_ints<uint8_t>(6, 65, 100, 150);
  const auto acc = reference_matmul(
      a, {2, 3, 5}, b, {1, 5, 4}, {2, 3, 4},
      [&](int64_t mat, int64_t i) { return int64_t{za[static_cast<size_t>(mat * 3 + i)]}; },
      [&](int64_t, int64_t j) { return int64_t{zb[static_cast<size_t>(j)]}; });
  std::vector<uint8_t> want;
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t row = i / 4, col = i % 4;
    const double v = acc[i] * double{sa[row]} * sb[col] / sy[row % 3];
    want.push_back(saturate<uint8_t>(round_half_even(v) + zy[row]));
  }
  expect_both_ways<uint8_t>("QLinearMatMul",
                            {ints<int8_t>({2, 3, 5}, a), floats({2, 3, 1}, sa),
                             ints<int8_t>({2, 3, 1}, za), ints<uint8_t>({5, 4}, b), floats({4}, sb),
                             ints<uint8_t>({4}, zb), floats({3}, sy), ints<uint8_t>({2, 3, 1}, zy)},
                            {}, 3, want, {1, 2, 4, 5, 6, 7});
}

TEST(IntegerProductsKernels, QLinearMatMulRowsSharingScalesOverSeveralColumnBlocks) {
  // A [2, 37, 6] over B [6, 300] (two blocks of columns, rows finished a few at a time): A's and
  // Y's parameters per tensor, B's scale per column, so every row requantizes each block with the
  // multipliers its neighbours computed; the bytes must still be each element's.
  const auto a = random_ints<uint8_t>(444, 71);
  const auto b = random_ints<int8_t>(1800, 72, -100, 100);
  std::vector<float> sb(300);
  for (size_t j = 0; j < sb.size(); ++j) sb[j] = std::ldexp(1.0F, static_cast<int>(j % 5) - 9);
  const auto acc = reference_matmul(
      a, {2, 37, 6}, b, {1, 6, 300}, {2, 37, 300}, [](int64_t, int64_t) { return int64_t{131}; },
      [](int64_t, int64_t) { return int64_t{0}; });
  std::vector<uint8_t> want;
  for (size_t i = 0; i < acc.size(); ++i) {
    const double v = acc[i] * 0.5 * sb[i % 300] / 0.25;
    want.push_back(saturate<uint8_t>(round_half_even(v) + 77));
  }
  expect_both_ways<uint8_t>(
      "QLinearMatMul",
      {ints<uint8_t>({2, 37, 6}, a), scalar_f(0.5F), ints<uint8_t>({}, {131}),
       ints<int8_t>({6, 300}, b), floats({300}, sb),
       ints<int8_t>({300}, std::vector<int8_t>(300, 0)), scalar_f(0.25F), ints<uint8_t>({}, {77})},
      {}, 3, want, {1, 2, 4, 5, 6, 7});
}

// ---- convolutions against a reference

struct ConvCase {
  int64_t n = 1, c = 4, h = 6, w = 7, m = 6, kh = 3, kw = 2, group = 2;
  Ints strides{2, 1}, dilations{1, 2}, pads{1, 0, 2, 1};
};

// [N, M, OH, OW] int32 sums of a 2-D convolution; the padding reads as x's zero point.
template <class TX, class TW>
std::vector<int32_t> reference_conv(const ConvCase& k, const std::vector<TX>& x, int zx,
                                    const std::vector<TW>& w, const std::vector<int>& zw,
                                    int64_t oh, int64_t ow) {
  const int64_t cg = k.c / k.group, mg = k.m / k.group;
  std::vector<int32_t> y;
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t oc = 0; oc < k.m; ++oc) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          int64_t acc = 0;
          for (int64_t ic = 0; ic < cg; ++ic) {
            for (int64_t a = 0; a < k.kh; ++a) {
              for (int64_t b = 0; b < k.kw; ++b) {
                const int64_t ih = i * k.strides[0] - k.pads[0] + a * k.dilations[0];
                const int64_t iw = j * k.strides[1] - k.pads[1] + b * k.dilations[1];
                const bool inside = ih >= 0 && ih < k.h && iw >= 0 && iw < k.w;
                const int64_t c = oc / mg * cg + ic;
                const int64_t xv = inside ? int64_t{x[((n * k.c + c) * k.h + ih) * k.w + iw]} : zx;
                // The weight as a number (int8 weights are signed).
                // NOLINTNEXTLINE(bugprone-signed-char-misuse)
                const int64_t wv = w[((oc * cg + ic) * k.kh + a) * k.kw + b];
                acc += (xv - zx) * (wv - zw[static_cast<size_t>(oc)]);
              }
            }
          }
          y.push_back(static_cast<int32_t>(acc));
        }
      }
    }
  }
  return y;
}

std::vector<Wire> conv_attrs(const ConvCase& k) {
  return {attr("strides", k.strides), attr("dilations", k.dilations), attr("pads", k.pads),
          attr("group", k.group)};
}

int64_t out_extent(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pads) {
  return (in + pads - ((kernel - 1) * dilation + 1)) / stride + 1;
}

TEST(IntegerProductsKernels, ConvIntegerGroupsStridesDilationsPaddingPerChannelZeroPoints) {
  ConvCase k;
  k.n = 2;
  const int64_t oh = out_extent(k.h, k.kh, 2, 1, 1 + 2);
  const int64_t ow = out_extent(k.w, k.kw, 1, 2, 0 + 1);
  const auto x = random_ints<uint8_t>(static_cast<size_t>(k.n * k.c * k.h * k.w), 21);
  const auto w = random_ints<int8_t>(static_cast<size_t>(k.m * 2 * k.kh * k.kw), 22);
  const auto zw8 = random_ints<int8_t>(static_cast<size_t>(k.m), 23);
  const std::vector<int> zw(zw8.begin(), zw8.end());
  const auto want = reference_conv(k, x, 77, w, zw, oh, ow);
  expect_both_ways<int32_t>(
      "ConvInteger",
      {ints<uint8_t>({k.n, k.c, k.h, k.w}, x), ints<int8_t>({k.m, 2, k.kh, k.kw}, w),
       ints<uint8_t>({}, {77}), ints<int8_t>({k.m}, zw8)},
      conv_attrs(k), 1, want);
}

TEST(IntegerProductsKernels, ConvIntegerSameUpperPadding) {
  ConvCase k;
  k.group = 1;
  k.c = 2;
  k.m = 3;
  k.strides = {2, 2};
  k.dilations = {1, 1};
  // SAME_UPPER over 6 x 7 with stride 2: 3 x 4 outputs, a total pad of 1 on each axis
  // ((3 - 1) 2 + 3 - 6 and (4 - 1) 2 + 2 - 7), at the end.
  k.pads = {0, 0, 1, 1};
  const auto x = random_ints<int8_t>(static_cast<size_t>(k.c * k.h * k.w), 24);
  const auto w = random_ints<int8_t>(static_cast<size_t>(k.m * k.c * k.kh * k.kw), 25);
  const auto want = reference_conv(k, x, -4, w, std::vector<int>(3, 0), 3, 4);
  expect_both_ways<int32_t>("ConvInteger",
                            {ints<int8_t>({1, k.c, k.h, k.w}, x),
                             ints<int8_t>({k.m, k.c, k.kh, k.kw}, w), ints<int8_t>({}, {-4})},
                            {attr("strides", Ints{2, 2}), attr("auto_pad", "SAME_UPPER")}, 1, want);
}

TEST(IntegerProductsKernels, QLinearConvPerChannelScalesBiasTiesAndSaturation) {
  ConvCase k;
  const int64_t oh = out_extent(k.h, k.kh, 2, 1, 1 + 2);
  const int64_t ow = out_extent(k.w, k.kw, 1, 2, 0 + 1);
  const auto x = random_ints<uint8_t>(static_cast<size_t>(k.c * k.h * k.w), 31);
  const auto w = random_ints<int8_t>(static_cast<size_t>(k.m * 2 * k.kh * k.kw), 32, -20, 20);
  const std::vector<int8_t> zw8{0, 0, 0, 0, 0, 0};
  const std::vector<float> w_scale{0.5F, 0.25F, 1.0F, 0.125F, 2.0F, 0.5F};
  const auto bias = random_ints<int32_t>(static_cast<size_t>(k.m), 33, -3000, 3000);
  const float x_scale = 0.5F, y_scale = 8.0F;
  const int zx = 120;
  const int8_t zy = -10;
  const auto acc = reference_conv(k, x, zx, w, std::vector<int>(6, 0), oh, ow);
  std::vector<int8_t> want;
  int ties = 0, saturated = 0;
  for (size_t i = 0; i < acc.size(); ++i) {
    const auto oc = static_cast<size_t>(static_cast<int64_t>(i) / (oh * ow) % k.m);
    const double v = (static_cast<double>(acc[i]) + bias[oc]) * x_scale * w_scale[oc] / y_scale;
    ties += v - std::floor(v) == 0.5 ? 1 : 0;
    const double q = round_half_even(v) + zy;
    saturated += q < -128 || q > 127 ? 1 : 0;
    want.push_back(saturate<int8_t>(q));
  }
  expect_both_ways<int8_t>(
      "QLinearConv",
      {ints<uint8_t>({1, k.c, k.h, k.w}, x), scalar_f(x_scale), ints<uint8_t>({}, {zx}),
       ints<int8_t>({k.m, 2, k.kh, k.kw}, w), floats({6}, w_scale), ints<int8_t>({6}, zw8),
       scalar_f(y_scale), ints<int8_t>({}, {zy}), ints<int32_t>({6}, bias)},
      conv_attrs(k), 3, want, {1, 4, 6});
  EXPECT_GT(ties, 0);
  EXPECT_GT(saturated, 0);
}

TEST(IntegerProductsKernels, ConvIntegerOneAndThreeSpatialDims) {
  // 1-D: x [1, 1, 5] = 1..5, w [1, 1, 2] = [1, -1], zero points 0: y[i] = x[i] - x[i + 1].
  expect_both_ways<int32_t>(
      "ConvInteger", {ints<uint8_t>({1, 1, 5}, {1, 2, 4, 8, 16}), ints<int8_t>({1, 1, 2}, {1, -1})},
      {}, 1, {-1, -2, -4, -8});
  // 3-D: a 2 x 2 x 2 window of ones over 2 x 2 x 2 inputs 1..8 less 1: 0 + 1 + ... + 7 = 28.
  expect_both_ways<int32_t>(
      "ConvInteger",
      {ints<uint8_t>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
       ints<uint8_t>({1, 1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1}), ints<uint8_t>({}, {1})},
      {}, 1, {28});
}

// Channels enough for oneDNN's int8 jit convolution where the weights are constant: per-channel
// weight zero points (taken off through the window sums), uint8 weights (packed less 128),
// padding that must read as x's zero point, groups and strides.
ConvCase wide_conv() {
  ConvCase k;
  k.n = 2;
  k.c = 32;
  k.h = 7;
  k.w = 9;
  k.m = 32;
  k.kh = 3;
  k.kw = 3;
  k.group = 2;
  k.strides = {1, 2};
  k.dilations = {1, 1};
  k.pads = {1, 1, 1, 1};
  return k;
}

TEST(IntegerProductsKernels, ConvIntegerWideChannelsUint8WeightsPerChannelZeroPoints) {
  const ConvCase k = wide_conv();
  const int64_t oh = out_extent(k.h, 3, 1, 1, 2), ow = out_extent(k.w, 3, 2, 1, 2);
  const auto x = random_ints<uint8_t>(static_cast<size_t>(k.n * k.c * k.h * k.w), 41);
  const auto w = random_ints<uint8_t>(static_cast<size_t>(k.m * 16 * 9), 42);
  for (const bool all_128 : {true, false}) {
    // Zero points of 128 are what packing takes off; others leave a correction to make.
    std::vector<uint8_t> zw8(static_cast<size_t>(k.m), 128);
    if (!all_128) zw8 = random_ints<uint8_t>(static_cast<size_t>(k.m), 43);
    const std::vector<int> zw(zw8.begin(), zw8.end());
    expect_both_ways<int32_t>(
        "ConvInteger",
        {ints<uint8_t>({k.n, k.c, k.h, k.w}, x), ints<uint8_t>({k.m, 16, 3, 3}, w),
         ints<uint8_t>({}, {200}), ints<uint8_t>({k.m}, zw8)},
        conv_attrs(k), 1, reference_conv(k, x, 200, w, zw, oh, ow));
  }
}

TEST(IntegerProductsKernels, QLinearConvWideChannelsInt8Input) {
  ConvCase k = wide_conv();
  k.group = 1;
  const int64_t oh = out_extent(k.h, 3, 1, 1, 2), ow = out_extent(k.w, 3, 2, 1, 2);
  const auto x = random_ints<int8_t>(static_cast<size_t>(k.n * k.c * k.h * k.w), 44);
  const auto w = random_ints<int8_t>(static_cast<size_t>(k.m * 32 * 9), 45, -12, 12);
  const auto zw8 = random_ints<int8_t>(static_cast<size_t>(k.m), 46, -3, 3);
  const std::vector<int> zw(zw8.begin(), zw8.end());
  const auto bias = random_ints<int32_t>(static_cast<size_t>(k.m), 47, -5000, 5000);
  std::vector<float> w_scale;
  for (int64_t i = 0; i < k.m; ++i)
    w_scale.push_back(std::ldexp(1.0F, static_cast<int>(i % 5) - 3));
  const float x_scale = 0.25F, y_scale = 16.0F;
  const auto acc = reference_conv(k, x, -7, w, zw, oh, ow);
  std::vector<uint8_t> want;
  for (size_t i = 0; i < acc.size(); ++i) {
    const auto oc = static_cast<size_t>(static_cast<int64_t>(i) / (oh * ow) % k.m);
    const double v = (static_cast<double>(acc[i]) + bias[oc]) * x_scale * w_scale[oc] / y_scale;
    want.push_back(saturate<uint8_t>(round_half_even(v) + 128));
  }
  expect_both_ways<uint8_t>(
      "QLinearConv",
      {ints<int8_t>({k.n, k.c, k.h, k.w}, x), scalar_f(x_scale), ints<int8_t>({}, {-7}),
       ints<int8_t>({k.m, 32, 3, 3}, w), floats({k.m}, w_scale), ints<int8_t>({k.m}, zw8),
       scalar_f(y_scale), ints<uint8_t>({}, {128}), ints<int32_t>({k.m}, bias)},
      conv_attrs(k), 3, want, {1, 2, 4, 5, 6, 7, 8});
}

bool vnni() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto need = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_vnni);
  return (isa & need) == need;
}

// What preparing packs is what the row's packed hook declares (analysis predicts it from the
// hook), and it is held only where the weights are a constant.
TEST(IntegerProductsKernels, PackedWeightsAreWhatTheRowDeclares) {
  const ConvCase k = wide_conv();
  struct Case {
    std::string op;
    std::vector<std::optional<Tensor>> in;
    std::vector<Wire> attrs;
    size_t weights;
  };
  const std::vector<Case> cases{
      {"MatMulInteger",
       {ints<uint8_t>({3, 40}, random_ints<uint8_t>(120, 51)),
        ints<uint8_t>({40, 70}, random_ints<uint8_t>(2800, 52)), ints<uint8_t>({}, {9})},
       {},
       1},
      {"ConvInteger",
       {ints<uint8_t>({k.n, k.c, k.h, k.w},
                      random_ints<uint8_t>(static_cast<size_t>(k.n * k.c * k.h * k.w), 53)),
        ints<int8_t>({k.m, 16, 3, 3}, random_ints<int8_t>(static_cast<size_t>(k.m * 16 * 9), 54))},
       conv_attrs(k),
       1},
      // uint8 weights, packed less 128, and an int8 input.
      {"ConvInteger",
       {ints<int8_t>({k.n, k.c, k.h, k.w},
                     random_ints<int8_t>(static_cast<size_t>(k.n * k.c * k.h * k.w), 55)),
        ints<uint8_t>({k.m, 16, 3, 3},
                      random_ints<uint8_t>(static_cast<size_t>(k.m * 16 * 9), 56))},
       conv_attrs(k),
       1}};
  for (const Case& c : cases) {
    for (const bool constant : {false, true}) {
      PreparedRun r(c.op, c.in, c.attrs, 13);
      r.constants(constant ? std::vector<size_t>{c.weights} : std::vector<size_t>{});
      r.run();
      std::vector<graph::ConcreteTensor> ins, outs{{r.out(0).dtype, r.out(0).dims}};
      std::vector<bool> constants;
      for (size_t i = 0; i < c.in.size(); ++i) {
        ins.push_back({c.in[i]->dtype, c.in[i]->dims});
        constants.push_back(constant && i == c.weights);
      }
      const graph::OpSchema* row = runtime::op_registry().find("", c.op);
      const uint64_t declared = row->packed(r.node(), ins, outs, constants);
      EXPECT_EQ(r.state()->owned_bytes(), declared) << c.op;
      if (!constant) {
        EXPECT_EQ(declared, 0u) << c.op;
      } else if (vnni()) {
        EXPECT_GT(declared, 0u) << c.op
                                << ": oneDNN's int8 kernels run with VNNI, on packed weights";
      }
      EXPECT_NE(row->packed_inputs & (1U << c.weights), 0u) << c.op;
    }
  }
}

// ---- bad input: one line naming the node and the input

std::string load_error(const std::string& op, const std::vector<std::optional<Tensor>>& in,
                       const std::vector<Wire>& attrs = {}) {
  try {
    PreparedRun k(op, in, attrs, 13);
    return k.run_error();
  } catch (const Error& e) {
    return e.what();
  }
}

void expect_error(const std::string& got, const std::vector<std::string>& parts) {
  EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  EXPECT_NE(got.find("'n0'"), std::string::npos) << got;
  for (const std::string& p : parts) EXPECT_NE(got.find(p), std::string::npos) << got;
}

TEST(IntegerProductsKernels, ZeroPointOfAnotherDtypeThanItsTensorFails) {
  const auto a = ints<uint8_t>({2, 2}, {1, 2, 3, 4});
  expect_error(load_error("MatMulInteger", {a, a, ints<int8_t>({}, {1})}),
               {"a_zero_point", "int8"});
  expect_error(load_error("ConvInteger",
                          {ints<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}),
                           ints<int8_t>({1, 1, 1, 1}, {1}), std::nullopt, ints<uint8_t>({1}, {1})}),
               {"w_zero_point", "uint8"});
}

TEST(IntegerProductsKernels, ZeroPointOfTheWrongLengthFails) {
  const auto a = ints<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = ints<uint8_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_error(load_error("MatMulInteger", {a, b, ints<uint8_t>({3}, {1, 2, 3})}),
               {"a_zero_point", "[3]", "per row"});
  expect_error(load_error("MatMulInteger", {a, b, std::nullopt, ints<uint8_t>({3}, {1, 2, 3})}),
               {"b_zero_point", "[3]", "per column"});
  // A convolution's input zero point is a scalar.
  expect_error(
      load_error("ConvInteger", {ints<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}),
                                 ints<uint8_t>({1, 1, 1, 1}, {1}), ints<uint8_t>({2}, {1, 2})}),
      {"x_zero_point", "scalar"});
}

std::vector<std::optional<Tensor>> qlinear_matmul_inputs(float b_scale) {
  return {ints<uint8_t>({1, 2}, {1, 2}),
          scalar_f(1),
          ints<uint8_t>({}, {0}),
          ints<uint8_t>({2, 1}, {3, 4}),
          scalar_f(b_scale),
          ints<uint8_t>({}, {0}),
          scalar_f(1),
          ints<uint8_t>({}, {0})};
}

TEST(IntegerProductsKernels, ScaleZeroNegativeOrNanFailsWhenPreparingAConstant) {
  for (const float bad : {0.0F, -1.0F, std::nanf(""), std::numeric_limits<float>::infinity()}) {
    PreparedRun k("QLinearMatMul", qlinear_matmul_inputs(bad), {}, 13);
    k.constants({4});
    const std::string e = k.run_error();
    expect_error(e, {"b_scale", "positive"});
    EXPECT_FALSE(k.has_state()) << "refused while preparing: " << e;
  }
}

TEST(IntegerProductsKernels, ScaleComputedAtRunTimeIsCheckedWhenRunning) {
  PreparedRun k("QLinearMatMul", qlinear_matmul_inputs(-0.5F), {}, 13);
  k.constants({});  // nothing known while preparing: the run checks
  expect_error(k.run_error(), {"b_scale", "positive"});
  EXPECT_TRUE(k.has_state());
}

TEST(IntegerProductsKernels, ShapeMismatchesFail) {
  expect_error(load_error("MatMulInteger", {ints<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                            ints<uint8_t>({2, 2}, {1, 2, 3, 4})}),
               {"inner dims"});
  // QLinearConv's bias must hold one value per output channel.
  expect_error(
      load_error("QLinearConv",
                 {ints<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}), scalar_f(1), ints<uint8_t>({}, {0}),
                  ints<int8_t>({2, 1, 1, 1}, {1, 2}), scalar_f(1), ints<int8_t>({}, {0}),
                  scalar_f(1), ints<uint8_t>({}, {0}), ints<int32_t>({3}, {1, 2, 3})}),
      {"'B'", "[3]", "output channel"});
  // Operands of another dtype than uint8 and int8.
  expect_error(
      load_error("MatMulInteger", {ints<int32_t>({1, 1}, {1}), ints<uint8_t>({1, 1}, {1})}),
      {"'a'", "int32"});
}

}  // namespace
}  // namespace footprint::testing
