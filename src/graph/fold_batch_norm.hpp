#pragma once
// The BatchNormalization after a convolution, folded into the convolution's weights and bias
// (the first step of graph::fuse; fuse.hpp lists the rest).
#include <cstddef>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// Rewrites every Conv whose output only an inference BatchNormalization reads, both float32 with
// constant weights and parameters: a footprint::FoldBatchNorm node computes W' and bias' from
// them (a constant, so once, when the model is prepared), the Conv reads those and writes what
// the BatchNormalization wrote. Appends one line per fold to `lines` ("Conv+BatchNormalization
// 'c1' from 2 nodes: Conv 'c1' ... BatchNormalization 'bn1'") and returns the steps removed (the
// normalisations; a fold node runs while preparing, as constants do).
size_t fold_batch_norms(Graph& g, std::vector<std::string>& lines);

}  // namespace footprint::graph
