// com.microsoft's QLinear element, pool and concat ops (onnxruntime's QOperator format), prepared
// and run as the executor runs them, against values worked out by hand: scales chosen so the
// float arithmetic is exact, ties rounding to even, saturation at both ends, broadcasting, zero
// points on both sides, int8 and uint8; the lookup tables built when preparing (constant scales,
// declared as packed bytes) or at each run; and the bad operands refused naming the node and the
// input. Every expected value here is also what onnxruntime 1.32's CPU kernels give for the same
// node (checked once by hand); the quantized zoo (tests/quant_zoo) compares whole QOperator
// models with onnxruntime.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "footprint/graph/op_registry.hpp"
#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

Tensor u8(Ints dims, const std::vector<uint8_t>& v) {
  return Tensor::of(DType::uint8, std::move(dims), v);
}
Tensor i8(Ints dims, const std::vector<int8_t>& v) {
  return Tensor::of(DType::int8, std::move(dims), v);
}
Tensor u8(uint8_t v) {
  return u8({}, {v});
}
Tensor i8(int8_t v) {
  return i8({}, {v});
}
Tensor scale(float v) {
  return floats({}, {v});
}

std::vector<int> ints_of(const Tensor& t) {
  std::vector<int> v;
  for (size_t i = 0; i < t.numel(); ++i) {
    if (t.dtype == DType::int8) {
      v.push_back(t.values<int8_t>()[i]);
    } else {
      v.push_back(t.values<uint8_t>()[i]);
    }
  }
  return v;
}

const std::vector<size_t> kAllButData{1, 2, 3, 4, 5, 6, 7};

// Output 0 of com.microsoft::`op` run prepared (twice) on `in`, allocating nothing while running;
// `constants`: the inputs whose data preparing sees.
Tensor run(const std::string& op, std::vector<std::optional<Tensor>> in,
           std::vector<Wire> attrs = {}, std::vector<size_t> constants = kAllButData) {
  PreparedRun k("com.microsoft::" + op, std::move(in), std::move(attrs), 18);
  k.constants(std::move(constants)).run();
  EXPECT_EQ(k.allocations(), 0u) << op;
  return k.out(0);
}

std::string run_error(const std::string& op, std::vector<std::optional<Tensor>> in,
                      std::vector<Wire> attrs = {}, std::vector<size_t> constants = kAllButData) {
  try {
    PreparedRun k("com.microsoft::" + op, std::move(in), std::move(attrs), 18);
    return k.constants(std::move(constants)).run_error();
  } catch (const Error& e) {
    return e.what();  // refused while inferring
  }
}

// ---- QLinearAdd, QLinearMul

TEST(QLinearAddKernel, Uint8RoundsHalfToEvenAndSaturates) {
  // A: scale 0.5, zero 128; B: 0.25, 10; C: 0.5, 100. So C = A + B / 2 - 33 exactly:
  // 130 + 5.5 - 33 = 102.5 -> 102, 130 + 6.5 - 33 = 103.5 -> 104, 255 + 122.5 - 33 -> 255,
  // 0 + 0 - 33 -> 0, 40 + 0.5 - 33 = 7.5 -> 8.
  const Tensor y =
      run("QLinearAdd", {u8({5}, {130, 130, 255, 0, 40}), scale(0.5F), u8(128),
                         u8({5}, {11, 13, 245, 0, 1}), scale(0.25F), u8(10), scale(0.5F), u8(100)});
  EXPECT_EQ(y.dtype, DType::uint8);
  EXPECT_EQ(ints_of(y), (std::vector<int>{102, 104, 255, 0, 8}));
}

