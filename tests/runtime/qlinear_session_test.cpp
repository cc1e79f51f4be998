// A QOperator chain as onnxruntime's quantizer writes one (QuantizeLinear, then com.microsoft's
// QLinearSigmoid, QLinearAdd, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool and
// QLinearSoftmax on uint8, then DequantizeLinear) run through runtime::Session inside its plan and
// predicted by analysis: the arena obtained is the one planned, the lookup tables built while
// preparing are the packed bytes analysis predicts (the sigmoid's 256 bytes, the softmax's 256
// floats), every value's dtype and bytes are as predicted, and the softmax's outputs are
// probabilities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/shape_check.hpp"

namespace footprint::graph {
namespace {

template <class T>
SharedValue value(DType t, std::vector<int64_t> dims, const std::vector<T>& v) {
  auto h = HostValue::make(t, std::move(dims));
  std::memcpy(h->data(), v.data(), h->bytes());
  return h;
}

constexpr std::string_view kMs = "com.microsoft";
constexpr float kSoftmaxScale = 1.0F / 256;

std::shared_ptr<const Model> build() {
  GraphBuilder b(runtime::op_registry());
  const auto scale = [&](float v) { return b.constant(value<float>(DType::float32, {}, {v})); };
  const auto zero = [&](uint8_t v) { return b.constant(value<uint8_t>(DType::uint8, {}, {v})); };
  const auto ms = [&](std::string_view op, const std::vector<Var>& in,
                      const std::vector<Attr>& attrs = {}) {
    return b.op(op, in, attrs, 1, kMs)[0];
  };
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(4), Dim::known(6), Dim::known(6)});
  const Var xs = scale(0.05F);
  const Var xz = zero(128);
  const Var q = b.op1("QuantizeLinear", {x, xs, xz});
  const Var sig = ms("QLinearSigmoid", {q, xs, xz, scale(1.0F / 255), zero(0)});
  const Var sum =
      ms("QLinearAdd", {q, xs, xz, sig, scale(1.0F / 255), zero(0), scale(0.06F), zero(100)});
  const Var cat =
      ms("QLinearConcat", {scale(0.06F), zero(100), sum, scale(0.06F), zero(100), q, xs, xz},
         {Attr::of("axis", int64_t{1})});
  const Var pooled =
      ms("QLinearAveragePool", {cat, scale(0.06F), zero(100), scale(0.05F), zero(90)},
         {Attr::of("kernel_shape", std::vector<int64_t>{2, 2}),
          Attr::of("strides", std::vector<int64_t>{2, 2})});
  const Var global =
      ms("QLinearGlobalAveragePool", {pooled, scale(0.05F), zero(90), scale(0.04F), zero(80)});
  const Var probs =
      ms("QLinearSoftmax", {global, scale(0.04F), zero(80), scale(kSoftmaxScale), zero(0)},
         {Attr::of("axis", int64_t{1}), Attr::of("opset", int64_t{13})});
  b.output(b.op1("DequantizeLinear", {probs, scale(kSoftmaxScale), zero(0)}), "y");
  return std::move(b.to_graph().model);
}

TEST(QLinearSession, RunsInsideItsPlanAsPredicted) {
  const std::shared_ptr<const Model> model = build();
  runtime::Session session(*model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{1, 4, 6, 6});
  auto xs = in[0].ref().span<float>();
  for (size_t e = 0; e < xs.size(); ++e) xs[e] = std::sin(static_cast<float>(e)) * 4;
  const std::vector<runtime::Tensor> out = session.run(in);

  const runtime::PreparedStats& p = session.prepared();
  EXPECT_EQ(p.steps, 8u);
  EXPECT_EQ(session.last_run().arena_bytes, p.planned_arena_bytes);
  // The sigmoid's table of 256 outputs and the softmax's of 256 exponentials.
  EXPECT_EQ(p.packed_weights_bytes, 256u + 256u * sizeof(float));

  const analysis::ModelProgram predicted =
      analysis::build_model_program(model, runtime::op_registry(), {});
  EXPECT_EQ(predicted.program.packed_bytes, p.packed_weights_bytes);
  EXPECT_EQ(predicted.timeline.weights_bytes, p.weights_bytes);
  const runtime::ShapeCheck check = runtime::check_shapes(predicted, session);
  EXPECT_EQ(check.difference, "");

  // Eight channels' probabilities: each in [0, 1], summing to 1 within a step per channel.
  const auto y = out.at(0).ref().span<const float>();
  ASSERT_EQ(y.size(), 8u);
  float total = 0;
  for (float v : y) {
    EXPECT_GE(v, 0.0F);
    EXPECT_LE(v, 1.0F);
    total += v;
  }
  EXPECT_NEAR(total, 1.0F, 8 * kSoftmaxScale);
}

