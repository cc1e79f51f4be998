// The graph runner's steps prepared once (runtime::runner::PreparedSteps): a context per step,
// a view whose output already is its input left with nothing to run, and a convolution whose
// kernel packs its computed weights reading only that copy, so the constants release them.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "planned_graph.hpp"
#include "runtime/runner/bounded_extents.hpp"
#include "runtime/runner/placement.hpp"
#include "runtime/runner/prepared_constants.hpp"
#include "runtime/runner/prepared_steps.hpp"

using namespace footprint;
using graph::GraphBuilder;
using graph::HostValue;
using graph::Var;
using runtime::runner::BoundedExtents;
using runtime::runner::Placement;
using runtime::runner::PreparedConstants;
using runtime::runner::PreparedSteps;
using runtime::runner::StepExtents;

namespace {

// Every part the steps are prepared on, built in the runner's order.
struct Prepared {
  explicit Prepared(const footprint::testing::PlannedGraph& p)
      : extents(p.graph(), {}, nullptr),
        placement(p.graph(), p.program, p.timeline, p.plan),
        constants(p.graph(), p.program, p.timeline, extents, placement, placement.take_weights(),
                  nullptr, 1, pointers),
        steps(p.graph(), p.program, p.timeline, extents, constants, nullptr, pointers) {}
  BoundedExtents extents;
  Placement placement;
  std::vector<void*> pointers;
  PreparedConstants constants;
  PreparedSteps steps;
};

graph::SharedValue ints(const std::vector<int64_t>& v) {
  auto h = HostValue::make(DType::int64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), h->span<int64_t>().begin());
  return h;
}

}  // namespace

TEST(RunnerPreparedSteps, PreparesAContextPerStepAndSkipsAViewOfItsOwnInput) {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(2), Dim::known(3)});
  b.output(b.relu(b.reshape(x, b.constant(ints({3, 2}), "shape"))), "y");
  const auto p = footprint::testing::plan_graph(b);
  const Prepared prepared(p);
  const PreparedSteps& steps = prepared.steps;

  ASSERT_EQ(steps.size(), p.program.step_nodes.size());
  ASSERT_EQ(steps.size(), 2u) << "the Reshape and the Relu";
  for (size_t s = 0; s < steps.size(); ++s) {
    const graph::NodeContext& ctx = steps.context(s);
    EXPECT_EQ(ctx.node_id(), p.program.step_nodes[s]);
    EXPECT_EQ(steps.extents_kind(s), StepExtents::fixed);
    // Prepared for the planned extents.
    const graph::ValueId out = ctx.node().outputs[0];
    EXPECT_EQ(std::vector<int64_t>(ctx.outputs[0].dims.begin(), ctx.outputs[0].dims.end()),
              prepared.extents.planned(out));
    // The Reshape's output is x itself (a view): nothing to run.
    EXPECT_EQ(steps.skipped(s), ctx.node().op_type == "Reshape") << ctx.node().op_type;
  }
  EXPECT_EQ(steps.packed_bytes(), 0u);
}

TEST(RunnerPreparedSteps, AConvolutionsPackedWeightsReplaceTheComputedOnes) {
  if (!__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "oneDNN's direct blocked convolutions need AVX2; this CPU runs im2col";
  }
  // Not propagated: the weights stay a ConstantOfShape node, computed when preparing.
  graph::BuilderOptions no_propagation;
  no_propagation.propagate = false;
  GraphBuilder b(runtime::op_registry(), no_propagation);
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(32), Dim::known(8), Dim::known(8)});
  auto fill = HostValue::make(DType::float32, {1});
  fill->span<float>()[0] = 0.01F;
  const Var w = b.constant_of_shape(b.constant(ints({32, 32, 3, 3}), "w_shape"), fill);
  b.output(b.conv(x, w, Var(), {1, 1}, {1, 1, 1, 1}), "y");
  const auto p = footprint::testing::plan_graph(b);
  const Prepared prepared(p);
  const PreparedSteps& steps = prepared.steps;
  const PreparedConstants& constants = prepared.constants;

  ASSERT_EQ(steps.size(), 1u);
  const graph::ValueId weights = steps.context(0).node().inputs[1];
  constexpr uint64_t kWeightBytes = uint64_t{32} * 32 * 3 * 3 * sizeof(float);
  EXPECT_TRUE(steps.replaced(0, 1)) << "the kernel reads only its packed copy";
  EXPECT_FALSE(steps.replaced(0, 0)) << "x is read as it is";
  EXPECT_GE(steps.packed_bytes(), kWeightBytes);
  EXPECT_EQ(constants.constants()[weights], nullptr) << "released once its reader was prepared";
  EXPECT_EQ(constants.constant_bytes(), 0u);
  EXPECT_GE(constants.released_bytes(), kWeightBytes);
  // What preparing keeps is the packed copy alone; at most, it held both.
  EXPECT_EQ(constants.heap().now, steps.packed_bytes());
  EXPECT_GE(constants.heap().peak, steps.packed_bytes() + kWeightBytes);
}