TEST(QLinearAddKernel, Int8BroadcastsEitherOperand) {
  // A: 0.5, 0; B: 1, 0; C: 1, 0, so C = A / 2 + B: ties 1.5 -> 2, 2.5 -> 2, -1.5 -> -2.
  const Tensor a = i8({2, 3}, {3, 5, -3, 127, -128, 1});
  // B [3] along the rows.
  const Tensor row = run("QLinearAdd", {a, scale(0.5F), i8(0), i8({3}, {0, 100, -128}), scale(1.0F),
                                        i8(0), scale(1.0F), i8(0)});
  // 1.5, 102.5, -129.5 | 63.5, 36, -127.5
  EXPECT_EQ(ints_of(row), (std::vector<int>{2, 102, -128, 64, 36, -128}));
  // B [2, 1] down the columns (one value along each row).
  const Tensor column = run("QLinearAdd", {a, scale(0.5F), i8(0), i8({2, 1}, {1, -2}), scale(1.0F),
                                           i8(0), scale(1.0F), i8(0)});
  // 2.5, 3.5, -0.5 | 61.5, -66, -1.5
  EXPECT_EQ(ints_of(column), (std::vector<int>{2, 4, 0, 62, -66, -2}));
  // A broadcast instead (a scalar), with zero points: A 0.5, -2; B 1, 3; C 1, -1:
  // C = (A + 2) / 2 + (B - 3) - 1.
  const Tensor scalar_a = run("QLinearAdd", {i8(7), scale(0.5F), i8(-2), i8({3}, {3, 4, 127}),
                                             scale(1.0F), i8(3), scale(1.0F), i8(-1)});
  // 4.5 + 0 - 1 = 3.5 -> 4, 4.5 + 1 - 1 = 4.5 -> 4, 4.5 + 124 - 1 -> 127
  EXPECT_EQ(ints_of(scalar_a), (std::vector<int>{4, 4, 127}));
}

TEST(QLinearMulKernel, Uint8RoundsHalfToEvenAndSaturates) {
  // A, B: 0.5, 100; C: 0.5, 128, so C = (A - 100)(B - 100) / 2 + 128:
  // 1 x 3 / 2 = 1.5 -> 129.5 -> 130; 1 x 1 -> 128.5 -> 128; 100 x 100 -> 255; -100 x 100 -> 0;
  // -3 x 5 = -7.5 -> 120.5 -> 120.
  const Tensor y = run("QLinearMul", {u8({5}, {101, 101, 200, 0, 97}), scale(0.5F), u8(100),
                                      u8({5}, {103, 101, 200, 200, 105}), scale(0.5F), u8(100),
                                      scale(0.5F), u8(128)});
  EXPECT_EQ(ints_of(y), (std::vector<int>{130, 128, 255, 0, 120}));
}

TEST(QLinearMulKernel, Int8WithAScalarOperandAndNoOutputZeroPoint) {
  // A: 0.25, 4; B (one value): 2, -1; C: 1 (no zero point): C = (A - 4) (B + 1) / 2.
  const Tensor y = run("QLinearMul", {i8({2, 2}, {5, 7, -128, 127}), scale(0.25F), i8(4), i8(2),
                                      scale(2.0F), i8(-1), scale(1.0F)});
  // 1 x 3 / 2 = 1.5 -> 2, 3 x 3 / 2 = 4.5 -> 4, -132 x 1.5 -> -128, 123 x 1.5 -> 127
  EXPECT_EQ(ints_of(y), (std::vector<int>{2, 4, -128, 127}));
}

// ---- QLinearSigmoid, QLinearLeakyRelu

TEST(QLinearSigmoidKernel, Int8ThroughItsTable) {
  // X: 1/16, 0; Y: 1/256, -128: y = round(256 sigmoid(x / 16)) - 128.
  const Tensor x = i8({9}, {-128, -16, -1, 0, 1, 8, 16, 40, 127});
  // sigmoid: 0.000335, 0.2689, 0.4844, 0.5, 0.5156, 0.6225, 0.7311, 0.9241, 0.99964
  const std::vector<int> want{-128, -59, -4, 0, 4, 31, 59, 109, 127};
  for (const std::vector<size_t>& constants :
       {kAllButData, std::vector<size_t>{}}) {  // table built when preparing, or per run
    PreparedRun k("com.microsoft::QLinearSigmoid",
                  {x, scale(1.0F / 16), i8(0), scale(1.0F / 256), i8(-128)});
    k.constants(constants).run();
    EXPECT_EQ(ints_of(k.out(0)), want);
    EXPECT_EQ(k.allocations(), 0u);
    // The table is the state's heap only when it was built while preparing.
    EXPECT_EQ(k.state()->owned_bytes(), constants.empty() ? 0u : 256u);
  }
}

