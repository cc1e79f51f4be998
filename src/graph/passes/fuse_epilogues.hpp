#pragma once
// The epilogue step of graph::fuse (fuse.hpp lists the steps; graph::prepare_graph runs them in
// order): activations folded into the node whose kernel takes them.
#include <cstddef>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// Folds into each node whose kernel applies epilogues in its output's dtype
// (OpSchema::epilogue_dtypes) the activations that alone read that output (OpSchema::as_epilogue:
// Relu, Clip, ...; and SiLU, a Sigmoid and a Mul by the same input), as many in a row as follow
// it. Appends one line per
// absorbed op to `fused` ("Conv 'c1' + Relu 'r1'") and returns the nodes removed.
size_t fuse_epilogues(Graph& g, std::vector<std::string>& fused);

}  // namespace footprint::graph
