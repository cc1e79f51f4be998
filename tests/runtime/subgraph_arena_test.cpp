// A branch of an If runs in an arena of its own, planned inside its node's step scratch. The
// scratch analysis predicts for the step is that planned arena (analysis::subgraph_arena), not the
// branch's lower bound, so the prediction holds when the planner does not reach the bound.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "test_support.hpp"

using namespace footprint;
using graph::GraphBuilder;
using graph::Var;

namespace {

constexpr uint64_t kTensor = 400;  // a float[10,10] tensor
constexpr uint64_t kSlot = 448;    // its arena buffer, rounded up to 64

// y = If(cond) then Transpose^4(x) else Neg(x), x float[10,10]. The then branch holds three
// intermediates in a chain: two are alive at once (lower bound 2 tensors), the best plan takes
// two slots, and a planner that gives every buffer its own bytes (naive) takes three.
std::shared_ptr<const graph::Model> chain_in_a_branch(const footprint::testing::TempDir& dir) {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(10), Dim::known(10)});
  const Var cond = b.input("cond", DType::boolean, {});
  GraphBuilder& then_b = b.subgraph();
  Var h = x;
  for (int i = 0; i < 4; ++i) h = then_b.op1("Transpose", {h});
  then_b.output(h);
  GraphBuilder& else_b = b.subgraph();
  else_b.output(else_b.op1("Neg", {x}));
  b.output(b.if_else(cond, then_b, else_b)[0], "y");
  b.write_onnx(dir.path() / "if.onnx");
  return std::make_shared<const graph::Model>(graph::load_model(dir.path() / "if.onnx"));
}

std::vector<runtime::Tensor> inputs(bool cond) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{10, 10});
  in.emplace_back("cond", DType::boolean, std::vector<int64_t>{});
  float v = 0;
  for (float& e : in[0].ref().span<float>()) e = v++;
  in[1].ref().span<bool>()[0] = cond;
  return in;
}

struct Predicted {
  analysis::SubgraphMemory then_branch;
  uint64_t if_scratch = 0;
  uint64_t arena = 0;
  uint64_t total_peak = 0;
};

Predicted predict(std::shared_ptr<const graph::Model> model, const char* planner) {
  analysis::ModelProgramOptions o;
  o.subgraph_arena = analysis::subgraph_arena(planner);
  const analysis::ModelProgram m =
      analysis::build_model_program(std::move(model), runtime::op_registry(), o);
  Predicted p;
  EXPECT_EQ(m.program.subgraphs.size(), 2u);
  if (m.program.subgraphs.empty()) return p;
  p.then_branch = m.program.subgraphs[0];
  EXPECT_EQ(m.program.program.steps.size(), 1u);
  p.if_scratch = m.program.program.steps.at(0).workspace;
  p.arena = static_cast<uint64_t>(
      plan::plan_buffers(analysis::arena_buffers(m.timeline, m.program.program), planner)
          .arena_bytes);
  p.total_peak = m.timeline.total_peak_bytes;
  return p;
}

}  // namespace

TEST(SubgraphArena, ABranchPlannedAboveItsLowerBoundIsTheStepsScratchAndIsWhatTheRunObtains) {
  const footprint::testing::TempDir dir;
  const auto model = chain_in_a_branch(dir);
  const Predicted p = predict(model, "naive");
  EXPECT_EQ(p.then_branch.attribute, "then_branch");
  EXPECT_TRUE(p.then_branch.planned);
  EXPECT_EQ(p.then_branch.lower_bound_bytes, 2 * kTensor);
  EXPECT_EQ(p.then_branch.arena_bytes, 3 * kSlot) << "naive is far above the lower bound";
  EXPECT_EQ(p.if_scratch, 3 * kSlot) << "the larger planned branch is the If step's scratch";

  runtime::SessionOptions naive;
  naive.planner = "naive";
  runtime::Session s(*model, naive);
  for (const bool cond : {true, false}) {
    (void)s.run(inputs(cond));
    EXPECT_EQ(s.prepared().planned_arena_bytes, p.arena) << "cond " << cond;
    EXPECT_EQ(s.last_run().arena_bytes, p.arena) << "cond " << cond;
    EXPECT_EQ(s.prepared().total_peak_bytes, p.total_peak) << "cond " << cond;
  }
}

TEST(SubgraphArena, TheDefaultPlannersBranchArenaIsPredictedToo) {
  const footprint::testing::TempDir dir;
  const auto model = chain_in_a_branch(dir);
  const Predicted p = predict(model, "auto");
  EXPECT_EQ(p.then_branch.arena_bytes, 2 * kSlot) << "rounded slots: above the bound as well";
  runtime::Session s(*model);
  (void)s.run(inputs(true));
  EXPECT_EQ(s.prepared().planned_arena_bytes, p.arena);
  EXPECT_EQ(s.prepared().total_peak_bytes, p.total_peak);
}

TEST(SubgraphArena, WithoutAPlannerTheBranchIsCountedAtItsLowerBoundAndSaysSo) {
  const footprint::testing::TempDir dir;
  const auto model = chain_in_a_branch(dir);
  const analysis::ModelProgram m = analysis::build_model_program(model, runtime::op_registry(), {});
  ASSERT_EQ(m.program.subgraphs.size(), 2u);
  EXPECT_FALSE(m.program.subgraphs[0].planned);
  EXPECT_EQ(m.program.subgraphs[0].arena_bytes, 2 * kTensor);
  bool said = false;
  for (const std::string& w : m.program.warnings)
    said |= w.find("then_branch: its arena is counted at its lower bound") != std::string::npos;
  EXPECT_TRUE(said) << "a figure below the real one is never silent";
}
