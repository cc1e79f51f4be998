// graph::fuse's elementwise runs as a specification: ops an exporter wrote one node each (Add,
// Sub, Mul, Div, and the unary ops the registry decodes as epilogues) become one
// footprint::Elementwise whose program says what it computes, wherever every tensor between them
// has the output's shape and nothing else reads it; what a host takes as an epilogue stays its.
// The program's text is specified here too (parse_chain, format_chain).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/elementwise_program.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "graph/decomposed_ops.hpp"
#include "graph/graph_checks.hpp"

namespace footprint::graph {
namespace {

using testing::expect_consistent;
using testing::float_scalar;
using testing::seeded_floats;

std::vector<const Node*> nodes_of(const Graph& g, std::string_view op) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes()) {
    if (n.op_type == op) out.push_back(&n);
  }
  return out;
}

// Fuses the graph, which stays consistent, and returns its footprint::Elementwise nodes.
std::vector<const Node*> fused_runs(BuiltGraph& built) {
  fuse(built.graph);
  expect_consistent(built.graph);
  return nodes_of(built.graph, "Elementwise");
}

std::string program_of(const Node& n) {
  return std::string(attr_string(n, "program", ""));
}

Var activation(GraphBuilder& b, std::string_view name, const std::vector<int64_t>& dims) {
  std::vector<Dim> d;
  d.reserve(dims.size());
  for (const int64_t e : dims) d.push_back(Dim::known(e));
  return b.input(std::string(name), DType::float32, d);
}

TEST(ElementwiseProgram, TextReadsBackToTheSameSteps) {
  ChainProgram p;
  const std::string text =
      "Sub(x0, x1); Clip(s0, -0.1, 6); LeakyRelu(s1, 0.01); Div(s2, x2); Mul(s3, s3); "
      "HardSigmoid(s4, 0.2, 0.5); Add(x0, s5); Gelu(s6); GeluTanh(s7); Sigmoid(s8); Tanh(s9); "
      "HardSwish(s10); Relu(s11); Swish(s12, 1)";
  ASSERT_EQ(parse_chain(text, 3, p), nullptr);
  ASSERT_EQ(p.size, 14u);
  EXPECT_EQ(p.steps[1].op, ChainOp::unary);
  EXPECT_EQ(p.steps[1].unary, EpilogueOp::clip);
  EXPECT_EQ(p.steps[1].alpha, -0.1F);
  EXPECT_EQ(p.steps[1].beta, 6.0F);
  EXPECT_EQ(p.steps[2].alpha, 0.01F);
  EXPECT_TRUE(p.steps[4].operands[0].step);
  EXPECT_EQ(p.steps[4].operands[1].index, 3);
  EXPECT_FALSE(p.steps[6].operands[0].step);
  EXPECT_EQ(format_chain(p.view()), text);
  // Floats are written so that they read back bit for bit.
  ChainStep odd;
  odd.op = ChainOp::unary;
  odd.unary = EpilogueOp::leaky_relu;
  odd.alpha = 1.0F / 3.0F;
  ChainProgram again;
  ASSERT_EQ(parse_chain(format_chain({&odd, 1}), 1, again), nullptr);
  EXPECT_EQ(again.steps[0].alpha, odd.alpha);
}

TEST(ElementwiseProgram, AMalformedProgramSaysWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "no step"},
      {"Add(x0, s0)", "not before it"},
      {"Add(x0, x2)", "does not have"},
      {"Pow(x0, x1)", "not one a program runs"},
      {"Add(x0)", "two operands"},
      {"Clip(x0, 0)", "lacks a parameter"},
      {"Relu(x0, x1)", "more operands"},
      {"Relu(x0) Relu(s0)", "does not end"},
      {"Add(y0, x1)", "x<i> or s<k>"},
  };
  for (const auto& [text, why] : bad) {
    ChainProgram p;
    const char* e = parse_chain(text, 2, p);
    ASSERT_NE(e, nullptr) << text;
    EXPECT_NE(std::string(e).find(why), std::string::npos) << text << ": " << e;
  }
  std::string long_program = "Relu(x0)";
  for (size_t k = 0; k < kMaxChainSteps; ++k) long_program += "; Relu(s" + std::to_string(k) + ")";
  ChainProgram p;
  EXPECT_NE(parse_chain(long_program, 1, p), nullptr);
}

