// graph::fuse's patterns as a specification: LayerNorm, GELU (erf and tanh) and MatMul + bias,
// each in the forms exporters write, become the one registry row that computes them; a form with
// any intermediate read outside the pattern, or a bias that is not per column, stays as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "graph/decomposed_ops.hpp"
#include "graph/graph_checks.hpp"

namespace footprint::graph {
namespace {

using testing::decomposed_layer_norm;
using testing::erf_gelu;
using testing::LayerNormForm;
using testing::linear;
using testing::tanh_gelu;

Var sequence(GraphBuilder& b, int64_t d) {
  return b.input("x", DType::float32, {Dim::named("N"), Dim::known(5), Dim::known(d)});
}

using testing::expect_consistent;

// Whether fusing rewrote a pattern into `op` (its report line starts "op '"); what stays apart
// may still run as one footprint::Elementwise pass.
bool made(const FuseReport& r, std::string_view op) {
  const std::string start = std::string(op) + " '";
  return std::any_of(r.patterns.begin(), r.patterns.end(),
                     [&](const std::string& line) { return line.rfind(start, 0) == 0; });
}

TEST(FusePatterns, EveryLayerNormFormBecomesOneLayerNormalization) {
  for (const int64_t opset : {14, 18}) {
    for (const bool pow : {true, false}) {
      for (const bool shift : {true, false}) {
        const std::string what = "opset " + std::to_string(opset) + (pow ? " Pow" : " Mul") +
                                 (shift ? " with shift" : " without shift");
        BuilderOptions options;
        options.opset = opset;
        GraphBuilder b(OpRegistry::builtin(), options);
        const Var x = sequence(b, 16);
        b.output(b.relu(decomposed_layer_norm(b, x, 16, {opset, pow, shift, 3})), "y");
        BuiltGraph built = b.to_graph();
        Graph& g = built.graph;
        const size_t before = g.nodes().size();
        const FuseReport r = fuse(g);
        ASSERT_EQ(r.patterns.size(), 1u) << what;
        EXPECT_EQ(r.patterns[0].rfind("LayerNormalization '", 0), 0u) << r.patterns[0];
        const size_t replaced = shift ? 9 : 8;
        EXPECT_NE(r.patterns[0].find("from " + std::to_string(replaced) + " nodes"),
                  std::string::npos)
            << r.patterns[0];
        ASSERT_EQ(g.nodes().size(), before - replaced + 1) << what;
        const Node& ln = g.node(0);
        EXPECT_EQ(ln.op_type, "LayerNormalization") << what;
        EXPECT_EQ(ln.inputs.size(), shift ? 3u : 2u) << what;
        EXPECT_EQ(ln.inputs[0], g.find("x")) << what;
        EXPECT_EQ(attr_int(ln, "axis", 0), 2) << what;
        EXPECT_FLOAT_EQ(attr_float(ln, "epsilon", 0), 1e-5F) << what;
        EXPECT_EQ(g.node(1).op_type, "Relu") << what;
        EXPECT_EQ(g.node(1).inputs[0], ln.outputs[0]) << what;
        expect_consistent(g);
      }
    }
  }
}

TEST(FusePatterns, ALayerNormWhoseDeviationIsReadElsewhereStaysApart) {
  {  // x - mean is also an output
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 8);
    const Var dev = b.sub(x, testing::mean_last(b, x, 14));
    const Var var =
        b.add(testing::mean_last(b, b.mul(dev, dev), 14), testing::float_scalar(b, 1e-5));
    b.output(b.mul(b.div(dev, b.op1("Sqrt", {var})), testing::float_scalar(b, 2)), "y");
    b.output(dev, "dev");
    BuiltGraph built = b.to_graph();
    EXPECT_FALSE(made(fuse(built.graph), "LayerNormalization"));
  }
  {  // the mean is over a leading axis: not a LayerNorm
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 8);
    const Var mean = b.op1("ReduceMean", {x}, {Attr::of("axes", std::vector<int64_t>{1})});
    const Var dev = b.sub(x, mean);
    const Var var =
        b.op1("ReduceMean", {b.mul(dev, dev)}, {Attr::of("axes", std::vector<int64_t>{1})});
    const Var normed = b.div(dev, b.op1("Sqrt", {b.add(var, testing::float_scalar(b, 1e-5))}));
    b.output(b.mul(normed, testing::float_scalar(b, 2)), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_FALSE(made(fuse(built.graph), "LayerNormalization"));
  }
}

TEST(FusePatterns, EveryGeluFormBecomesOneGelu) {
  struct Form {
    std::string name;
    std::function<Var(GraphBuilder&, const Var&)> make;
    size_t nodes;
    std::string approximate;
  };
  const std::vector<Form> forms = {
      {"erf (x c1) 0.5", [](GraphBuilder& b, const Var& x) { return erf_gelu(b, x, 0); }, 5,
       "none"},
      {"erf (x 0.5) c1", [](GraphBuilder& b, const Var& x) { return erf_gelu(b, x, 1); }, 5,
       "none"},
      {"erf (c1 0.5) x", [](GraphBuilder& b, const Var& x) { return erf_gelu(b, x, 2); }, 5,
       "none"},
      {"erf x / sqrt2 as x * (1/sqrt2)",
       [](GraphBuilder& b, const Var& x) { return erf_gelu(b, x, 0, true); }, 5, "none"},
      {"tanh with Pow", [](GraphBuilder& b, const Var& x) { return tanh_gelu(b, x, true); }, 8,
       "tanh"},
      {"tanh with x x x", [](GraphBuilder& b, const Var& x) { return tanh_gelu(b, x, false); }, 9,
       "tanh"},
  };
  for (const Form& f : forms) {
    GraphBuilder b(OpRegistry::builtin());
    // A Softmax before: a Relu there would run with the Gelu as one elementwise pass.
    const Var x = b.op1("Softmax", {sequence(b, 6)});
    b.output(f.make(b, x), "y");
    BuiltGraph built = b.to_graph();
    Graph& g = built.graph;
    const FuseReport r = fuse(g);
    ASSERT_EQ(r.patterns.size(), 1u) << f.name;
    EXPECT_EQ(r.nodes_removed, f.nodes - 1) << f.name;
    ASSERT_EQ(g.nodes().size(), 2u) << f.name;
    const Node& gelu = g.node(1);
    EXPECT_EQ(gelu.op_type, "Gelu") << f.name;
    EXPECT_EQ(gelu.inputs, std::vector<ValueId>{g.node(0).outputs[0]}) << f.name;
    EXPECT_EQ(attr_string(gelu, "approximate", "?"), f.approximate) << f.name;
    EXPECT_EQ(g.value(gelu.outputs[0]).name, "y") << f.name;
    expect_consistent(g);
  }
}

TEST(FusePatterns, AGeluWithAWrongConstantOrAnIntermediateReadElsewhereStaysApart) {
  {  // x * (1 + erf(x / sqrt 2)) * 0.6: not GELU
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 6);
    const Var c1 = b.add(b.op1("Erf", {b.div(x, testing::float_scalar(b, std::sqrt(2.0)))}),
                         testing::float_scalar(b, 1));
    b.output(b.mul(b.mul(x, c1), testing::float_scalar(b, 0.6)), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_FALSE(made(fuse(built.graph), "Gelu"));
  }
  {  // the erf is also an output
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 6);
    const Var e = b.op1("Erf", {b.div(x, testing::float_scalar(b, std::sqrt(2.0)))});
    const Var c1 = b.add(e, testing::float_scalar(b, 1));
    b.output(b.mul(b.mul(x, c1), testing::float_scalar(b, 0.5)), "y");
    b.output(e, "e");
    BuiltGraph built = b.to_graph();
    EXPECT_FALSE(made(fuse(built.graph), "Gelu"));
  }
}

