// graph::fuse as a specification: which activations fold into the node before them, which stay
// apart because fusing would hide a tensor someone reads, and the graph that is left (ids
// renumbered, producers and consumers consistent).
#include "footprint/graph/fuse.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "graph/graph_checks.hpp"

namespace footprint::graph {
namespace {

// The builtin rows, with Conv and MatMul taking epilogues as the runtime's kernels declare.
const OpRegistry& registry() {
  static const OpRegistry r = [] {
    OpRegistry copy = OpRegistry::builtin();
    copy.row("", "Conv").epilogue_dtypes = DTypeSet{DType::float32};
    copy.row("", "MatMul").epilogue_dtypes = DTypeSet{DType::float32};
    return copy;
  }();
  return r;
}

SharedValue floats(std::vector<int64_t> dims, float value) {
  auto v = HostValue::make(DType::float32, std::move(dims));
  for (float& e : v->span<float>()) e = value;
  return v;
}

Var input(GraphBuilder& b) {
  return b.input("x", DType::float32,
                 {Dim::named("N"), Dim::known(4), Dim::known(6), Dim::known(6)});
}

Var conv(GraphBuilder& b, const Var& x) {
  return b.conv(x, b.constant(floats({4, 4, 1, 1}, 0.5F)), Var(), {1, 1}, {0, 0, 0, 0});
}

using testing::expect_consistent;

TEST(Fuse, AReluAfterAConvBecomesItsEpilogue) {
  GraphBuilder b(registry());
  const Var x = input(b);
  b.output(b.relu(conv(b, x)), "y");
  BuiltGraph built = b.to_graph();
  Graph& g = built.graph;
  const FuseReport r = fuse(g);
  ASSERT_EQ(r.fused.size(), 1u);
  EXPECT_NE(r.fused[0].find("(Conv) + "), std::string::npos) << r.fused[0];
  EXPECT_NE(r.fused[0].find("(Relu)"), std::string::npos) << r.fused[0];
  ASSERT_EQ(g.nodes().size(), 1u);
  ASSERT_EQ(g.node(0).epilogues.size(), 1u);
  EXPECT_EQ(g.node(0).epilogues[0].op, EpilogueOp::relu);
  EXPECT_EQ(g.value(g.node(0).outputs[0]).name, "y");
  expect_consistent(g);
}

TEST(Fuse, NothingFusesWithoutAKernelThatTakesEpilogues) {
  GraphBuilder b(OpRegistry::builtin());
  const Var x = input(b);
  b.output(b.relu(conv(b, x)), "y");
  BuiltGraph built = b.to_graph();
  EXPECT_TRUE(fuse(built.graph).fused.empty());
  EXPECT_EQ(built.graph.nodes().size(), 2u);
}

TEST(Fuse, AnOutputSomeoneElseReadsStaysApart) {
  {  // also a graph output
    GraphBuilder b(registry());
    const Var c = conv(b, input(b));
    b.output(c, "c");
    b.output(b.relu(c), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).fused.empty());
  }
  {  // also read by an Add (a residual)
    GraphBuilder b(registry());
    const Var x = input(b);
    const Var c = conv(b, x);
    b.output(b.add(b.relu(c), c), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).fused.empty());
  }
  {  // a Sigmoid whose output is read beyond the Mul is not SiLU
    GraphBuilder b(registry());
    const Var c = conv(b, input(b));
    const Var s = b.op1("Sigmoid", {c});
    b.output(b.mul(c, s), "y");
    b.output(s, "s");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).fused.empty());
  }
}

TEST(Fuse, AClipFusesOnlyWithConstantBounds) {
  {
    GraphBuilder b(registry());
    auto lo = HostValue::make(DType::float32, {});
    lo->span<float>()[0] = 0;
    auto hi = HostValue::make(DType::float32, {});
    hi->span<float>()[0] = 6;
    b.output(b.clip(conv(b, input(b)), b.constant(lo), b.constant(hi)), "y");
    BuiltGraph built = b.to_graph();
    ASSERT_EQ(fuse(built.graph).fused.size(), 1u);
    const Epilogue& e = built.graph.node(0).epilogues.at(0);
    EXPECT_EQ(e.op, EpilogueOp::clip);
    EXPECT_EQ(e.alpha, 0.0F);
    EXPECT_EQ(e.beta, 6.0F);
  }
  {  // the upper bound is an input: known only when running
    GraphBuilder b(registry());
    const Var x = input(b);
    const Var hi = b.input("hi", DType::float32, {});
    b.output(b.clip(conv(b, x), Var(), hi), "y");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fuse(built.graph).fused.empty());
  }
}

TEST(Fuse, SiluAndChainsFoldInOrderAndLaterIdsShiftDown) {
  GraphBuilder b(registry());
  const Var x = input(b);
  const Var c1 = conv(b, x);
  const Var silu = b.mul(b.op1("Sigmoid", {c1}), c1);  // Mul(Sigmoid(c), c): either order
  const Var c2 = conv(b, silu);
  const Var act = b.op1("Tanh", {b.relu(c2)});
  b.output(b.add(act, x), "y");
  BuiltGraph built = b.to_graph();
  Graph& g = built.graph;
  const size_t values_before = g.values().size();
  const FuseReport r = fuse(g);
  EXPECT_EQ(r.fused.size(), 3u);
  EXPECT_EQ(r.nodes_removed, 4u);
  ASSERT_EQ(g.nodes().size(), 3u);  // Conv+SiLU, Conv+Relu+Tanh, Add
  ASSERT_EQ(g.node(0).epilogues.size(), 1u);
  EXPECT_EQ(g.node(0).epilogues[0].op, EpilogueOp::swish);
  ASSERT_EQ(g.node(1).epilogues.size(), 2u);
  EXPECT_EQ(g.node(1).epilogues[0].op, EpilogueOp::relu);
  EXPECT_EQ(g.node(1).epilogues[1].op, EpilogueOp::tanh);
  EXPECT_EQ(g.node(2).op_type, "Add");
  EXPECT_EQ(g.node(1).inputs[0], g.node(0).outputs[0]);
  EXPECT_EQ(g.node(2).inputs[0], g.node(1).outputs[0]);
  EXPECT_EQ(g.values().size(), values_before - 4);  // c1, sigmoid, c2, relu's outputs
  expect_consistent(g);
}

}  // namespace
}  // namespace footprint::graph
