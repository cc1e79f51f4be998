// graph::fuse's QDQ step as the runtime runs it: DequantizeLinear -> Conv / MatMul ->
// QuantizeLinear written the way onnxruntime's quantize_static writes it becomes one QLinearConv
// or QLinearMatMul, gives what the nodes as written give (the same int8 arithmetic: the outputs
// are equal, not close), in the arena the fused graph planned; a group whose bias is not at the
// product scale is left as written. Ops that only move elements (Transpose, MaxPool, Reshape,
// ...) between a DequantizeLinear and a QuantizeLinear of one scale run on the quantized tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

using testing::expect_same_varied_outputs;
using testing::Outcome;
using testing::run_once;
using testing::seeded;

SharedValue scalar_f(float v) {
  auto t = HostValue::make(DType::float32, {});
  t->span<float>()[0] = v;
  return t;
}

SharedValue scalar_u8(uint8_t v) {
  auto t = HostValue::make(DType::uint8, {});
  t->span<uint8_t>()[0] = v;
  return t;
}

// Weights of `dims` in int8, seeded, and their per-output-channel scales (axis 0) and zeros.
struct QuantWeights {
  SharedValue q, scale, zero;
};

QuantWeights weights(std::vector<int64_t> dims, int64_t channels, uint32_t seed) {
  QuantWeights w{HostValue::make(DType::int8, std::move(dims)),
                 HostValue::make(DType::float32, {channels}),
                 HostValue::zeros(DType::int8, {channels})};
  uint32_t s = seed;
  for (int8_t& e : w.q->span<int8_t>()) {
    s = s * 1664525U + 1013904223U;
    e = static_cast<int8_t>(static_cast<int>(s >> 24) - 128);
  }
  for (int64_t c = 0; c < channels; ++c) {
    w.scale->span<float>()[c] = 0.002F + 0.0005F * static_cast<float>(c % 5);
  }
  return w;
}

BuilderOptions opset13() {
  BuilderOptions o;
  o.opset = 13;  // per-axis DequantizeLinear
  return o;
}

Var dequantize(GraphBuilder& b, const Var& q, const Var& scale, const Var& zero, int64_t axis) {
  return b.op1("DequantizeLinear", {q, scale, zero}, {Attr::of("axis", axis)});
}

// x float [N, 8, 10, 10] -> Q -> DQ -> Conv 3x3 (8 -> 16, int8 weights per channel, int32 bias at
// `bias_scale_factor` x the product scale) -> Q -> DQ -> MatMul-free tail: y float.
BuiltGraph qdq_conv(float bias_scale_factor) {
  GraphBuilder b(runtime::op_registry(), opset13());
  const Var x = b.input("x", DType::float32,
                        {Dim::named("N"), Dim::known(8), Dim::known(10), Dim::known(10)});
  const float xs = 0.02F;
  const Var x_scale = b.constant(scalar_f(xs));
  const Var x_zero = b.constant(scalar_u8(128));
  const Var xq = b.op1("QuantizeLinear", {x, x_scale, x_zero});
  const Var xd = b.op1("DequantizeLinear", {xq, x_scale, x_zero});
  const QuantWeights w = weights({16, 8, 3, 3}, 16, 7);
  const Var wd = dequantize(b, b.constant(w.q), b.constant(w.scale), b.constant(w.zero), 0);
  auto bias = HostValue::make(DType::int32, {16});
  auto bias_scale = HostValue::make(DType::float32, {16});
  for (int64_t c = 0; c < 16; ++c) {
    bias->span<int32_t>()[c] = static_cast<int32_t>(c * 37 - 250);
    bias_scale->span<float>()[c] = xs * w.scale->span<float>()[c] * bias_scale_factor;
  }
  const Var bd = dequantize(b, b.constant(bias), b.constant(bias_scale),
                            b.constant(HostValue::zeros(DType::int32, {16})), 0);
  const Var c = b.conv(xd, wd, bd, {1, 1}, {1, 1, 1, 1});
  const Var y_scale = b.constant(scalar_f(0.05F));
  const Var y_zero = b.constant(scalar_u8(100));
  const Var yq = b.op1("QuantizeLinear", {c, y_scale, y_zero});
  b.output(b.op1("DequantizeLinear", {yq, y_scale, y_zero}), "y");
  return b.to_graph();
}

std::vector<runtime::Tensor> image(int64_t n) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{n, 8, 10, 10});
  seeded(in[0], 3, 4.0F);
  return in;
}

bool made(const Outcome& o, const std::string& op) {
  for (const std::string& line : o.prepared.patterns) {
    if (line.rfind(op + " ", 0) == 0) return true;
  }
  return false;
}