TEST(QLinearLeakyReluKernel, Uint8RoundsTiesToEvenAndSaturates) {
  // X: 0.25, 128; alpha 0.5; Y: 0.5, 64: y = round(f((x - 128) / 4) * 2) + 64.
  const Tensor y =
      run("QLinearLeakyRelu",
          {u8({7}, {129, 131, 127, 122, 0, 255, 128}), scale(0.25F), u8(128), scale(0.5F), u8(64)},
          {attr_float("alpha", 0.5F)});
  // 0.25 -> 0.5 -> 0; 0.75 -> 1.5 -> 2; -0.125 -> -0.25 -> 0; -0.75 -> -1.5 -> -2;
  // -16 -> -32 -> 0 (saturated); 31.75 -> 63.5 -> 64 -> 128; 0 -> 64
  EXPECT_EQ(ints_of(y), (std::vector<int>{64, 66, 64, 62, 32, 128, 64}));
}

TEST(QLinearLeakyReluKernel, DefaultAlphaIsOneHundredth) {
  // X: 1, 0 (int8); Y: 0.01, 0: negative x gives x exactly, positive saturate.
  const Tensor y =
      run("QLinearLeakyRelu", {i8({3}, {-50, -128, 2}), scale(1.0F), i8(0), scale(0.01F)});
  EXPECT_EQ(ints_of(y), (std::vector<int>{-50, -128, 127}));
}

// ---- QLinearSoftmax

Wire opset(int64_t v) {
  return attr("opset", v);
}

TEST(QLinearSoftmaxKernel, EqualElementsShareTheRowAndSaturateAtOne) {
  // Y: 1/256, 0: a row of n equal elements gives 256 / n each.
  EXPECT_EQ(ints_of(run("QLinearSoftmax",
                        {u8({2, 4}, {7, 7, 7, 7, 200, 200, 0, 0}), scale(1.0F), u8(0),
                         scale(1.0F / 256), u8(0)},
                        {opset(13)})),
            // Row 2: exp(-200) is 0 in float beside exp(0): [128, 128, 0, 0].
            (std::vector<int>{64, 64, 64, 64, 128, 128, 0, 0}));
  // One element taking the whole row is 256: saturated to 255, and in int8 (zero point -128) to
  // 127.
  EXPECT_EQ(
      ints_of(run("QLinearSoftmax",
                  {u8({2}, {200, 0}), scale(1.0F), u8(0), scale(1.0F / 256), u8(0)}, {opset(13)})),
      (std::vector<int>{255, 0}));
  EXPECT_EQ(ints_of(run("QLinearSoftmax",
                        {i8({2}, {100, -100}), scale(1.0F), i8(0), scale(1.0F / 256), i8(-128)},
                        {opset(13)})),
            (std::vector<int>{127, -128}));
}

TEST(QLinearSoftmaxKernel, OpsetDecidesTheRows) {
  // x [2, 2, 2] with axis 1. Before opset 13 a row is axis 1 and after (4 elements); from 13 it
  // is axis 1 alone (2 elements, 2 apart); the default axis is 1 before 13, -1 from it.
  const Tensor x = u8({2, 2, 2}, {100, 0, 100, 0, 9, 9, 9, 9});
  const auto softmax = [&](std::vector<Wire> attrs) {
    return ints_of(
        run("QLinearSoftmax", {x, scale(1.0F), u8(3), scale(1.0F / 256), u8(0)}, std::move(attrs)));
  };
  // Rows {100, 0, 100, 0}, {9, 9, 9, 9}.
  EXPECT_EQ(softmax({opset(12), attr("axis", int64_t{1})}),
            (std::vector<int>{128, 0, 128, 0, 64, 64, 64, 64}));
  EXPECT_EQ(softmax({opset(12)}), softmax({opset(12), attr("axis", int64_t{1})}));
  // Rows {100, 100}, {0, 0}, {9, 9}, {9, 9}.
  EXPECT_EQ(softmax({opset(13), attr("axis", int64_t{1})}),
            (std::vector<int>{128, 128, 128, 128, 128, 128, 128, 128}));
  // Rows {100, 0}, {100, 0}, {9, 9}, {9, 9}.
  EXPECT_EQ(softmax({opset(13)}), (std::vector<int>{255, 0, 255, 0, 128, 128, 128, 128}));
}

