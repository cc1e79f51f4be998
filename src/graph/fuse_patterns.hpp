#pragma once
// The op-level half of graph::fuse: ops an exporter wrote as the elementwise steps that define
// them, rewritten into the one registry row that computes them in a pass (fuse.hpp lists them).
#include <cstddef>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// Rewrites every pattern of the main graph; appends one line per rewrite to `lines` ("Gelu
// '/mlp/Gelu' from 5 nodes: Div '/mlp/Div' ... Mul '/mlp/Mul_1'") and returns the nodes removed.
size_t fuse_patterns(Graph& g, std::vector<std::string>& lines);

}  // namespace footprint::graph
