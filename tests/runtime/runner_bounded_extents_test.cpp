// The extents the graph runner gives values whose extents depend on data
// (runtime::runner::BoundedExtents): planned at their bounds, each step classified by how it
// runs on them, and a run's extents bound from what a step reports, step by step.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "planned_graph.hpp"
#include "runtime/runner/bounded_extents.hpp"
#include "runtime/runner/step_context.hpp"

using namespace footprint;
using graph::GraphBuilder;
using graph::HostValue;
using graph::Var;
using runtime::runner::BoundedExtents;
using runtime::runner::StepExtents;

namespace {

graph::SharedValue ints(const std::vector<int64_t>& v) {
  auto h = HostValue::make(DType::int64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), h->span<int64_t>().begin());
  return h;
}

// x float[8,1]; its non-zero rows (NonZero: int64[1,<=8], flattened by Reshape to idx) gathered
// as rows float[<=8,1], multiplied by w float[1,3] into "product" and negated into "neg";
// "relu" touches nothing data-dependent.
footprint::testing::PlannedGraph selected_rows() {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(8), Dim::known(1)});
  const Var flat = b.reshape(x, b.constant(ints({-1})));
  const Var nz = b.op1("NonZero", {flat});
  const Var idx = b.reshape(nz, b.constant(ints({-1})));
  const Var rows = b.op1("Gather", {x, idx});
  b.output(b.matmul(rows, b.constant(HostValue::zeros(DType::float32, {1, 3}))), "product");
  b.output(b.op1("Neg", {rows}), "neg");
  b.output(b.relu(x), "relu");
  return footprint::testing::plan_graph(b);
}

struct Names {
  graph::ValueId nz, idx, rows;
};

Names names(const footprint::testing::PlannedGraph& p) {
  const graph::Graph& g = p.graph();
  const graph::ValueId rows = g.node(p.producer("neg")).inputs[0];
  const graph::ValueId idx = g.node(p.producer(g.value(rows).name)).inputs[1];
  const graph::ValueId nz = g.node(p.producer(g.value(idx).name)).inputs[0];
  return {nz, idx, rows};
}

constexpr uint64_t kAmpleScratch = uint64_t{1} << 30;

}  // namespace

TEST(RunnerBoundedExtents, PlansDataDependentValuesAtTheirBounds) {
  const auto p = selected_rows();
  const Names v = names(p);
  const BoundedExtents extents(p.graph(), {}, nullptr);
  EXPECT_EQ(extents.planned(v.nz), (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(extents.planned(v.rows), (std::vector<int64_t>{8, 1}));
  EXPECT_EQ(extents.planned(p.id("product")), (std::vector<int64_t>{8, 3}));
  EXPECT_TRUE(extents.bounded(v.nz));
  EXPECT_TRUE(extents.bounded(v.idx));
  EXPECT_TRUE(extents.bounded(p.id("neg")));
  EXPECT_FALSE(extents.bounded(p.id("x")));
  EXPECT_FALSE(extents.bounded(p.id("relu")));
  EXPECT_TRUE(extents.known(v.nz));
  // Before any run, a bounded value's run extents are its bound.
  EXPECT_EQ(extents.run(v.nz), extents.planned(v.nz));
  ASSERT_EQ(extents.origins().size(), 1u);
  EXPECT_NE(extents.origins()[0].find("(NonZero)"), std::string::npos) << extents.origins()[0];
  const auto [bound, used] = extents.bounded_bytes(p.timeline.storage);
  EXPECT_EQ(bound, used);
  EXPECT_GT(bound, 0u);
}

TEST(RunnerBoundedExtents, RefusesADimNamedAsADataDependentExtent) {
  const auto p = selected_rows();
  const std::string origin = BoundedExtents(p.graph(), {}, nullptr).origins().at(0);
  try {
    const BoundedExtents extents(p.graph(), {{origin, 3}}, nullptr);
    FAIL() << "a dim named " << origin << " was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a dim is named"), std::string::npos) << e.what();
  }
}

TEST(RunnerBoundedExtents, ClassifiesStepsByHowTheyRunOnBoundedExtents) {
  const auto p = selected_rows();
  const graph::Graph& g = p.graph();
  const BoundedExtents extents(g, {}, nullptr);
  auto kind_of = [&](const std::string& output) {
    const auto ctx = runtime::runner::make_context(g, p.producer(output), extents, nullptr);
    return extents.classify(*ctx);
  };
  EXPECT_EQ(kind_of("relu"), StepExtents::fixed);
  // The product's primitive is prepared for the bound, and only rows vary: it runs at the bound.
  EXPECT_EQ(kind_of("product"), StepExtents::at_bound);
  // NonZero decides its count when running, on the extents of this run.
  EXPECT_EQ(kind_of(g.value(names(p).nz).name), StepExtents::at_run_extents);
}

TEST(RunnerBoundedExtents, ARunBindsWhatAStepReportsForTheStepsAfterIt) {
  const auto p = selected_rows();
  const graph::Graph& g = p.graph();
  const Names v = names(p);
  BoundedExtents extents(g, {}, nullptr);
  const std::vector<void*> pointers(g.values().size(), nullptr);
  auto context_of = [&](graph::ValueId output) {
    return runtime::runner::make_context(g, p.producer(g.value(output).name), extents, nullptr);
  };

  extents.start_run();
  const auto nonzero = context_of(v.nz);
  const StepExtents nonzero_kind = extents.classify(*nonzero);
  extents.enter(*nonzero, nonzero_kind, kAmpleScratch, pointers);
  EXPECT_EQ(std::vector<int64_t>(nonzero->outputs[0].dims.begin(), nonzero->outputs[0].dims.end()),
            (std::vector<int64_t>{1, 8}))
      << "an output whose extent the op decides is given its bound";
  nonzero->set_output_extents(0, std::vector<int64_t>{1, 3});  // what its kernel reports
  extents.leave(*nonzero, nonzero_kind);
  EXPECT_EQ(extents.run(v.nz), (std::vector<int64_t>{1, 3}));

  const auto reshape = context_of(v.idx);
  const StepExtents reshape_kind = extents.classify(*reshape);
  extents.enter(*reshape, reshape_kind, kAmpleScratch, pointers);
  EXPECT_EQ(std::vector<int64_t>(reshape->inputs[0].dims.begin(), reshape->inputs[0].dims.end()),
            (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(std::vector<int64_t>(reshape->outputs[0].dims.begin(), reshape->outputs[0].dims.end()),
            (std::vector<int64_t>{3}));
  extents.leave(*reshape, reshape_kind);
  EXPECT_EQ(extents.run(v.idx), (std::vector<int64_t>{3}));
  // NonZero's int64[1,8] buffer holds 3 indices in this run: 40 bytes fewer than its bound.
  const auto [bound, used] = extents.bounded_bytes(p.timeline.storage);
  EXPECT_EQ(bound - used, 40u);

  // The next run forgets the count: a step reading it before NonZero reports is refused.
  extents.start_run();
  const auto again = context_of(v.idx);
  try {
    extents.enter(*again, reshape_kind, kAmpleScratch, pointers);
    FAIL() << "ran on extents not reported in this run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no extents yet in this run"), std::string::npos)
        << e.what();
  }
}