TEST(QLinearSoftmaxKernel, WithinOneStepOfTheFloatSoftmax) {
  // Random rows of 10 against the softmax of the dequantized values: onnxruntime's integer form
  // (an output scale of floor(1 / y_scale)) moves an output by less than one step here
  // (1 / y_scale = 255.0 exactly would not move it at all).
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> v(30);
  for (uint8_t& e : v) e = static_cast<uint8_t>(byte(gen));
  const float xs = 0.05F;
  const float ys = 1.0F / 255;
  for (const std::vector<size_t>& constants : {kAllButData, std::vector<size_t>{}}) {
    PreparedRun k("com.microsoft::QLinearSoftmax",
                  {u8({3, 10}, v), scale(xs), u8(17), scale(ys), u8(0)}, {opset(13)});
    k.constants(constants).run();
    EXPECT_EQ(k.state()->owned_bytes(), constants.empty() ? 0u : 1024u);
    const std::vector<int> y = ints_of(k.out(0));
    for (size_t r = 0; r < 3; ++r) {
      double sum = 0;
      for (size_t i = 0; i < 10; ++i) sum += std::exp(xs * v[r * 10 + i]);
      for (size_t i = 0; i < 10; ++i) {
        const double want = std::exp(xs * v[r * 10 + i]) / sum / ys;
        EXPECT_LE(std::fabs(y[r * 10 + i] - want), 1.0) << r << "," << i;
      }
    }
  }
}

// ---- QLinearAveragePool, QLinearGlobalAveragePool

Wire ints_attr(const char* name, Ints v) {
  return attr(name, v);
}

TEST(QLinearAveragePoolKernel, CountsPadsOnlyWhenAsked) {
  // x [1, 1, 2, 2] = [[2, 4], [6, 9]] (zero point 10), windows 2x2 with one pad all round and
  // stride 2: each window holds one element. Y: 1, 3.
  const Tensor x = u8({1, 1, 2, 2}, {12, 14, 16, 19});
  const std::vector<Wire> window{ints_attr("kernel_shape", {2, 2}), ints_attr("pads", {1, 1, 1, 1}),
                                 ints_attr("strides", {2, 2})};
  EXPECT_EQ(
      ints_of(run("QLinearAveragePool", {x, scale(1.0F), u8(10), scale(1.0F), u8(3)}, window)),
      (std::vector<int>{5, 7, 9, 12}));
  // Counting the pads: means 0.5, 1, 1.5, 2.25, rounded with Y's zero point added first (as
  // onnxruntime does): 3.5 -> 4, 4, 4.5 -> 4, 5.25 -> 5.
  std::vector<Wire> with_pads = window;
  with_pads.push_back(attr("count_include_pad", int64_t{1}));
  EXPECT_EQ(
      ints_of(run("QLinearAveragePool", {x, scale(1.0F), u8(10), scale(1.0F), u8(3)}, with_pads)),
      (std::vector<int>{4, 4, 4, 5}));
}

