#pragma once
// Fusion as a rewrite of the graph, run between inference and analysis, so that `analyze`,
// `plan` and `run` all see the same fused graph: a node whose kernel takes epilogues
// (OpSchema::takes_epilogues: Conv, MatMul, Gemm) absorbs the elementwise ops that read only its
// output (OpSchema::as_epilogue: Relu, Clip with constant bounds, Sigmoid, ...; and
// Sigmoid-then-Mul by the same input, SiLU). The absorbed nodes and their tensors leave the
// graph; the host's kernel applies them as it writes its output.
//
//   graph::infer_shapes(g);
//   const graph::FuseReport r = graph::fuse(g);  // r.fused: "Conv 'c1' + Relu 'r1'", ...
//
// A node is fused only when nothing else could see what fusing hides: its output is float32,
// not a graph output, not a constant, and read by the absorbed nodes alone.
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

struct FuseReport {
  std::vector<std::string> fused;  // one line per absorbed op: "Conv 'c1' + Relu 'r1'"
  size_t nodes_removed = 0;
};

// Fuses the main graph (subgraphs are left as they are).
FuseReport fuse(Graph& g);

}  // namespace footprint::graph
