#pragma once
// The quantized step of graph::fuse (fuse.hpp lists the steps; graph::prepare_graph runs them in
// order): DequantizeLinear -> Conv / MatMul -> QuantizeLinear groups of QDQ models as the one
// QLinearConv or QLinearMatMul they mean.
#include <cstddef>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// Rewrites each group whose quantization a QLinear row expresses exactly (fuse_qdq.cpp says
// which), where the runtime's row runs it; appends one line per group to `lines` ("QLinearConv
// 'conv1' from 5 nodes: ...") and returns the nodes removed.
size_t fuse_qdq(Graph& g, std::vector<std::string>& lines);

}  // namespace footprint::graph
