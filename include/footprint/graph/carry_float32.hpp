#pragma once
// Float32 carriers: in a float16 or bfloat16 model, the activations that pass between kernels
// which compute in float32 anyway (oneDNN's convolutions and products, the adds between them)
// are stored as float32 holding values already rounded to the 16-bit type, so that no step
// narrows its output for the next to widen it again. Run last, after the layout, so that the
// layout changes between such kernels carry float32 too; `analyze`, `plan` and `run` all see the
// rewritten dtypes, so the arena (larger activations, no conversion scratch) is the one obtained.
//
//   graph::to_channels_last(g);
//   const graph::CarryReport r = graph::carry_float32(g);  // r.values: how many now float32
//
// Values stay exact: a node whose activations are carried (Node::rounds_to) computes what its
// 16-bit kernel computes, in float32, and the runtime rounds each carried output to the 16-bit
// type once after the kernel (Node::rounded_outputs), as the 16-bit kernel's store does. Which
// rows may do this is their registry row's promise (OpSchema::float32_carriers), made where the
// runtime registers the kernel. A value is carried only where its producer and every reader run
// such rows: graph inputs and outputs, constants, values read by a subgraph and values meeting
// any other op keep their 16-bit dtype.
#include <cstddef>
#include <cstdint>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

struct CarryReport {
  size_t values = 0;        // 16-bit activations now float32 carriers
  int64_t extra_bytes = 0;  // what they add over their 16-bit bytes (at the bound extents)
  DType rounds_to = DType::undefined;  // the 16-bit type they carry (one per model in practice)
};

// Rewrites the main graph (subgraphs are left as they are).
CarryReport carry_float32(Graph& g);

}  // namespace footprint::graph
