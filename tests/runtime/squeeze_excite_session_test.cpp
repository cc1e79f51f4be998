// Squeeze-and-excitation as graph::fuse rewrites it and the runtime runs it: GlobalAveragePool,
// a 1x1 convolution and its activation, a 1x1 convolution and its gate, the product with x, in
// the forms torchvision's MobileNetV3 (Relu, HardSigmoid), EfficientNet (SiLU, Sigmoid) and
// RegNet-Y (Relu, Sigmoid) export, become one footprint::SqueezeExcite, channels-last between
// convolutions and plain on a plain input, and give the unfused graph's outputs. A block whose
// gate is no sigmoid, or whose pooled value something else reads, stays as it was.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "graph/decomposed_ops.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

using testing::expect_same_outputs;
using testing::made_pattern;
using testing::Outcome;
using testing::run_once;
using testing::seeded;
using testing::seeded_floats;
using testing::stored_as;

using Act = std::function<Var(GraphBuilder&, const Var&)>;

Var conv1x1(GraphBuilder& b, const Var& x, int64_t in, int64_t out, uint32_t seed, bool bias,
            DType t = DType::float32) {
  return b.conv(x, b.constant(stored_as(seeded_floats({out, in, 1, 1}, seed, 0.8F), t)),
                bias ? b.constant(stored_as(seeded_floats({out}, seed + 1, 0.5F), t)) : Var(),
                {1, 1}, {0, 0, 0, 0});
}

// x * gate(W2 act(W1 mean(x) + B1) + B2), x of C channels, R hidden.
Var block(GraphBuilder& b, const Var& x, int64_t c, int64_t r, const Act& act, const Act& gate,
          bool bias, uint32_t seed, DType t = DType::float32) {
  const Var pooled = b.op1("GlobalAveragePool", {x});
  const Var hidden = act(b, conv1x1(b, pooled, c, r, seed, bias, t));
  return b.mul(x, gate(b, conv1x1(b, hidden, r, c, seed + 2, bias, t)));
}

struct Form {
  std::string name;
  Act act;
  Act gate;
  bool bias;
};

std::vector<Form> forms() {
  const Act relu = [](GraphBuilder& b, const Var& v) { return b.relu(v); };
  const Act silu = [](GraphBuilder& b, const Var& v) { return b.mul(v, b.op1("Sigmoid", {v})); };
  const Act sigmoid = [](GraphBuilder& b, const Var& v) { return b.op1("Sigmoid", {v}); };
  const Act hard_sigmoid = [](GraphBuilder& b, const Var& v) {
    return b.op1("HardSigmoid", {v}, {Attr::of("alpha", 1.0F / 6)});
  };
  return {{"MobileNetV3 (Relu, HardSigmoid)", relu, hard_sigmoid, true},
          {"EfficientNet (SiLU, Sigmoid)", silu, sigmoid, true},
          {"RegNet-Y (Relu, Sigmoid), no biases", relu, sigmoid, false}};
}

std::map<std::string, int> ops_of(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes()) ++ops[(n.domain.empty() ? "" : n.domain + "::") + n.op_type];
  return ops;
}

// conv -> SE -> conv on [n, 24, h, w] (x [n, 8, h, w]): the block between two convolutions,
// channels-last.
BuiltGraph between_convolutions(const Form& f, int64_t n = 2, int64_t h = 9, int64_t w = 11) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(n), Dim::known(8), Dim::known(h), Dim::known(w)});
  const Var a = b.relu(conv1x1(b, x, 8, 24, 41, true));
  b.output(conv1x1(b, block(b, a, 24, 6, f.act, f.gate, f.bias, 43), 24, 5, 47, true), "y");
  return b.to_graph();
}

std::vector<runtime::Tensor> input(std::vector<int64_t> dims) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::move(dims));
  seeded(in[0], 7, 4.0F);
  return in;
}

