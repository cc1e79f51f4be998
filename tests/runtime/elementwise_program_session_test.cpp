// footprint::Elementwise (graph::fuse's elementwise runs) as the runtime runs it: every way an
// input can broadcast (the output's shape, a scalar, a per-channel scale over NCHW planes or over
// channels-last pixels, rows against columns), every unary op a program has, rows split between
// threads and short rows taken several at a time, all give what the ops give one node each, in
// the arena the fused graph planned, which is no larger.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "graph/decomposed_ops.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

using testing::expect_same_outputs;
using testing::float_scalar;
using testing::made_pattern;
using testing::Outcome;
using testing::run_once;
using testing::seeded;
using testing::seeded_floats;

struct Case {
  std::string name;
  std::vector<std::vector<int64_t>> inputs;  // extents of inputs "i0", "i1", ...
  // The ops over those inputs; returns the output.
  std::function<Var(GraphBuilder&, const std::vector<Var>&)> ops;
};

std::vector<Case> cases() {
  return {
      {"Add, Relu over 2 x 64 x 40 x 40 (one row, split between threads)",
       {{2, 64, 40, 40}, {2, 64, 40, 40}},
       [](GraphBuilder& b, const std::vector<Var>& x) { return b.relu(b.add(x[0], x[1])); }},
      {"a per-channel scale and shift over NCHW planes, then Sigmoid",
       {{2, 8, 5, 7}, {1, 8, 1, 1}},
       [](GraphBuilder& b, const std::vector<Var>& x) {
         const Var shift = b.constant(seeded_floats({8, 1, 1}, 21, 1.0F));
         return b.op1("Sigmoid", {b.add(b.mul(x[0], x[1]), shift)});
       }},
      {"a layer scale over channels-last pixels, the residual, Tanh (short rows)",
       {{1, 7, 9, 24}, {1, 7, 9, 24}},
       [](GraphBuilder& b, const std::vector<Var>& x) {
         const Var gamma = b.constant(seeded_floats({24}, 22, 2.0F));
         return b.op1("Tanh", {b.add(x[1], b.mul(x[0], gamma))});
       }},
      {"columns against rows, squared, over a full-size divisor",
       {{6, 1}, {1, 301}, {6, 301}},
       [](GraphBuilder& b, const std::vector<Var>& x) {
         const Var d = b.sub(x[0], x[1]);
         return b.div(b.mul(d, d), b.add(x[2], float_scalar(b, 4)));
       }},
      {"every unary op a program runs, odd extents",
       {{3, 37}, {3, 37}},
       [](GraphBuilder& b, const std::vector<Var>& x) {
         Var y = b.add(x[0], x[1]);
         y = b.op1("LeakyRelu", {y}, {Attr::of("alpha", 0.3F)});
         y = b.clip(b.mul(y, float_scalar(b, 1.5)), float_scalar(b, -1), float_scalar(b, 0.75));
         y = b.op1("HardSigmoid", {b.sub(y, x[1])}, {Attr::of("alpha", 0.4F)});
         y = b.op1("HardSwish", {b.mul(y, x[0])});
         y = b.op1("Sigmoid", {b.add(y, x[1])});
         y = b.op1("Tanh", {b.sub(y, float_scalar(b, 0.5))});
         return b.relu(b.div(y, float_scalar(b, 0.25)));
       }},
      {"a run whose input 0 is an activation it may overwrite",
       {{4, 33, 20}, {33, 20}},
       [](GraphBuilder& b, const std::vector<Var>& x) {
         const Var s = b.op1("Softmax", {x[0]}, {Attr::of("axis", int64_t{-1})});
         return b.relu(b.sub(b.mul(s, x[1]), float_scalar(b, 0.01)));
       }},
  };
}

BuiltGraph build(const Case& c) {
  GraphBuilder b(runtime::op_registry());
  std::vector<Var> x;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    std::vector<Dim> dims;
    for (const int64_t d : c.inputs[i]) dims.push_back(Dim::known(d));
    x.push_back(b.input("i" + std::to_string(i), DType::float32, dims));
  }
  b.output(c.ops(b, x), "y");
  return b.to_graph();
}

std::vector<runtime::Tensor> inputs_for(const Case& c) {
  std::vector<runtime::Tensor> in;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    in.emplace_back("i" + std::to_string(i), DType::float32, c.inputs[i]);
    seeded(in.back(), 31 + static_cast<uint32_t>(i), 6.0F);
  }
  return in;
}

TEST(ElementwiseProgramSession, FusedRunsGiveWhatTheOpsGiveApart) {
  for (const Case& c : cases()) {
    const BuiltGraph built = build(c);
    const std::vector<runtime::Tensor> in = inputs_for(c);
    const Outcome apart = run_once(*built.model, false, in);
    for (const int threads : {1, 2}) {
      const std::string what = c.name + ", " + std::to_string(threads) + " thread(s)";
      const Outcome fused = run_once(*built.model, true, in, threads);
      EXPECT_TRUE(made_pattern(fused, "footprint::Elementwise")) << what;
      EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes) << what;
      EXPECT_LE(fused.obtained, apart.obtained) << what;
      expect_same_outputs(fused, apart, 1e-6F, what);
    }
  }
}

