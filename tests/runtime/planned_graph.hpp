#pragma once
// A graph built in code and planned as the graph runner plans it (inputs held by the caller,
// the `auto` planner): what the runner's parts (src/runtime/runner/) are built from, for testing
// each part alone.
//
//   GraphBuilder b(runtime::op_registry());
//   ...
//   const PlannedGraph p = plan_graph(b);
//   runner::Placement placement(p.graph(), p.program, p.timeline, p.plan);
#include <gtest/gtest.h>

#include <string_view>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/plan/plan.hpp"
#include "footprint/plan/planner.hpp"

namespace footprint::testing {

struct PlannedGraph {
  graph::BuiltGraph built;
  analysis::GraphProgram program;
  analysis::Timeline timeline;
  plan::Plan plan;

  const graph::Graph& graph() const { return built.graph; }
  graph::ValueId id(std::string_view name) const {
    const auto v = built.graph.find(name);
    EXPECT_TRUE(v) << "no value " << name;
    return v ? *v : graph::kNoValue;
  }
  graph::NodeId producer(std::string_view name) const {
    const graph::ValueId v = id(name);
    for (size_t n = 0; n < built.graph.nodes().size(); ++n) {
      for (graph::ValueId o : built.graph.nodes()[n].outputs) {
        if (o == v) return static_cast<graph::NodeId>(n);
      }
    }
    ADD_FAILURE() << "no node makes " << name;
    return -1;
  }
};

inline PlannedGraph plan_graph(const graph::GraphBuilder& b) {
  PlannedGraph p;
  p.built = b.to_graph();
  analysis::GraphProgramOptions po;
  po.inputs = analysis::InputsPolicy::caller;
  p.program = analysis::build_program(p.built.graph, po);
  p.timeline = analysis::simulate(p.program.program);
  p.plan = plan::plan_buffers(analysis::arena_buffers(p.timeline, p.program.program), "auto");
  return p;
}

}  // namespace footprint::testing
