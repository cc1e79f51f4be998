#pragma once
// Per-channel affine maps folded into the weights before them (the first step of graph::fuse;
// fuse.hpp lists the rest).
#include <cstddef>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// Folds, until nothing more folds, where everything involved is real numbers of one dtype that
// the folding rows' kernels compute in (OpSchema::kernel_dtypes) and constant but the
// activations, and the folded node alone reads its host's output:
//  - an inference BatchNormalization into the Conv before it: a footprint::FoldBatchNorm node
//    computes the scaled weights and bias;
//  - a Mul or Add by a per-channel constant ([M,1,1], [1,M,1,1], a scalar) into the Conv or
//    BatchNormalization before it: footprint::ChannelAffine nodes scale the weights and bias (a
//    normalisation's scale and shift).
// Those nodes read only constants, so they are constants: the runtime computes them once, when
// preparing. The host writes what the folded node wrote. Appends one line per fold to `lines`
// ("Conv+BatchNormalization 'c1' from 2 nodes: Conv 'c1' ... BatchNormalization 'bn1'") and
// returns the steps removed.
size_t fold_channel_affines(Graph& g, std::vector<std::string>& lines);

}  // namespace footprint::graph