TEST(FusePatterns, AMatMulAndAPerColumnBiasBecomeOneMatMulAdd) {
  for (const bool bias_first : {false, true}) {
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 12);
    b.output(b.relu(linear(b, x, 12, 20, 5, bias_first)), "y");
    BuiltGraph built = b.to_graph();
    Graph& g = built.graph;
    const FuseReport r = fuse(g);
    ASSERT_EQ(r.patterns.size(), 1u);
    ASSERT_EQ(g.nodes().size(), 2u);
    const Node& mm = g.node(0);
    EXPECT_EQ(mm.domain, "footprint");
    EXPECT_EQ(mm.op_type, "MatMulAdd");
    ASSERT_EQ(mm.inputs.size(), 3u);
    EXPECT_EQ(mm.inputs[0], g.find("x"));
    EXPECT_EQ(g.value(mm.inputs[2]).shape.dims.back().value(), 20);
    EXPECT_EQ(r.patterns[0].rfind("footprint::MatMulAdd '", 0), 0u) << r.patterns[0];
    expect_consistent(g);
  }
}

TEST(FusePatterns, ABiasThatIsNotPerColumnOrAProductReadTwiceStaysApart) {
  {  // an Add of a whole [5, 20] matrix: a residual, not a bias
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 12);
    const Var y = b.matmul(x, b.constant(testing::seeded_floats({12, 20}, 1, 1)));
    b.output(b.add(y, b.constant(testing::seeded_floats({5, 20}, 2, 1))), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).patterns.empty());
  }
  {  // the product also feeds a second node
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 12);
    const Var y = b.matmul(x, b.constant(testing::seeded_floats({12, 20}, 1, 1)));
    b.output(b.add(y, b.constant(testing::seeded_floats({20}, 2, 1))), "y");
    b.output(b.relu(y), "z");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).patterns.empty());
  }
}