TEST(FuseElementwise, AResidualAddAndItsReluBecomeOnePass) {
  GraphBuilder b(OpRegistry::builtin());
  const Var x = activation(b, "x", {2, 8, 5, 5});
  const Var r = activation(b, "r", {2, 8, 5, 5});
  b.output(b.relu(b.add(x, r)), "y");
  BuiltGraph built = b.to_graph();
  Graph& g = built.graph;
  const FuseReport report = fuse(g);
  expect_consistent(g);
  ASSERT_EQ(g.nodes().size(), 1u);
  const Node& n = g.node(0);
  EXPECT_EQ(n.domain, "footprint");
  EXPECT_EQ(n.op_type, "Elementwise");
  EXPECT_EQ(program_of(n), "Add(x0, x1); Relu(s0)");
  EXPECT_EQ(n.inputs, (std::vector<ValueId>{*g.find("x"), *g.find("r")}));
  EXPECT_EQ(g.value(n.outputs[0]).name, "y");
  ASSERT_EQ(report.patterns.size(), 1u);
  EXPECT_EQ(report.patterns[0].rfind("footprint::Elementwise '", 0), 0u) << report.patterns[0];
  EXPECT_NE(report.patterns[0].find("from 2 nodes"), std::string::npos) << report.patterns[0];
  EXPECT_EQ(report.nodes_removed, 1u);
}

// first + gamma[C] * x over channels-last [1, 7, 7, 16] (ConvNeXt's layer scale then residual
// when `first` is the residual r): the one node's inputs by name, and its program.
void expect_layer_scale(bool residual, const std::vector<std::string>& inputs,
                        const std::string& program) {
  GraphBuilder b(OpRegistry::builtin());
  const Var x = activation(b, "x", {1, 7, 7, 16});
  const Var first = residual ? activation(b, "r", {1, 7, 7, 16})
                             : b.constant(seeded_floats({16}, 4, 1.0F), "beta");
  const Var gamma = b.constant(seeded_floats({16}, 3, 1.0F), "gamma");
  b.output(b.add(first, b.mul(gamma, x)), "y");
  BuiltGraph built = b.to_graph();
  Graph& g = built.graph;
  fuse(g);
  expect_consistent(g);
  const auto made = nodes_of(g, "Elementwise");
  ASSERT_EQ(made.size(), 1u);
  std::vector<ValueId> want;
  want.reserve(inputs.size());
  for (const std::string& name : inputs) want.push_back(*g.find(name));
  EXPECT_EQ(made[0]->inputs, want);
  EXPECT_EQ(program_of(*made[0]), program);
}

TEST(FuseElementwise, BroadcastOperandsAreInputsAndAFullSizeOneComesFirst) {
  expect_layer_scale(true, {"r", "gamma", "x"}, "Mul(x1, x2); Add(x0, s0)");
  // beta[C] first: x (of the output's shape) takes input 0, so that the node may run in x's
  // buffer.
  expect_layer_scale(false, {"x", "gamma", "beta"}, "Mul(x1, x0); Add(x2, s0)");
}

TEST(FuseElementwise, ATreeOfOpsWithAValueReadTwiceIsOneProgram) {
  // ((x - m) * (x - m)) / (v + eps), then Clip and HardSigmoid: six steps, four inputs.
  GraphBuilder b(OpRegistry::builtin());
  const Var x = activation(b, "x", {3, 10});
  const Var m = activation(b, "m", {3, 1});
  const Var v = activation(b, "v", {3, 10});
  const Var d = b.sub(x, m);
  const Var q = b.div(b.mul(d, d), b.add(v, float_scalar(b, 1e-3)));
  const Var c = b.clip(q, float_scalar(b, 0), float_scalar(b, 6));
  b.output(b.op1("HardSigmoid", {c}, {Attr::of("alpha", 0.25F)}), "y");
  BuiltGraph built = b.to_graph();
  Graph& g = built.graph;
  fuse(g);
  expect_consistent(g);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(program_of(g.node(0)),
            "Sub(x0, x1); Mul(s0, s0); Add(x2, x3); Div(s1, s2); Clip(s3, 0, 6); "
            "HardSigmoid(s4, 0.25, 0.5)");
  ChainProgram p;
  EXPECT_EQ(parse_chain(program_of(g.node(0)), g.node(0).inputs.size(), p), nullptr);
}