TEST(QLinearSession, ElementwiseStepsWriteOverTheirDeadInput) {
  // x -> QuantizeLinear -> one QLinear op -> DequantizeLinear: the op's input dies there, so it
  // writes into the quantized x's buffer and the arena is that one buffer (two without in_place).
  // With the op's result also a graph output (its own buffer) the outputs are the same.
  constexpr int64_t kRows = 16;
  constexpr int64_t kCols = 64;
  constexpr int64_t kN = kRows * kCols;
  const auto chain = [&](std::string_view op, bool expose) {
    GraphBuilder b(runtime::op_registry());
    const auto scale = [&](float v) { return b.constant(value<float>(DType::float32, {}, {v})); };
    const auto zero = [&](uint8_t v) { return b.constant(value<uint8_t>(DType::uint8, {}, {v})); };
    const Var x = b.input("x", DType::float32, {Dim::known(kRows), Dim::known(kCols)});
    const Var q = b.op1("QuantizeLinear", {x, scale(0.05F), zero(128)});
    std::vector<Var> in{q, scale(0.05F), zero(128)};
    std::vector<Attr> attrs;
    if (op == "QLinearAdd" || op == "QLinearMul") {
      std::vector<uint8_t> row(kCols);
      for (int64_t c = 0; c < kCols; ++c) row[static_cast<size_t>(c)] = static_cast<uint8_t>(c * 4);
      in.push_back(b.constant(value<uint8_t>(DType::uint8, {kCols}, row)));
      in.push_back(scale(0.02F));
      in.push_back(zero(7));
    }
    if (op == "QLinearSoftmax") attrs.push_back(Attr::of("opset", int64_t{13}));
    const float out_scale = op == "QLinearSoftmax" ? 1.0F / 256 : 0.04F;
    in.push_back(scale(out_scale));
    in.push_back(zero(op == "QLinearSoftmax" ? 0 : 100));
    const Var v = b.op(op, in, attrs, 1, kMs)[0];
    if (expose) b.output(v, "q_out");
    b.output(
        b.op1("DequantizeLinear", {v, scale(out_scale), zero(op == "QLinearSoftmax" ? 0 : 100)}),
        "y");
    return std::move(b.to_graph().model);
  };
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{kRows, kCols});
  auto xs = in[0].ref().span<float>();
  for (size_t e = 0; e < xs.size(); ++e) xs[e] = std::sin(static_cast<float>(e) * 0.37F) * 6;

  for (const char* op :
       {"QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"}) {
    const std::shared_ptr<const Model> alone = chain(op, false);
    const std::shared_ptr<const Model> exposed = chain(op, true);
    runtime::Session in_place(*alone);
    const std::vector<runtime::Tensor> got = in_place.run(in);
    EXPECT_EQ(in_place.prepared().planned_arena_bytes, static_cast<uint64_t>(kN)) << op;
    EXPECT_EQ(in_place.last_run().arena_bytes, in_place.prepared().planned_arena_bytes) << op;
    runtime::Session apart(*exposed);
    const std::vector<runtime::Tensor> want = apart.run(in);
    const auto g = got.at(0).ref().span<const float>();
    const auto w = want.back().ref().span<const float>();
    ASSERT_EQ(g.size(), w.size()) << op;
    EXPECT_TRUE(std::equal(g.begin(), g.end(), w.begin())) << op;
    // Not all of one value.
    EXPECT_NE(*std::max_element(g.begin(), g.end()), *std::min_element(g.begin(), g.end())) << op;
  }
}

}  // namespace
}  // namespace footprint::graph