// Q, Kt, V of 2 heads, 6 query rows, 5 keys; an additive mask [N, 1, 1, 5] and a causal-style
// keep condition [1, 1, 6, 5].
struct Heads {
  Var q, kt, v, add_mask, keep;
};

Heads heads(GraphBuilder& b) {
  const Dim n = Dim::named("N");
  Heads h;
  h.q = b.input("q", DType::float32, {n, Dim::known(2), Dim::known(6), Dim::known(4)});
  h.kt = b.input("kt", DType::float32, {n, Dim::known(2), Dim::known(4), Dim::known(5)});
  h.v = b.input("v", DType::float32, {n, Dim::known(2), Dim::known(5), Dim::known(3)});
  h.add_mask = b.input("mask", DType::float32, {n, Dim::known(1), Dim::known(1), Dim::known(5)});
  h.keep =
      b.input("keep", DType::boolean, {Dim::known(1), Dim::known(1), Dim::known(6), Dim::known(5)});
  return h;
}

TEST(FusePatterns, EveryAttentionFormBecomesOneAttention) {
  using F = testing::AttentionForm;
  struct Case {
    std::string name;
    F form;
    size_t nodes;
    float scale;
    size_t inputs;
  };
  const std::vector<Case> cases = {
      {"BERT: / c, + mask", {F::Scale::div, F::Mask::add, false}, 5, 0.125F, 4},
      {"GPT-2: / c, Where", {F::Scale::div, F::Mask::where, false}, 5, 0.125F, 6},
      {"ViT: scaled before, no mask", {F::Scale::none, F::Mask::none, false}, 3, 1.0F, 3},
      {"Swin: c *, + bias, Dropout", {F::Scale::mul, F::Mask::add, true}, 6, 0.125F, 4},
  };
  for (const Case& c : cases) {
    GraphBuilder b(OpRegistry::builtin());
    const Heads h = heads(b);
    const Var mask = c.form.mask == F::Mask::where ? h.keep : h.add_mask;
    b.output(testing::decomposed_attention(b, h.q, h.kt, h.v, mask, c.form), "y");
    BuiltGraph built = b.to_graph();
    Graph& g = built.graph;
    const FuseReport r = fuse(g);
    ASSERT_EQ(r.patterns.size(), 1u) << c.name;
    EXPECT_EQ(r.patterns[0].rfind("footprint::Attention '", 0), 0u) << r.patterns[0];
    EXPECT_NE(r.patterns[0].find("from " + std::to_string(c.nodes) + " nodes"), std::string::npos)
        << r.patterns[0];
    const auto it = std::find_if(g.nodes().begin(), g.nodes().end(),
                                 [](const Node& n) { return n.op_type == "Attention"; });
    ASSERT_NE(it, g.nodes().end()) << c.name;
    EXPECT_EQ(it->domain, "footprint");
    ASSERT_EQ(it->inputs.size(), c.inputs) << c.name;
    EXPECT_EQ(it->inputs[0], g.find("q"));
    EXPECT_EQ(it->inputs[1], g.find("kt"));
    EXPECT_EQ(it->inputs[2], g.find("v"));
    if (c.inputs == 4) {
      EXPECT_EQ(it->inputs[3], g.find("mask")) << c.name;
    }
    if (c.inputs == 6) {
      EXPECT_EQ(it->inputs[3], kNoValue);
      EXPECT_EQ(it->inputs[4], g.find("keep"));
    }
    EXPECT_FLOAT_EQ(attr_float(*it, "scale", 0), c.scale) << c.name;
    // A Div's constant is kept too: a 16-bit kernel divides by it, as the Div rounded.
    EXPECT_EQ(it->attribute("divisor") != nullptr, c.form.scale == F::Scale::div) << c.name;
    if (c.form.scale == F::Scale::div) {
      EXPECT_FLOAT_EQ(attr_float(*it, "divisor", 0), 8.0F) << c.name;
    }
    EXPECT_EQ(g.value(it->outputs[0]).name, "y");
    EXPECT_EQ(g.value(it->outputs[0]).shape.to_string(), "[N,2,6,3]");
    expect_consistent(g);
  }
}

