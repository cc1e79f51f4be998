#pragma once
// A model's arena as a buffer list: the timeline's activation and workspace lifetimes become
// planner buffers. Only analysis *types* are read here, so the plan layer stays free of the
// ONNX reader and the graph (DESIGN.md: data flows analysis -> plan).
//
//   std::vector<plan::Buffer> b = plan::arena_buffers(timeline, program);
//   plan::Plan p = plan::plan_buffers(b, "auto");  // p.arena_bytes >= lower_bound_arena_bytes
#include <vector>

#include "footprint/analysis/memory_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/plan/buffer.hpp"

namespace footprint::plan {

// Sizes rounded up to 64 bytes and aligned to 64 (DESIGN.md "Sizes"); lifetimes become half-open,
// [first, last + 1). Ids are tensor names ("workspace:STEP" for scratch), made CSV-safe.
std::vector<Buffer> arena_buffers(const analysis::Timeline& timeline,
                                  const analysis::MemoryProgram& program);

}  // namespace footprint::plan
