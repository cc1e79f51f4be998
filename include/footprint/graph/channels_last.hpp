#pragma once
// Channels-last layout as a rewrite of the graph, run after graph::fuse, so that `analyze`,
// `plan` and `run` all see the same tensors: convolutions (and the pools and elementwise ops
// around them) move to rows that read and write [N, H, W, C] tensors (OpSchema::channels_last:
// NhwcConv for Conv), and ToChannelsLast / FromChannelsLast nodes (domain "footprint") change
// the layout where the graph's plain NCHW tensors meet them. A chain of convolutions then stays
// channels-last between its steps rather than reordering in and out of each.
//
//   graph::infer_shapes(g);
//   graph::fuse(g);
//   const graph::ChannelsLastReport r = graph::to_channels_last(g);  // infers shapes again
//
// A node moves when its registry row names a channels-last row (the runtime's registry does,
// where its kernels gain from it) and that row has a kernel; a pool moves only where its input
// is channels-last already, an elementwise op (OpSchema::elementwise) only where one of its
// rank-4 operands is and every other operand is rank 4 or a broadcast scalar. Tensors are
// float32 and rank 4. The layout changes are real steps with their own tensors: the arena that
// analysis predicts holds them, as the run does.
#include <cstddef>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::graph {

struct ChannelsLastReport {
  size_t nodes = 0;           // nodes now running on channels-last tensors
  size_t layout_changes = 0;  // ToChannelsLast and FromChannelsLast nodes added
};

// Rewrites the main graph (subgraphs are left as they are) and infers its shapes again with
// `options`.
ChannelsLastReport to_channels_last(Graph& g, const ShapeInferenceOptions& options = {});

}  // namespace footprint::graph
