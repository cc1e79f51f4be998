#pragma once
// A node order that lowers the arena's lower bound: the same graph, run in an order that keeps
// fewer activations alive at once (DESIGN.md: "a different order can have a smaller bound").
//
//   MemoryOrder m = memory_order(g, options);   // options.order: the order to beat (empty: stored)
//   options.order = m.order;                    // build_program(g, options) now runs in it
//
// Small graphs (up to kExactSteps steps) are searched exactly: dynamic programming over the sets
// of executed steps, keeping the smallest peak that reaches each set. Larger ones use a beam
// search scored by peak and live bytes, within a work budget (its cost grows with the square of
// the steps, about 11000 of them; past it the stored order is kept and `method` says why).
// Either way the result is a
// topological order whose lower bound, measured by simulate(), is never above the starting order's:
// when the search does not beat it, the starting order is returned.
#include <cstdint>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/graph/graph.hpp"

namespace footprint::analysis {

inline constexpr size_t kExactSteps = 20;
inline constexpr size_t kBeamWidth = 8;

struct MemoryOrder {
  std::vector<graph::NodeId> order;       // every node of g, topological
  uint64_t lower_bound_bytes = 0;         // simulate()'s lower bound in `order`
  uint64_t stored_lower_bound_bytes = 0;  // the same in the starting order
  std::string method;  // "exact", "beam" or "stored..." (nothing better found, or too large)
  bool exact = false;  // the search was exhaustive (under its cost model)
};

MemoryOrder memory_order(const graph::Graph& g, const GraphProgramOptions& options = {});

}  // namespace footprint::analysis
