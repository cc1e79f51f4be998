// Per-channel affine maps folded into the weights before them (graph::fuse) as the runtime runs
// them: a BatchNormalization, then caffe2's Mul and Add, folded into a convolution through every
// kernel path (blocked, pointwise gemm, depthwise, grouped, 1-D), with and without its own bias,
// and a Mul and Add folded into a normalisation, give what the unfolded graph gives; the weights a
// run holds are the folded ones alone, the originals released while preparing, and analysis
// predicts both that and the prepare peak.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

SharedValue floats(std::vector<int64_t> dims, uint32_t seed, float scale, float offset = 0) {
  auto v = HostValue::make(DType::float32, std::move(dims));
  uint32_t s = seed;
  for (float& e : v->span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = (static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * scale + offset;
  }
  return v;
}

struct Layer {
  std::string name;
  std::vector<int64_t> input;   // [N, C, spatial...]
  std::vector<int64_t> weight;  // [M, C / group, kernel...]
  int64_t group = 1;
  bool bias = true;
};

std::vector<Layer> layers() {
  return {
      {"3x3 conv with bias (blocked)", {2, 16, 9, 9}, {32, 16, 3, 3}},
      {"pointwise conv without bias (gemm)", {1, 24, 7, 7}, {40, 24, 1, 1}, 1, false},
      {"depthwise conv", {1, 16, 10, 10}, {16, 1, 3, 3}, 16},
      {"grouped conv without bias", {1, 8, 6, 6}, {12, 4, 3, 3}, 2, false},
      {"1-D conv", {2, 6, 20}, {10, 6, 5}},
  };
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (const int64_t d : dims) n *= d;
  return n;
}

// conv -> BatchNormalization [-> Mul -> Add] -> Relu, the parameters far from an identity (a
// variance around 0.5 to 1.5, a mean and shift around 0) so that a fold left out shows.
BuiltGraph build(const Layer& l, bool affine = false) {
  GraphBuilder b(runtime::op_registry());
  std::vector<Dim> dims;
  for (const int64_t d : l.input) dims.push_back(Dim::known(d));
  const Var x = b.input("x", DType::float32, dims);
  const int64_t m = l.weight[0];
  std::vector<int64_t> ones(l.input.size() - 2, 1);
  std::vector<int64_t> pads(2 * ones.size(), 1);
  const Var c = b.conv(x, b.constant(floats(l.weight, 1, 0.6F), "w"),
                       l.bias ? b.constant(floats({m}, 2, 1.0F), "b") : Var(), ones, pads, l.group);
  const Var bn = b.op1("BatchNormalization",
                       {c, b.constant(floats({m}, 3, 1.0F, 1.0F)), b.constant(floats({m}, 4, 1.0F)),
                        b.constant(floats({m}, 5, 1.0F)), b.constant(floats({m}, 6, 1.0F, 1.0F))},
                       {Attr::of("epsilon", 1e-3F)});
  std::vector<int64_t> per_channel(l.input.size() - 1, 1);
  per_channel[0] = m;
  const Var y = affine ? b.add(b.mul(bn, b.constant(floats(per_channel, 7, 1.0F, 1.0F))),
                               b.constant(floats(per_channel, 8, 1.0F)))
                       : bn;
  b.output(b.relu(y), "y");
  return b.to_graph();
}

std::vector<runtime::Tensor> inputs_for(const Layer& l) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, l.input);
  testing::seeded(in[0], 9, 4.0F);
  return in;
}

using testing::expect_same_outputs;
using Ran = testing::Outcome;

Ran run(const graph::Model& model, const Layer& l, bool fuse) {
  return testing::run_once(model, fuse, inputs_for(l));
}

TEST(FoldChannelAffineSession, FoldedConvolutionsGiveTheNormalisedOutputs) {
  for (const Layer& l : layers()) {
    const BuiltGraph built = build(l);
    const Ran folded = run(*built.model, l, true);
    const Ran apart = run(*built.model, l, false);
    ASSERT_EQ(folded.prepared.patterns.size(), 1u) << l.name;
    EXPECT_EQ(folded.prepared.patterns[0].rfind("Conv+BatchNormalization", 0), 0u)
        << folded.prepared.patterns[0];
    EXPECT_EQ(folded.prepared.fused.size(), 1u) << l.name << ": the Relu runs in the Conv";
    EXPECT_EQ(folded.obtained, folded.prepared.planned_arena_bytes) << l.name;
    expect_same_outputs(folded, apart, 1e-5F, l.name);
    size_t positive = 0;
    for (const float v : apart.y) positive += v > 0 ? 1 : 0;
    // The Relu neither passed nor zeroed everything: the check compared real values.
    EXPECT_GT(positive, folded.y.size() / 5) << l.name;
    EXPECT_LT(positive, folded.y.size()) << l.name;
    // A run holds the folded weights and bias; the originals and the four parameters are read
    // only while preparing.
    const uint64_t m = static_cast<uint64_t>(l.weight[0]);
    const uint64_t w = static_cast<uint64_t>(numel(l.weight)) * sizeof(float);
    EXPECT_EQ(folded.prepared.weights_bytes, w + m * sizeof(float)) << l.name;
    EXPECT_EQ(apart.prepared.weights_bytes, w + (l.bias ? 5 : 4) * m * sizeof(float)) << l.name;
  }
}