TEST(SqueezeExcite, EveryExportedFormBecomesOneNodeAndGivesTheSameOutputs) {
  for (const Form& f : forms()) {
    const BuiltGraph built = between_convolutions(f);
    {
      BuiltGraph copy = between_convolutions(f);
      const FuseReport r = fuse(copy.graph);
      const std::map<std::string, int> ops = ops_of(copy.graph);
      ASSERT_EQ(ops.count("footprint::SqueezeExcite"), 1u) << f.name;
      EXPECT_FALSE(ops.contains("GlobalAveragePool")) << f.name;
      EXPECT_FALSE(ops.contains("Mul")) << f.name;
      EXPECT_EQ(ops.at("Conv"), 2) << f.name << ": the convolutions around the block";
      for (const Node& n : copy.graph.nodes()) {
        if (n.op_type != "SqueezeExcite") continue;
        EXPECT_EQ(n.inputs.size(), f.bias ? 5u : 4u) << f.name;
        EXPECT_EQ(attr_string(n, "activation", "?"),
                  f.name.find("SiLU") != std::string::npos ? "Swish" : "Relu")
            << f.name;
        EXPECT_EQ(attr_string(n, "gate", "?"),
                  f.name.find("HardSigmoid") != std::string::npos ? "HardSigmoid" : "Sigmoid")
            << f.name;
      }
    }
    const std::vector<runtime::Tensor> in = input({2, 8, 9, 11});
    const Outcome apart = run_once(*built.model, false, in);
    for (const int threads : {1, 2}) {
      const Outcome fused = run_once(*built.model, true, in, threads);
      EXPECT_TRUE(made_pattern(fused, "footprint::SqueezeExcite")) << f.name;
      EXPECT_EQ(fused.prepared.layout_changes, 2u) << f.name << ": x in and y out only";
      EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes) << f.name;
      expect_same_outputs(fused, apart, 2e-5F,
                          f.name + ", " + std::to_string(threads) + " threads");
    }
  }
}

TEST(SqueezeExcite, OnAPlainInputTheBlockRunsPlain) {
  // x is the graph's input: nothing before the block is channels-last, so it runs NCHW.
  for (const Form& f : forms()) {
    GraphBuilder b(runtime::op_registry());
    const Var x =
        b.input("x", DType::float32, {Dim::known(3), Dim::known(16), Dim::known(7), Dim::known(5)});
    b.output(block(b, x, 16, 4, f.act, f.gate, f.bias, 61), "y");
    const BuiltGraph built = b.to_graph();
    const std::vector<runtime::Tensor> in = input({3, 16, 7, 5});
    const Outcome fused = run_once(*built.model, true, in, 2);
    const Outcome apart = run_once(*built.model, false, in);
    EXPECT_EQ(fused.prepared.steps, 1u) << f.name;
    EXPECT_EQ(fused.prepared.layout_changes, 0u) << f.name;
    expect_same_outputs(fused, apart, 2e-5F, f.name);
  }
}

TEST(SqueezeExcite, ALargeBlockSplitBetweenThreadsGivesTheOneThreadBytes) {
  // Past 2^21 elements of x the block's phases split between threads (smaller ones run on one):
  // [1, 24, 300, 300] channels-last between convolutions, and [1, 64, 180, 200] NCHW as the
  // graph's input; the means are split by channels, each summed in the same order whatever the
  // split, so two threads give one thread's bytes.
  const std::vector<Form> all = forms();
  const Form& f = all[1];  // EfficientNet's
  const BuiltGraph between = between_convolutions(f, 1, 300, 300);
  const std::vector<runtime::Tensor> in = input({1, 8, 300, 300});
  const Outcome one = run_once(*between.model, true, in, 1);
  const Outcome two = run_once(*between.model, true, in, 2);
  EXPECT_TRUE(made_pattern(two, "footprint::SqueezeExcite"));
  expect_same_varied_outputs(one, two, "channels-last");
  expect_same_outputs(two, run_once(*between.model, false, in), 2e-5F, "channels-last, apart");

  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32,
                        {Dim::known(1), Dim::known(64), Dim::known(180), Dim::known(200)});
  b.output(block(b, x, 64, 16, f.act, f.gate, f.bias, 67), "y");
  const BuiltGraph plain = b.to_graph();
  const std::vector<runtime::Tensor> x_in = input({1, 64, 180, 200});
  const Outcome plain_one = run_once(*plain.model, true, x_in, 1);
  const Outcome plain_two = run_once(*plain.model, true, x_in, 2);
  EXPECT_EQ(plain_two.prepared.steps, 1u);
  expect_same_varied_outputs(plain_one, plain_two, "NCHW");
  expect_same_outputs(plain_two, run_once(*plain.model, false, x_in), 2e-5F, "NCHW, apart");
}