TEST(QLinearAveragePoolKernel, Int8ChannelsLastAndSaturation) {
  // Two channels [N, H, W, C] = [1, 2, 3, 2]; window 2x2, stride 1, no pads; X: 0.5, -4;
  // Y: 0.25, -100: y = round(mean(x + 4) * 2) - 100.
  // channel 0: x [[0, 2, 4], [6, 8, 11]], dequantized [[2, 3, 4], [5, 6, 7.5]]: means 4 and
  //   5.125, / 0.25 = 16 and 20.5 -> -84 and -79.5 -> -80.
  // channel 1 values 60 each: means 60 -> 240 -> -100 + 240 saturates to 127.
  const Tensor x = i8({1, 2, 3, 2}, {0, 116, 2, 116, 4, 116, 6, 116, 8, 116, 11, 116});
  const std::vector<Wire> window{ints_attr("kernel_shape", {2, 2}),
                                 attr("channels_last", int64_t{1})};
  const Tensor y =
      run("QLinearAveragePool", {x, scale(0.5F), i8(-4), scale(0.25F), i8(-100)}, window);
  EXPECT_EQ(y.dims, (Ints{1, 1, 2, 2}));
  EXPECT_EQ(ints_of(y), (std::vector<int>{-84, 127, -80, 127}));
}

TEST(QLinearAveragePoolKernel, OneSpatialDimWithAnUnevenLastWindow) {
  // x [1, 1, 5] = 1..5, kernel 2, stride 2, ceil_mode: windows {1, 2}, {3, 4}, {5}: 1.5 -> 2,
  // 3.5 -> 4, 5.
  const Tensor y = run(
      "QLinearAveragePool",
      {u8({1, 1, 5}, {1, 2, 3, 4, 5}), scale(1.0F), u8(0), scale(1.0F), u8(0)},
      {ints_attr("kernel_shape", {2}), ints_attr("strides", {2}), attr("ceil_mode", int64_t{1})});
  EXPECT_EQ(ints_of(y), (std::vector<int>{2, 4, 5}));
}

TEST(QLinearGlobalAveragePoolKernel, BothLayoutsBothTypes) {
  // [1, 2, 2, 2]: channel 0 {1, 2, 3, 4} -> 2.5 -> 2, channel 1 {1, 2, 3, 6} -> 3.
  const Tensor nchw = u8({1, 2, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 6});
  const Tensor y = run("QLinearGlobalAveragePool", {nchw, scale(1.0F), u8(0), scale(1.0F), u8(0)});
  EXPECT_EQ(y.dims, (Ints{1, 2, 1, 1}));
  EXPECT_EQ(ints_of(y), (std::vector<int>{2, 3}));
  // The same channels-last, int8, zero points -3 and 5, Y's scale 0.5: channel 0 (x + 3) = {1, 2,
  // 3, 4} -> 2.5 / 0.5 = 5 + 5 = 10; channel 1 -> 3 / 0.5 + 5 = 11.
  const Tensor nhwc = i8({1, 2, 2, 2}, {-2, -2, -1, -1, 0, 0, 1, 3});
  const Tensor z = run("QLinearGlobalAveragePool", {nhwc, scale(1.0F), i8(-3), scale(0.5F), i8(5)},
                       {attr("channels_last", int64_t{1})});
  EXPECT_EQ(z.dims, (Ints{1, 1, 1, 2}));
  EXPECT_EQ(ints_of(z), (std::vector<int>{10, 11}));
  // Saturation: a mean of 200 at Y's scale 0.5 is 400.
  EXPECT_EQ(ints_of(run("QLinearGlobalAveragePool",
                        {u8({1, 1, 1, 2}, {200, 200}), scale(1.0F), u8(0), scale(0.5F), u8(0)})),
            (std::vector<int>{255}));
}

// ---- QLinearConcat