TEST(FuseElementwise, ARunEndsWhereAValueIsSeenElsewhereOrChangesShape) {
  {  // the sum is also a graph output: the Relu stays on its own
    GraphBuilder b(OpRegistry::builtin());
    const Var x = activation(b, "x", {4, 6});
    const Var s = b.add(x, x);
    b.output(b.relu(s), "y");
    b.output(s, "s");
    BuiltGraph built = b.to_graph();
    EXPECT_TRUE(fused_runs(built).empty());
  }
  {  // the sum is read by two nodes: each reader is a run of its own
    GraphBuilder b(OpRegistry::builtin());
    const Var x = activation(b, "x", {4, 6});
    const Var s = b.add(x, float_scalar(b, 1));
    b.output(b.relu(b.mul(s, s)), "y");
    b.output(b.op1("Softmax", {s}), "z");
    BuiltGraph built = b.to_graph();
    const auto made = fused_runs(built);
    ASSERT_EQ(made.size(), 1u);
    EXPECT_EQ(program_of(*made[0]), "Mul(x0, x0); Relu(s0)");
  }
  {  // a [1, 6] product broadcast into [4, 6]: the product is an input, not a step
    GraphBuilder b(OpRegistry::builtin());
    const Var x = activation(b, "x", {4, 6});
    const Var w = activation(b, "w", {1, 6});
    const Var small = b.mul(w, w);
    b.output(b.op1("Tanh", {b.add(x, small)}), "y");
    BuiltGraph built = b.to_graph();
    const auto made = fused_runs(built);
    ASSERT_EQ(made.size(), 1u);
    EXPECT_EQ(program_of(*made[0]), "Add(x0, x1); Tanh(s0)");
    EXPECT_EQ(nodes_of(built.graph, "Mul").size(), 1u);
  }
}

TEST(FuseElementwise, AnActivationAHostTakesStaysTheHosts) {
  // Conv, Relu (the convolution's epilogue: the runtime's registry says which kernels take
  // them), Add of the residual: the Add has nothing to join.
  GraphBuilder b(runtime::op_registry());
  const Var x = activation(b, "x", {1, 4, 6, 6});
  const Var c =
      b.conv(x, b.constant(seeded_floats({4, 4, 1, 1}, 5, 1.0F)), Var(), {1, 1}, {0, 0, 0, 0});
  b.output(b.add(b.relu(c), x), "y");
  BuiltGraph built = b.to_graph();
  const FuseReport r = fuse(built.graph);
  EXPECT_EQ(r.fused.size(), 1u);
  EXPECT_TRUE(nodes_of(built.graph, "Elementwise").empty());
  EXPECT_EQ(nodes_of(built.graph, "Add").size(), 1u);
}

TEST(FuseElementwise, ConstantsStayConstantsAndLongRunsAreCut) {
  {  // 2 * 3 is computed when preparing; the run starts at the product with x
    GraphBuilder b(OpRegistry::builtin());
    const Var x = activation(b, "x", {5});
    const Var k = b.mul(float_scalar(b, 2), float_scalar(b, 3));
    b.output(b.op1("Sigmoid", {b.mul(x, k)}), "y");
    BuiltGraph built = b.to_graph();
    const auto made = fused_runs(built);
    ASSERT_EQ(made.size(), 1u);
    EXPECT_EQ(program_of(*made[0]), "Mul(x0, x1); Sigmoid(s0)");
  }
  {  // 20 Adds of one constant: the last kMaxChainSteps run as one node, the rest as they were
    GraphBuilder b(OpRegistry::builtin());
    Var y = activation(b, "x", {5});
    const Var one = float_scalar(b, 1);
    for (int i = 0; i < 20; ++i) y = b.add(y, one);
    b.output(y, "y");
    BuiltGraph built = b.to_graph();
    const auto made = fused_runs(built);
    ASSERT_EQ(made.size(), 1u);
    ChainProgram p;
    ASSERT_EQ(parse_chain(program_of(*made[0]), made[0]->inputs.size(), p), nullptr);
    EXPECT_EQ(p.size, kMaxChainSteps);
    EXPECT_EQ(nodes_of(built.graph, "Add").size(), 20 - kMaxChainSteps);
  }
  {  // a sum of 12 tensors: cut to the inputs a node takes
    GraphBuilder b(OpRegistry::builtin());
    Var y = activation(b, "x0", {5});
    for (int i = 1; i < 12; ++i) y = b.add(y, activation(b, "x" + std::to_string(i), {5}));
    b.output(y, "y");
    BuiltGraph built = b.to_graph();
    const auto made = fused_runs(built);
    ASSERT_EQ(made.size(), 1u);
    EXPECT_EQ(made[0]->inputs.size(), kMaxChainInputs);
  }
}

}  // namespace
}  // namespace footprint::graph