// GPT-2's exports take the scores' size (w.size(-1)): the Shape then reads Q's and Kt's shapes.
TEST(FusePatterns, AttentionWhoseScoresShapeIsReadComputesItFromQAndKt) {
  GraphBuilder b(OpRegistry::builtin());
  const Heads h = heads(b);
  const Var s = b.div(b.matmul(h.q, h.kt), testing::float_scalar(b, 8));
  const Var p = b.op1("Softmax", {b.add(s, h.add_mask)}, {Attr::of("axis", int64_t{-1})});
  b.output(b.matmul(p, h.v), "y");
  b.output(b.op1("Shape", {s}), "shape");
  BuiltGraph built = b.to_graph();
  Graph& g = built.graph;
  const std::string before = g.value(*g.find("shape")).known->to_string();
  ASSERT_EQ(fuse(g).patterns.size(), 1u);
  const ValueId shape = *g.find("shape");
  const Node& concat = g.node(g.value(shape).producer);
  ASSERT_EQ(concat.op_type, "Concat");
  ASSERT_EQ(concat.inputs.size(), 2u);
  const Node& rows = g.node(g.value(concat.inputs[0]).producer);
  const Node& columns = g.node(g.value(concat.inputs[1]).producer);
  EXPECT_EQ(rows.op_type, "Shape");
  EXPECT_EQ(rows.inputs[0], g.find("q"));
  EXPECT_EQ(attr_int(rows, "end", 0), -1);
  EXPECT_EQ(columns.inputs[0], g.find("kt"));
  EXPECT_EQ(attr_int(columns, "start", 0), -1);
  ASSERT_TRUE(g.value(shape).known.has_value());
  EXPECT_EQ(g.value(shape).known->to_string(), before);
  expect_consistent(g);
}

TEST(FusePatterns, AttentionWhoseScoresAreReadElsewhereOrNormalisedOverAnotherAxisStaysApart) {
  {  // the scores are also an activation's input
    GraphBuilder b(OpRegistry::builtin());
    const Heads h = heads(b);
    const Var s = b.div(b.matmul(h.q, h.kt), testing::float_scalar(b, 8));
    const Var p = b.op1("Softmax", {b.add(s, h.add_mask)}, {Attr::of("axis", int64_t{-1})});
    b.output(b.matmul(p, h.v), "y");
    b.output(b.relu(s), "r");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).patterns.empty());
  }
  {  // Softmax over the query axis
    GraphBuilder b(OpRegistry::builtin());
    const Heads h = heads(b);
    const Var p =
        b.op1("Softmax", {b.add(b.matmul(h.q, h.kt), h.add_mask)}, {Attr::of("axis", int64_t{2})});
    b.output(b.matmul(p, h.v), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).patterns.empty());
  }
}

// Relu, a channel shuffle of 12 channels in 3 groups transposed by `perm`, Relu.
BuiltGraph shuffled(std::vector<int64_t> perm) {
  GraphBuilder b(OpRegistry::builtin());
  const Var x =
      b.input("x", DType::float32, {Dim::named("N"), Dim::known(12), Dim::known(5), Dim::known(5)});
  const Var y = testing::channel_shuffle(b, b.relu(x), 3, std::move(perm));
  b.output(b.relu(y), "y");
  return b.to_graph();
}