Var constant_as(GraphBuilder& b, const SharedValue& f, DType t) {
  return b.constant(testing::stored_as(f, t));
}

TEST(ElementwiseProgramSession, SixteenBitRunsRoundEachStepAsItsNodeStored) {
  // A float16 or bfloat16 graph (Cast in, Cast out): the program widens its inputs and rounds
  // every step's result into the 16-bit type, as the node it replaces stored it, so where the
  // steps are the same float arithmetic as the 16-bit kernels' (add, sub, mul, div, Relu) the
  // outputs are the unfused graph's bytes; Tanh's vector form may end one unit of the last place
  // away.
  struct Case16 {
    std::string name;
    std::vector<std::vector<int64_t>> inputs;
    std::function<Var(GraphBuilder&, const std::vector<Var>&, DType)> ops;
    bool exact;
  };
  const std::vector<Case16> cases16 = {
      {"Add, Relu over 2 x 64 x 40 x 40 (one row, split between threads)",
       {{2, 64, 40, 40}, {2, 64, 40, 40}},
       [](GraphBuilder& b, const std::vector<Var>& x, DType) { return b.relu(b.add(x[0], x[1])); },
       true},
      {"columns against rows, squared, over a full-size divisor",
       {{6, 1}, {1, 301}, {6, 301}},
       [](GraphBuilder& b, const std::vector<Var>& x, DType t) {
         const Var d = b.sub(x[0], x[1]);
         auto four = HostValue::make(DType::float32, {});
         four->span<float>()[0] = 4.0F;
         return b.div(b.mul(d, d), b.add(x[2], constant_as(b, four, t)));
       },
       true},
      {"a layer scale over channels-last pixels, the residual, Tanh (short rows)",
       {{1, 7, 9, 24}, {1, 7, 9, 24}},
       [](GraphBuilder& b, const std::vector<Var>& x, DType t) {
         const Var gamma = constant_as(b, seeded_floats({24}, 22, 2.0F), t);
         return b.op1("Tanh", {b.add(x[1], b.mul(x[0], gamma))});
       },
       false},
  };
  for (const DType t : {DType::float16, DType::bfloat16}) {
    for (const Case16& c : cases16) {
      GraphBuilder b(runtime::op_registry());
      std::vector<Var> x;
      std::vector<runtime::Tensor> in;
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        std::vector<Dim> dims;
        for (const int64_t d : c.inputs[i]) dims.push_back(Dim::known(d));
        const std::string name = "i" + std::to_string(i);
        x.push_back(b.op1("Cast", {b.input(name, DType::float32, dims)},
                          {Attr::of("to", static_cast<int64_t>(t))}));
        in.emplace_back(name, DType::float32, c.inputs[i]);
        seeded(in.back(), 31 + static_cast<uint32_t>(i), 6.0F);
      }
      b.output(
          b.op1("Cast", {c.ops(b, x, t)}, {Attr::of("to", static_cast<int64_t>(DType::float32))}),
          "y");
      const BuiltGraph built = b.to_graph();
      const Outcome apart = run_once(*built.model, false, in);
      for (const int threads : {1, 2}) {
        const std::string what = std::string(dtype_name(t)) + ": " + c.name + ", " +
                                 std::to_string(threads) + " thread(s)";
        const Outcome fused = run_once(*built.model, true, in, threads);
        EXPECT_TRUE(made_pattern(fused, "footprint::Elementwise")) << what;
        EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes) << what;
        const float ulp = t == DType::float16 ? 1.0F / 1024 : 1.0F / 128;
        expect_same_outputs(fused, apart, c.exact ? 0.0F : ulp, what);
      }
    }
  }
}

TEST(ElementwiseProgramSession, TheRunTakesNoTensorBetweenItsSteps) {
  // Softmax, then Mul, Sub, Relu: apart, the Mul's output is a tensor of its own beside the
  // Softmax's (the Sub and the Relu then run in its buffer); fused, the one node reads the
  // Softmax's output and writes the graph's, so the arena holds the Softmax's output alone.
  const Case c = cases().back();
  const BuiltGraph built = build(c);
  const std::vector<runtime::Tensor> in = inputs_for(c);
  const Outcome fused = run_once(*built.model, true, in);
  const Outcome apart = run_once(*built.model, false, in);
  const uint64_t tensor = uint64_t{4} * 33 * 20 * sizeof(float);
  EXPECT_LT(fused.obtained, apart.obtained);
  EXPECT_LE(fused.obtained, tensor + 64) << "the softmax's buffer alone, aligned";
}

}  // namespace
}  // namespace footprint::graph
