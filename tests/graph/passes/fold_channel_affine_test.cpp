// graph::fuse's first step as a specification: an inference BatchNormalization that alone reads a
// convolution's output, every parameter a float32 constant, folds into the convolution (a
// footprint::FoldBatchNorm constant computes the new weights and bias, the Conv writes what the
// normalisation wrote), and so does a Mul or Add by a per-channel constant after a convolution or
// a normalisation (footprint::ChannelAffine constants scale its weights and bias); anything else
// that could see the tensor between them, or a parameter known only when running, or an operand
// that is not per channel, leaves both as they are.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "graph/graph_checks.hpp"

namespace footprint::graph {
namespace {

using testing::expect_consistent;

SharedValue filled(std::vector<int64_t> dims, float first) {
  auto v = HostValue::make(DType::float32, std::move(dims));
  float x = first;
  for (float& e : v->span<float>()) e = x += 0.125F;
  return v;
}

struct Net {
  bool bias = true;
  bool second_reader = false;  // the convolution's output also feeds an Add
  bool training = false;
  bool runtime_scale = false;  // the scale is a graph input
  bool runtime_weights = false;
  bool relu = true;
};

BuiltGraph build(const Net& net) {
  GraphBuilder b(OpRegistry::builtin());
  const Var x =
      b.input("x", DType::float32, {Dim::named("N"), Dim::known(4), Dim::known(6), Dim::known(6)});
  const Var w = net.runtime_weights
                    ? b.input("w", DType::float32,
                              {Dim::known(8), Dim::known(4), Dim::known(3), Dim::known(3)})
                    : b.constant(filled({8, 4, 3, 3}, 0), "w");
  const Var c =
      b.conv(x, w, net.bias ? b.constant(filled({8}, 1), "b") : Var(), {1, 1}, {1, 1, 1, 1});
  const Var scale = net.runtime_scale ? b.input("scale", DType::float32, {Dim::known(8)})
                                      : b.constant(filled({8}, 2), "scale");
  std::vector<Attr> attrs = {Attr::of("epsilon", 1e-3F)};
  if (net.training) attrs.push_back(Attr::of("training_mode", int64_t{1}));
  Var y = b.op1("BatchNormalization",
                {c, scale, b.constant(filled({8}, 3), "shift"), b.constant(filled({8}, 4), "mean"),
                 b.constant(filled({8}, 5), "var")},
                attrs);
  if (net.relu) y = b.relu(y);
  if (net.second_reader) y = b.add(y, c);
  b.output(y, "y");
  return b.to_graph();
}

const Node* find_op(const Graph& g, std::string_view op) {
  for (const Node& n : g.nodes()) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

TEST(FoldChannelAffine, ConvThenNormalizationBecomesAConvOfFoldedWeights) {
  for (const bool bias : {true, false}) {
    const std::string what = bias ? "with a bias" : "without a bias";
    BuiltGraph built = build({.bias = bias});
    Graph& g = built.graph;
    const std::string y = g.value(g.outputs()[0]).name;
    const FuseReport r = fuse(g);
    expect_consistent(g);
    ASSERT_EQ(r.patterns.size(), 1u) << what;
    EXPECT_EQ(r.patterns[0].rfind("Conv+BatchNormalization '", 0), 0u) << r.patterns[0];
    EXPECT_EQ(find_op(g, "BatchNormalization"), nullptr) << what;
    const Node* fold = find_op(g, "FoldBatchNorm");
    const Node* conv = find_op(g, "Conv");
    ASSERT_NE(fold, nullptr) << what;
    ASSERT_NE(conv, nullptr) << what;
    EXPECT_EQ(fold->domain, "footprint");
    // W, the four parameters, and the convolution's bias when it has one.
    ASSERT_EQ(fold->inputs.size(), bias ? 6u : 5u) << what;
    EXPECT_EQ(g.value(fold->inputs[0]).name, "w");
    EXPECT_FLOAT_EQ(attr_float(*fold, "epsilon", 0), 1e-3F);
    ASSERT_EQ(fold->outputs.size(), 2u);
    // The folded weights keep W's shape; the bias has one entry per output channel; both are
    // constants (computed when preparing, not per run).
    const Value& w2 = g.value(fold->outputs[0]);
    const Value& b2 = g.value(fold->outputs[1]);
    EXPECT_EQ(w2.shape.to_string(), "[8,4,3,3]");
    EXPECT_EQ(b2.shape.to_string(), "[8]");
    EXPECT_TRUE(w2.constant && b2.constant) << what;
    ASSERT_EQ(conv->inputs.size(), 3u);
    EXPECT_EQ(conv->inputs[1], fold->outputs[0]);
    EXPECT_EQ(conv->inputs[2], fold->outputs[1]);
    // The Conv writes what the normalisation wrote, which the Relu reads (with the runtime's
    // registry the Relu then becomes the Conv's epilogue: fold_channel_affine_session_test).
    const Node* relu = find_op(g, "Relu");
    ASSERT_NE(relu, nullptr);
    EXPECT_EQ(relu->inputs[0], conv->outputs[0]);
    EXPECT_EQ(g.value(relu->outputs[0]).name, y);
    EXPECT_TRUE(g.value(relu->outputs[0]).is_graph_output);
  }
}

TEST(FoldChannelAffine, AnythingElseThatSeesTheTensorBetweenKeepsBoth) {
  const std::vector<std::pair<std::string, Net>> cases = {
      {"the Conv's output read elsewhere", {.second_reader = true}},
      {"a training-mode normalisation", {.training = true, .relu = false}},
      {"a scale known only when running", {.runtime_scale = true}},
      {"weights known only when running", {.runtime_weights = true}},
  };
  for (const auto& [what, net] : cases) {
    BuiltGraph built = build(net);
    Graph& g = built.graph;
    const FuseReport r = fuse(g);
    expect_consistent(g);
    for (const std::string& p : r.patterns) {
      EXPECT_EQ(p.find("BatchNormalization"), std::string::npos) << what << ": " << p;
    }
    EXPECT_NE(find_op(g, "BatchNormalization"), nullptr) << what;
    EXPECT_EQ(find_op(g, "FoldBatchNorm"), nullptr) << what;
  }
}

size_t count_op(const Graph& g, std::string_view op) {
  size_t n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

// x -> [Conv] -> BatchNormalization -> Mul(per channel) -> Add(per channel) -> Relu, caffe2's
// chain; `operand` shapes the Mul's constant, `add_operand` the Add's.
BuiltGraph chain(bool conv, std::vector<int64_t> operand, std::vector<int64_t> add_operand,
                 bool conv_bias = true) {
  GraphBuilder b(OpRegistry::builtin());
  Var y =
      b.input("x", DType::float32, {Dim::named("N"), Dim::known(8), Dim::known(6), Dim::known(6)});
  if (conv) {
    y = b.conv(y, b.constant(filled({8, 8, 1, 1}, 0), "w"),
               conv_bias ? b.constant(filled({8}, 1), "b") : Var(), {1, 1}, {0, 0, 0, 0});
  } else {
    y = b.op1("BatchNormalization",
              {y, b.constant(filled({8}, 2), "scale"), b.constant(filled({8}, 3), "shift"),
               b.constant(filled({8}, 4), "mean"), b.constant(filled({8}, 5), "var")});
  }
  y = b.mul(y, b.constant(filled(std::move(operand), 6), "s"));
  y = b.add(y, b.constant(filled(std::move(add_operand), 7), "t"));
  b.output(b.relu(y), "y");
  return b.to_graph();
}

// fuse(g) leaves a consistent graph whose patterns are the folds `want` ("Conv+Mul", ...), in
// order, and no Mul or Add.
void expect_folds(Graph& g, const std::vector<std::string>& want) {
  const FuseReport r = fuse(g);
  expect_consistent(g);
  ASSERT_EQ(r.patterns.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.patterns[i].rfind(want[i] + " '", 0), 0u) << r.patterns[i];
  }
  EXPECT_EQ(count_op(g, "Mul") + count_op(g, "Add"), 0u);
}

TEST(FoldChannelAffine, MulAndAddAfterAConvolutionFoldIntoItsWeightsAndBias) {
  for (const auto& shape :
       {std::vector<int64_t>{8, 1, 1}, std::vector<int64_t>{1, 8, 1, 1}, std::vector<int64_t>{1}}) {
    BuiltGraph built = chain(true, shape, {1, 8, 1, 1});
    Graph& g = built.graph;
    expect_folds(g, {"Conv+Mul", "Conv+Add"});
    // The Mul scales the weights and the bias, the Add shifts the scaled bias.
    ASSERT_EQ(count_op(g, "ChannelAffine"), 3u);
    const Node* conv = find_op(g, "Conv");
    ASSERT_NE(conv, nullptr);
    const Node& w = g.node(g.value(conv->inputs[1]).producer);
    const Node& b = g.node(g.value(conv->inputs[2]).producer);
    EXPECT_EQ(w.op_type, "ChannelAffine");
    EXPECT_EQ(g.value(w.inputs[0]).name, "w");
    EXPECT_EQ(g.value(w.inputs[1]).name, "s");
    EXPECT_EQ(b.op_type, "ChannelAffine");
    EXPECT_EQ(b.inputs[1], kNoValue) << "the Add only shifts";
    EXPECT_EQ(g.value(b.inputs[2]).name, "t");
    EXPECT_EQ(g.value(g.node(g.value(b.inputs[0]).producer).inputs[0]).name, "b");
    EXPECT_TRUE(g.value(conv->inputs[1]).constant && g.value(conv->inputs[2]).constant);
    EXPECT_EQ(find_op(g, "Relu")->inputs[0], conv->outputs[0]);
  }
}

TEST(FoldChannelAffine, MulAndAddAfterANormalisationFoldIntoItsScaleAndShift) {
  BuiltGraph built = chain(false, {8, 1, 1}, {8, 1, 1});
  Graph& g = built.graph;
  expect_folds(g, {"BatchNormalization+Mul", "BatchNormalization+Add"});
  const Node* bn = find_op(g, "BatchNormalization");
  ASSERT_NE(bn, nullptr);
  // Scale and shift are computed; mean and variance stay the stored ones.
  EXPECT_EQ(g.node(g.value(bn->inputs[1]).producer).op_type, "ChannelAffine");
  EXPECT_EQ(g.node(g.value(bn->inputs[2]).producer).op_type, "ChannelAffine");
  EXPECT_EQ(g.value(bn->inputs[3]).name, "mean");
  EXPECT_EQ(g.value(bn->inputs[4]).name, "var");
  EXPECT_EQ(find_op(g, "Relu")->inputs[0], bn->outputs[0]);
}

TEST(FoldChannelAffine, OperandsThatAreNotPerChannelStayApart) {
  const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"a Mul by a per-column constant", {1, 1, 1, 6}},
      {"a Mul by a full-size constant", {1, 8, 6, 6}},
  };
  for (const auto& [what, operand] : cases) {
    BuiltGraph built = chain(true, operand, {1, 8, 1, 1});
    Graph& g = built.graph;
    const FuseReport r = fuse(g);
    expect_consistent(g);
    // Nothing folds into the convolution; the Mul, the Add after it (which has no host before
    // it) and the Relu run as one elementwise pass.
    ASSERT_EQ(r.patterns.size(), 1u) << what;
    EXPECT_EQ(r.patterns[0].rfind("footprint::Elementwise '", 0), 0u) << r.patterns[0];
    EXPECT_EQ(count_op(g, "ChannelAffine"), 0u) << what;
    EXPECT_EQ(count_op(g, "Elementwise"), 1u) << what;
    EXPECT_EQ(find_op(g, "Elementwise")->inputs.size(), 3u) << what << ": x, s, t";
  }
  // A convolution without a bias has nothing an Add could shift; the Mul before it folds.
  BuiltGraph built = chain(true, {8, 1, 1}, {1, 8, 1, 1}, false);
  Graph& g = built.graph;
  const FuseReport r = fuse(g);
  expect_consistent(g);
  ASSERT_EQ(r.patterns.size(), 2u);
  EXPECT_EQ(r.patterns[0].rfind("Conv+Mul '", 0), 0u) << r.patterns[0];
  // The Add and the Relu after it then run as one pass.
  EXPECT_EQ(r.patterns[1].rfind("footprint::Elementwise '", 0), 0u) << r.patterns[1];
  EXPECT_NE(r.patterns[1].find("as Add(x0, x1); Relu(s0)"), std::string::npos) << r.patterns[1];
  EXPECT_EQ(count_op(g, "ChannelAffine"), 1u) << "the weights alone";
}

}  // namespace
}  // namespace footprint::graph