TEST(FoldChannelAffineSession, MulAndAddFoldIntoTheConvolutionToo) {
  for (const Layer& l : layers()) {
    const BuiltGraph built = build(l, true);
    const Ran folded = run(*built.model, l, true);
    const Ran apart = run(*built.model, l, false);
    ASSERT_EQ(folded.prepared.patterns.size(), 3u) << l.name;
    EXPECT_EQ(folded.prepared.patterns[1].rfind("Conv+Mul", 0), 0u) << l.name;
    EXPECT_EQ(folded.prepared.patterns[2].rfind("Conv+Add", 0), 0u) << l.name;
    EXPECT_EQ(folded.obtained, folded.prepared.planned_arena_bytes) << l.name;
    expect_same_outputs(folded, apart, 2e-5F, l.name);
    const uint64_t m = static_cast<uint64_t>(l.weight[0]);
    const uint64_t w = static_cast<uint64_t>(numel(l.weight)) * sizeof(float);
    EXPECT_EQ(folded.prepared.weights_bytes, w + m * sizeof(float)) << l.name;
  }
}

// x -> BatchNormalization -> Mul -> Add -> Relu -> Conv: the Mul and Add fold into the
// normalisation's scale and shift, the Relu into the normalisation.
TEST(FoldChannelAffineSession, MulAndAddFoldIntoANormalisation) {
  const Layer l{"normalisation", {2, 8, 7, 7}, {12, 8, 3, 3}};
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(2), Dim::known(8), Dim::known(7), Dim::known(7)});
  const Var bn = b.op1("BatchNormalization",
                       {x, b.constant(floats({8}, 3, 1.0F, 1.0F)), b.constant(floats({8}, 4, 1.0F)),
                        b.constant(floats({8}, 5, 1.0F)), b.constant(floats({8}, 6, 1.0F, 1.0F))});
  const Var y = b.relu(b.add(b.mul(bn, b.constant(floats({8, 1, 1}, 7, 1.0F, 1.0F))),
                             b.constant(floats({8, 1, 1}, 8, 1.0F))));
  b.output(b.conv(y, b.constant(floats(l.weight, 1, 0.6F)), Var(), {1, 1}, {1, 1, 1, 1}), "z");
  const BuiltGraph built = b.to_graph();
  const Ran folded = run(*built.model, l, true);
  const Ran apart = run(*built.model, l, false);
  ASSERT_EQ(folded.prepared.patterns.size(), 2u);
  EXPECT_EQ(folded.prepared.patterns[0].rfind("BatchNormalization+Mul", 0), 0u);
  EXPECT_EQ(folded.prepared.patterns[1].rfind("BatchNormalization+Add", 0), 0u);
  EXPECT_EQ(folded.prepared.fused.size(), 1u) << "the Relu runs in the normalisation";
  EXPECT_EQ(folded.obtained, folded.prepared.planned_arena_bytes);
  expect_same_outputs(folded, apart, 2e-5F, l.name);
}

TEST(FoldChannelAffineSession, AnalysisPredictsThePreparePeakOfTheFold) {
  for (const Layer& l : layers()) {
    BuiltGraph built = build(l);
    const std::shared_ptr<const graph::Model> model = std::move(built.model);
    runtime::SessionOptions options;
    options.threads = 1;
    runtime::Session session(*model, options);
    session.prepare(inputs_for(l));
    const analysis::ModelProgram predicted =
        analysis::build_model_program(model, runtime::op_registry(), {});
    const runtime::PreparedStats& p = session.prepared();
    EXPECT_EQ(predicted.prepare.peak_bytes, p.prepare_buffers_peak_bytes) << l.name;
    EXPECT_EQ(predicted.prepare.kept_bytes, p.prepare_buffers_kept_bytes) << l.name;
    EXPECT_EQ(predicted.timeline.weights_bytes, p.weights_bytes) << l.name;
    // The original weights, the bias and the parameters: what the fold computes from.
    const uint64_t m = static_cast<uint64_t>(l.weight[0]);
    EXPECT_EQ(predicted.timeline.prepare_only_weights_bytes,
              static_cast<uint64_t>(numel(l.weight)) * sizeof(float) +
                  (l.bias ? 5 : 4) * m * sizeof(float))
        << l.name;
  }
}

}  // namespace
}  // namespace footprint::graph
