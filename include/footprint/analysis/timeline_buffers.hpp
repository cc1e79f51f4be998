#pragma once
// A model's arena as a buffer list: the timeline's activation and workspace lifetimes become
// planner buffers. This is where analysis hands over to the plan layer (DESIGN.md: data flows
// analysis -> plan), so it lives in analysis and plan stays on core alone: planners take buffers
// from anywhere (a timeline, a MiniMalloc CSV) and know nothing of graphs or timelines.
//
//   std::vector<plan::Buffer> b = analysis::arena_buffers(timeline, program);
//   plan::Plan p = plan::plan_buffers(b, "auto");  // p.arena_bytes >= lower_bound_arena_bytes
//
// A control-flow node's branches are planned the same way, each in an arena of its own inside
// the node's scratch; build_program asks for that arena through subgraph_arena():
//
//   options.subgraph_arena = analysis::subgraph_arena("auto");
//   analysis::build_program(g, options);  // an If's step scratch = its largest planned branch
#include <string>
#include <string_view>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/memory_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/plan/buffer.hpp"
#include "footprint/plan/planner.hpp"

namespace footprint::analysis {

// Sizes rounded up to 64 bytes and aligned to 64 (DESIGN.md "Sizes"); lifetimes become half-open,
// [first, last + 1). Ids are tensor names ("workspace:STEP" for scratch), made CSV-safe.
std::vector<plan::Buffer> arena_buffers(const Timeline& timeline, const MemoryProgram& program);

// The arena `algorithm` plans for a subgraph's program: what the runtime obtains when it runs
// the subgraph with the same planner (runtime::SessionOptions::planner).
SubgraphArenaFn subgraph_arena(std::string_view algorithm, const plan::PlanOptions& options = {});

}  // namespace footprint::analysis