TEST(FuseQdqSession, AConvGroupRunsAsQLinearConvWithTheSameOutputs) {
  const BuiltGraph built = qdq_conv(1.0F);
  const Outcome fused = run_once(*built.model, true, image(2));
  const Outcome apart = run_once(*built.model, false, image(2));
  EXPECT_TRUE(made(fused, "QLinearConv")) << ::testing::PrintToString(fused.prepared.patterns);
  EXPECT_FALSE(made(apart, "QLinearConv"));
  EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes);
  EXPECT_LT(fused.obtained, apart.obtained);  // uint8 activations, no float copies between
  expect_same_varied_outputs(fused, apart);
}

TEST(FuseQdqSession, ABiasAtAnotherScaleIsLeftAsWritten) {
  const BuiltGraph built = qdq_conv(1.5F);
  const Outcome o = run_once(*built.model, true, image(1));
  EXPECT_FALSE(made(o, "QLinearConv")) << ::testing::PrintToString(o.prepared.patterns);
  EXPECT_EQ(o.obtained, o.prepared.planned_arena_bytes);
}

TEST(FuseQdqSession, AMatMulGroupRunsAsQLinearMatMul) {
  GraphBuilder b(runtime::op_registry(), opset13());
  const Var a = b.input("a", DType::float32, {Dim::named("N"), Dim::known(24)});
  const Var a_scale = b.constant(scalar_f(0.03F));
  const Var a_zero = b.constant(scalar_u8(120));
  const Var ad =
      b.op1("DequantizeLinear", {b.op1("QuantizeLinear", {a, a_scale, a_zero}), a_scale, a_zero});
  const QuantWeights w = weights({24, 12}, 12, 11);
  const Var wd = dequantize(b, b.constant(w.q), b.constant(w.scale), b.constant(w.zero), 1);
  const Var y_scale = b.constant(scalar_f(0.01F));
  const Var y_zero = b.constant(scalar_u8(128));
  const Var yq = b.op1("QuantizeLinear", {b.matmul(ad, wd), y_scale, y_zero});
  b.output(b.op1("DequantizeLinear", {yq, y_scale, y_zero}), "y");
  const BuiltGraph built = b.to_graph();
  std::vector<runtime::Tensor> in;
  in.emplace_back("a", DType::float32, std::vector<int64_t>{5, 24});
  seeded(in[0], 9, 6.0F);
  const Outcome fused = run_once(*built.model, true, in);
  const Outcome apart = run_once(*built.model, false, in);
  EXPECT_TRUE(made(fused, "QLinearMatMul")) << ::testing::PrintToString(fused.prepared.patterns);
  EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes);
  ASSERT_EQ(fused.y.size(), 60U);
  for (size_t i = 0; i < fused.y.size(); ++i) EXPECT_EQ(fused.y[i], apart.y[i]) << i;
}

// a [N, 24] -> Q -> DQ -> Gemm (int8 weights [12, 24] per output channel, transB, an int32 bias
// at the product scale; `alpha`) -> Q -> DQ: y.
BuiltGraph qdq_gemm(float alpha) {
  GraphBuilder b(runtime::op_registry(), opset13());
  const Var a = b.input("a", DType::float32, {Dim::named("N"), Dim::known(24)});
  const float as = 0.03F;
  const Var a_scale = b.constant(scalar_f(as));
  const Var a_zero = b.constant(scalar_u8(120));
  const Var ad =
      b.op1("DequantizeLinear", {b.op1("QuantizeLinear", {a, a_scale, a_zero}), a_scale, a_zero});
  const QuantWeights w = weights({12, 24}, 12, 13);
  const Var wd = dequantize(b, b.constant(w.q), b.constant(w.scale), b.constant(w.zero), 0);
  auto bias = HostValue::make(DType::int32, {12});
  auto bias_scale = HostValue::make(DType::float32, {12});
  for (int64_t c = 0; c < 12; ++c) {
    bias->span<int32_t>()[c] = static_cast<int32_t>(c * 53 - 300);
    bias_scale->span<float>()[c] = as * w.scale->span<float>()[c];
  }
  const Var cd = dequantize(b, b.constant(bias), b.constant(bias_scale),
                            b.constant(HostValue::zeros(DType::int32, {12})), 0);
  const Var gemm =
      b.op1("Gemm", {ad, wd, cd}, {Attr::of("transB", int64_t{1}), Attr::of("alpha", alpha)});
  const Var y_scale = b.constant(scalar_f(0.02F));
  const Var y_zero = b.constant(scalar_u8(128));
  const Var yq = b.op1("QuantizeLinear", {gemm, y_scale, y_zero});
  b.output(b.op1("DequantizeLinear", {yq, y_scale, y_zero}), "y");
  return b.to_graph();
}