TEST(SqueezeExcite, SixteenBitBlocksRoundWhereTheNodesTheyReplaceStore) {
  // A float16 and a bfloat16 graph (onnxconverter_common's form: Cast in, Cast out), the block
  // between convolutions (channels-last) and on the Cast's output (plain). The fused block rounds
  // the means, the hidden units and the gate into the 16-bit type as the nodes it replaces store
  // them; its small products add in another order than oneDNN's, which may move a rounding by
  // one unit of the 16-bit type's last place, so the outputs agree within two of those units.
  const Form f = forms()[0];
  for (const DType t : {DType::float16, DType::bfloat16}) {
    for (const bool between : {true, false}) {
      GraphBuilder b(runtime::op_registry());
      const Var x = b.input("x", DType::float32,
                            {Dim::known(2), Dim::known(8), Dim::known(9), Dim::known(11)});
      const Var h = b.op1("Cast", {x}, {Attr::of("to", static_cast<int64_t>(t))});
      const Var a = between ? b.relu(conv1x1(b, h, 8, 24, 41, true, t)) : h;
      const int64_t c = between ? 24 : 8;
      Var y = block(b, a, c, 6, f.act, f.gate, f.bias, 43, t);
      if (between) y = conv1x1(b, y, 24, 5, 47, true, t);
      b.output(b.op1("Cast", {y}, {Attr::of("to", static_cast<int64_t>(DType::float32))}), "y");
      const BuiltGraph built = b.to_graph();
      const std::string what =
          std::string(dtype_name(t)) + (between ? ", channels-last" : ", plain");
      const std::vector<runtime::Tensor> in = input({2, 8, 9, 11});
      const Outcome apart = run_once(*built.model, false, in);
      for (const int threads : {1, 2}) {
        const Outcome fused = run_once(*built.model, true, in, threads);
        EXPECT_TRUE(made_pattern(fused, "footprint::SqueezeExcite")) << what;
        EXPECT_EQ(fused.prepared.layout_changes, between ? 2u : 0u) << what;
        EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes) << what;
        const float ulp = t == DType::float16 ? 1.0F / 1024 : 1.0F / 128;
        expect_same_outputs(fused, apart, 2 * ulp, what + ", " + std::to_string(threads));
      }
    }
  }
}

TEST(SqueezeExcite, ABlockWithAnotherGateOrAPooledValueReadElsewhereStaysApart) {
  const Act relu = [](GraphBuilder& b, const Var& v) { return b.relu(v); };
  {  // gated by Tanh: not a squeeze-and-excitation this node computes
    GraphBuilder b(runtime::op_registry());
    const Var x =
        b.input("x", DType::float32, {Dim::known(1), Dim::known(8), Dim::known(4), Dim::known(4)});
    const Act tanh = [](GraphBuilder& g, const Var& v) { return g.op1("Tanh", {v}); };
    b.output(block(b, x, 8, 2, relu, tanh, true, 71), "y");
    BuiltGraph built = b.to_graph();
    fuse(built.graph);
    EXPECT_FALSE(ops_of(built.graph).contains("footprint::SqueezeExcite"));
  }
  {  // the pooled means are also an output
    GraphBuilder b(runtime::op_registry());
    const Var x =
        b.input("x", DType::float32, {Dim::known(1), Dim::known(8), Dim::known(4), Dim::known(4)});
    const Var pooled = b.op1("GlobalAveragePool", {x});
    const Var hidden = b.relu(conv1x1(b, pooled, 8, 2, 73, true));
    b.output(b.mul(x, b.op1("Sigmoid", {conv1x1(b, hidden, 2, 8, 75, true)})), "y");
    b.output(pooled, "pooled");
    BuiltGraph built = b.to_graph();
    fuse(built.graph);
    EXPECT_FALSE(ops_of(built.graph).contains("footprint::SqueezeExcite"));
  }
}

}  // namespace
}  // namespace footprint::graph
