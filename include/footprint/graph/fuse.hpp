#pragma once
// Fusion as a rewrite of the graph, run between inference and analysis, so that `analyze`,
// `plan` and `run` all see the same fused graph: a node whose kernel takes epilogues
// (OpSchema::epilogue_dtypes: Conv, MatMul, Gemm) absorbs the elementwise ops that read only its
// output (OpSchema::as_epilogue: Relu, Clip with constant bounds, Sigmoid, ...; and
// Sigmoid-then-Mul by the same input, SiLU). The absorbed nodes and their tensors leave the
// graph; the host's kernel applies them as it writes its output.
//
//   graph::infer_shapes(g);
//   const graph::FuseReport r = graph::fuse(g);  // r.fused: "Conv 'c1' + Relu 'r1'", ...
//
// The steps below are the fusion passes of graph::prepare_graph's list, in its order
// (src/graph/prepare_graph.cpp); graph::fuse runs them alone. The epilogues are folded in
// src/graph/passes/fuse_epilogues.cpp.
//
// First, a QDQ model's DequantizeLinear -> Conv / MatMul -> QuantizeLinear groups become the one
// QLinearConv or QLinearMatMul they mean, where that is the same int8 computation
// (src/graph/passes/fuse_qdq.cpp): the weights stay int8 and the activations between groups
// stay 8-bit, never dequantized copies.
//
// Then per-channel affine maps fold into the parameters before them
// (src/graph/passes/fold_channel_affine.cpp): an inference BatchNormalization into the convolution
// whose output it alone reads, a Mul or Add by a per-channel constant into a convolution or a
// normalisation. Constant nodes compute the new parameters once, when preparing.
//
// Then ops an exporter wrote as the elementwise steps that define them become the one row
// that computes them (src/graph/passes/fuse_patterns.cpp): LayerNorm's nine nodes (ReduceMean, Sub,
// Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) a LayerNormalization, GELU's erf and tanh forms a
// Gelu (which then folds into its MatMul as an epilogue), a MatMul followed by the Add of a bias
// along its last axis a footprint::MatMulAdd, attention a footprint::Attention, a channel shuffle
// (Reshape, Transpose, Reshape) a footprint::ChannelShuffle, Paddle's written-out HardSwish a
// HardSwish.
//
// After the epilogues, a squeeze-and-excitation block (GlobalAveragePool, a 1x1 convolution and
// its activation, a 1x1 convolution and its Sigmoid or HardSigmoid gate, the product of the pooled
// tensor by the gate) becomes one footprint::SqueezeExcite
// (src/graph/passes/fuse_squeeze_excite.cpp).
//
// Last, what is left of runs of elementwise ops (Add, Sub, Mul, Div, and the unary ops a host
// could take as epilogues) whose tensors all have the run's output shape becomes one
// footprint::Elementwise node (src/graph/passes/fuse_elementwise.cpp), its program a string
// attribute (graph/elementwise_program.hpp): a residual Add and its Relu, a layer scale's Mul and
// the Add after it, a detection head's box arithmetic. It reads each input once and writes one
// tensor.
//
// A node is fused only when nothing else could see what fusing hides: its output is float32,
// not a graph output, not a constant, and read by the absorbed nodes alone.
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

struct FuseReport {
  std::vector<std::string> fused;  // one line per absorbed op: "Conv 'c1' + Relu 'r1'"
  // One line per pattern run as one op: "LayerNormalization '/ln/LayerNormalization' from 9
  // nodes: ReduceMean '/ln/ReduceMean' ... Add '/ln/Add_1'"; an elementwise run's ends "as
  // Add(x0, x1); Relu(s0)", its program.
  std::vector<std::string> patterns;
  size_t nodes_removed = 0;
};

// Fuses the main graph (subgraphs are left as they are).
FuseReport fuse(Graph& g);

}  // namespace footprint::graph