std::vector<runtime::Tensor> rows(int64_t n) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("a", DType::float32, std::vector<int64_t>{n, 24});
  seeded(in[0], 21, 6.0F);
  return in;
}

TEST(FuseQdqSession, AGemmGroupRunsAsQGemmWithTheSameOutputs) {
  const BuiltGraph built = qdq_gemm(1.0F);
  const Outcome fused = run_once(*built.model, true, rows(5));
  const Outcome apart = run_once(*built.model, false, rows(5));
  EXPECT_TRUE(made(fused, "com.microsoft::QGemm"))
      << ::testing::PrintToString(fused.prepared.patterns);
  EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes);
  ASSERT_EQ(fused.y.size(), 60U);
  expect_same_varied_outputs(fused, apart);
}

TEST(FuseQdqSession, AGemmScalingItsProductIsLeftAsWritten) {
  const BuiltGraph built = qdq_gemm(0.5F);
  const Outcome o = run_once(*built.model, true, rows(3));
  EXPECT_FALSE(made(o, "com.microsoft::QGemm")) << ::testing::PrintToString(o.prepared.patterns);
  EXPECT_EQ(o.obtained, o.prepared.planned_arena_bytes);
}

// x -> Q -> DQ -> Transpose -> Q -> DQ -> MaxPool 2x2 -> Q -> DQ -> Reshape [N, -1] -> Q' -> DQ: y,
// every Q at x's scale and zero point except Q', at `last_scale`.
BuiltGraph qdq_movers(float last_scale) {
  GraphBuilder b(runtime::op_registry(), opset13());
  const Var x =
      b.input("x", DType::float32, {Dim::named("N"), Dim::known(6), Dim::known(6), Dim::known(4)});
  const Var s = b.constant(scalar_f(0.02F));
  const Var z = b.constant(scalar_u8(128));
  const auto qdq = [&](const Var& v, const Var& scale) {
    return b.op1("DequantizeLinear", {b.op1("QuantizeLinear", {v, scale, z}), scale, z});
  };
  Var v = qdq(x, s);
  v = qdq(b.op1("Transpose", {v}, {Attr::of("perm", std::vector<int64_t>{0, 3, 1, 2})}), s);
  v = qdq(b.op1("MaxPool", {v},
                {Attr::of("kernel_shape", std::vector<int64_t>{2, 2}),
                 Attr::of("strides", std::vector<int64_t>{2, 2})}),
          s);
  auto shape = HostValue::make(DType::int64, {2});
  shape->span<int64_t>()[0] = 0;
  shape->span<int64_t>()[1] = -1;
  b.output(qdq(b.op1("Reshape", {v, b.constant(shape)}), b.constant(scalar_f(last_scale))), "y");
  return b.to_graph();
}

std::vector<runtime::Tensor> channels_last_image(int64_t n) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{n, 6, 6, 4});
  seeded(in[0], 5, 3.0F);
  return in;
}

TEST(FuseQdqSession, MoversBetweenTheSameScalesRunOnTheQuantizedTensor) {
  const BuiltGraph built = qdq_movers(0.02F);
  const Outcome fused = run_once(*built.model, true, channels_last_image(2));
  const Outcome apart = run_once(*built.model, false, channels_last_image(2));
  for (const char* op : {"Transpose", "MaxPool", "Reshape"}) {
    EXPECT_TRUE(made(fused, op)) << op << ": " << ::testing::PrintToString(fused.prepared.patterns);
  }
  EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes);
  EXPECT_LT(fused.obtained, apart.obtained);  // no float copies between the movers
  ASSERT_EQ(fused.y.size(), 2U * 4 * 3 * 3);
  expect_same_varied_outputs(fused, apart);
}

TEST(FuseQdqSession, AMoverRequantizingToAnotherScaleIsLeftAsWritten) {
  const BuiltGraph built = qdq_movers(0.03F);
  const Outcome fused = run_once(*built.model, true, channels_last_image(1));
  const Outcome apart = run_once(*built.model, false, channels_last_image(1));
  EXPECT_FALSE(made(fused, "Reshape")) << ::testing::PrintToString(fused.prepared.patterns);
  EXPECT_TRUE(made(fused, "MaxPool"));
  EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes);
  ASSERT_EQ(fused.y.size(), apart.y.size());
  for (size_t i = 0; i < fused.y.size(); ++i) EXPECT_EQ(fused.y[i], apart.y[i]) << i;
}

}  // namespace
}  // namespace footprint::graph