TEST(FusePatterns, AChannelShuffleBecomesOneChannelShuffle) {
  BuiltGraph built = shuffled({0, 2, 1, 3, 4});
  Graph& g = built.graph;
  const size_t before = g.nodes().size();
  const FuseReport r = fuse(g);
  expect_consistent(g);
  ASSERT_EQ(r.patterns.size(), 1u);
  EXPECT_EQ(r.patterns[0].rfind("footprint::ChannelShuffle '", 0), 0u) << r.patterns[0];
  ASSERT_EQ(g.nodes().size(), before - 2);
  const Node& shuffle = g.node(1);
  EXPECT_EQ(shuffle.op_type, "ChannelShuffle");
  EXPECT_EQ(attr_int(shuffle, "group", 0), 3);
  EXPECT_EQ(g.value(shuffle.outputs[0]).shape.to_string(), "[N,12,5,5]");
}

TEST(FusePatterns, ATransposeThatIsNotAShuffleOrIsReadElsewhereStaysApart) {
  {
    // Swapping H and W of the grouped view is not a permutation of the channels.
    BuiltGraph built = shuffled({0, 1, 2, 4, 3});
    const FuseReport r = fuse(built.graph);
    EXPECT_TRUE(r.patterns.empty());
  }
  GraphBuilder b(OpRegistry::builtin());
  const Var x =
      b.input("x", DType::float32, {Dim::named("N"), Dim::known(12), Dim::known(5), Dim::known(5)});
  const Var split = b.reshape(x, testing::int64s(b, {0, 3, 4, 5, 5}));
  const Var swapped =
      b.op1("Transpose", {split}, {Attr::of("perm", std::vector<int64_t>{0, 2, 1, 3, 4})});
  b.output(b.reshape(swapped, testing::int64s(b, {0, 12, 5, 5})), "y");
  b.output(swapped, "grouped");
  BuiltGraph built = b.to_graph();
  const FuseReport r = fuse(built.graph);
  expect_consistent(built.graph);
  EXPECT_TRUE(r.patterns.empty()) << "the transposed view is a graph output";
}

TEST(FusePatterns, EveryHardSwishFormBecomesOneHardSwish) {
  for (const int64_t opset : {9, 13}) {
    for (const bool divide_first : {false, true}) {
      for (const bool reciprocal : {false, true}) {
        const std::string what = "opset " + std::to_string(opset) +
                                 (divide_first ? ", divided first" : ", product first") +
                                 (reciprocal ? ", times 1/6" : ", over 6");
        BuilderOptions options;
        options.opset = opset;
        GraphBuilder b(OpRegistry::builtin(), options);
        const Var x = sequence(b, 8);
        b.output(
            b.op1("Softmax", {testing::decomposed_hard_swish(b, b.op1("Softmax", {x}),
                                                             {opset, divide_first, reciprocal})}),
            "y");
        BuiltGraph built = b.to_graph();
        Graph& g = built.graph;
        const size_t before = g.nodes().size();
        const FuseReport r = fuse(g);
        expect_consistent(g);
        ASSERT_EQ(r.patterns.size(), 1u) << what;
        EXPECT_EQ(r.patterns[0].rfind("HardSwish '", 0), 0u) << r.patterns[0];
        ASSERT_EQ(g.nodes().size(), before - 3) << what;
        EXPECT_EQ(g.node(1).op_type, "HardSwish") << what;
        EXPECT_EQ(g.node(1).inputs[0], g.node(0).outputs[0]) << what;
      }
    }
  }
}

TEST(FusePatterns, AShiftOtherThanThreeOrAProductReadElsewhereStaysApart) {
  {
    GraphBuilder b(OpRegistry::builtin());
    const Var x = sequence(b, 8);
    b.output(testing::decomposed_hard_swish(b, x, {.shift = 2}), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_FALSE(made(fuse(built.graph), "HardSwish"));
  }
  GraphBuilder b(OpRegistry::builtin());
  const Var x = sequence(b, 8);
  const Var shifted = b.add(x, testing::float_scalar(b, 3));
  const Var clipped = b.clip(shifted, testing::float_scalar(b, 0), testing::float_scalar(b, 6));
  const Var product = b.mul(x, clipped);
  b.output(b.div(product, testing::float_scalar(b, 6)), "y");
  b.output(product, "product");
  BuiltGraph built = b.to_graph();
  EXPECT_FALSE(made(fuse(built.graph), "HardSwish")) << "the product is a graph output";
}

}  // namespace
}  // namespace footprint::graph