TEST(QLinearConcatKernel, CopiesWhatIsQuantizedAsYAndRequantizesTheRest) {
  // Y: 1, 0. a (1, 0) is copied; b (0.5, 10) becomes round((b - 10) / 2): 11 -> 0.5 -> 0,
  // 13 -> 1.5 -> 2, 5 -> -2.5 -> saturated 0, 255 -> 122.5 -> 122.
  const Tensor a = u8({2, 1}, {7, 250});
  const Tensor b = u8({2, 2}, {11, 13, 5, 255});
  const Tensor y =
      run("QLinearConcat", {scale(1.0F), u8(0), a, scale(1.0F), u8(0), b, scale(0.5F), u8(10)},
          {attr("axis", int64_t{1})}, {0, 1, 3, 4, 6, 7});
  EXPECT_EQ(y.dims, (Ints{2, 3}));
  EXPECT_EQ(ints_of(y), (std::vector<int>{7, 0, 2, 250, 0, 122}));
  // int8 along axis 0 with Y's zero point -1: b (2, 3) -> 2 (b - 3) - 1.
  const Tensor z = run("QLinearConcat",
                       {scale(1.0F), i8(-1), i8({1, 2}, {5, -128}), scale(1.0F), i8(-1),
                        i8({1, 2}, {4, 100}), scale(2.0F), i8(3)},
                       {attr("axis", int64_t{-2})}, {0, 1, 3, 4, 6, 7});
  EXPECT_EQ(ints_of(z), (std::vector<int>{5, -128, 1, 127}));
}

// ---- Bad operands

TEST(QLinearKernels, BadScalesAreRefusedNamingTheNodeAndInput) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const float bad : {0.0F, -1.0F, nan, std::numeric_limits<float>::infinity()}) {
    // A scale that was good when inferring and preparing (not a constant) and is bad when
    // running: the kernel checks it on each run.
    PreparedRun k("com.microsoft::QLinearAdd", {u8({2}, {1, 2}), scale(1.0F), u8(0),
                                                u8({2}, {1, 2}), scale(1.0F), u8(0), scale(1.0F)});
    k.constants({});
    std::memcpy(k.input_bytes(4).data(), &bad, sizeof(float));
    const std::string e = k.run_error();
    EXPECT_EQ(e.find("node 'n0' (QLinearAdd): B_scale (input 4) is "), 0u) << e;
    EXPECT_NE(e.find(": a scale must be positive and finite"), std::string::npos) << e;
    // A constant one: refused before anything runs (inference knows it).
    const std::string p = run_error("QLinearGlobalAveragePool", {u8({1, 1, 2, 2}, {1, 2, 3, 4}),
                                                                 scale(1.0F), u8(0), scale(bad)});
    EXPECT_NE(p.find("node 'n0' (QLinearGlobalAveragePool): y_scale (input 3) is "),
              std::string::npos)
        << p;
  }
}

TEST(QLinearKernels, ZeroPointsOfAnotherTypeOrShapeAreRefused) {
  const std::string type =
      run_error("QLinearSigmoid", {u8({2}, {1, 2}), scale(1.0F), i8(0), scale(1.0F), u8(0)});
  EXPECT_NE(type.find("X_zero_point (input 2) is int8 but X (input 0) is uint8"), std::string::npos)
      << type;
  const std::string shape =
      run_error("QLinearMul", {i8({2}, {1, 2}), scale(1.0F), i8(0), i8({2}, {1, 2}), scale(1.0F),
                               i8({2}, {0, 0}), scale(1.0F)});
  EXPECT_NE(shape.find("B_zero_point (input 5) has 2 elements along axis 0"), std::string::npos)
      << shape;
  const std::string scales =
      run_error("QLinearConcat", {floats({2}, {1, 1}), u8(0), u8({1}, {1}), scale(1.0F), u8(0)},
                {attr("axis", int64_t{0})}, {});
  EXPECT_NE(scales.find("Y_scale (input 0) has 2 elements"), std::string::npos) << scales;
}

TEST(QLinearKernels, RowsDeclareWhatTheyRun) {
  for (const char* op :
       {"QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax",
        "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearConcat"}) {
    const graph::OpSchema* s = runtime::op_registry().find("com.microsoft", op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_NE(s->kernel, nullptr) << op;
    EXPECT_EQ(s->kernel_dtypes, (DTypeSet{DType::int8, DType::uint8})) << op;
  }
}

}  // namespace
}  // namespace footprint::testing
