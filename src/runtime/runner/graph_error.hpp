#pragma once
// The runner's errors about a graph as a whole name the graph (the model's, or an If branch).
#include <string>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"

namespace footprint::runtime::runner {

[[noreturn]] inline void fail(const graph::Graph& g, const std::string& what) {
  throw Error("graph " + in_quotes(g.name()) + ": " + what);
}

}  // namespace footprint::runtime::runner
