#pragma once
// Evaluating one node at once, on tensors the caller owns, with the kernel of its registry row:
// what value propagation (graph::GraphBuilder) and constant folding (graph::fold_model) share.
//
//   std::vector<const TensorRef*> in = {&a, &b};
//   TensorRef y{DType::float32, dims, buffer};
//   std::vector<TensorRef*> out = {&y};
//   graph::evaluate_node(node, /*opset=*/18, in, out);
//
// The graph layer owns no kernels: the node's schema must come from a registry that has them
// (runtime::op_registry()). The step's workspace is allocated here for the call and released
// before it returns, as is any state the kernel's prepare hook builds.
#include <cstdint>
#include <span>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::graph {

// Whether the node can be evaluated by evaluate_node: a kernel, no subgraphs, deterministic.
bool can_evaluate(const Node& node);

// Runs the node's kernel. `inputs[i]` and `outputs[i]` are nullptr for an omitted optional input
// or output; outputs have their extents and storage set by the caller (an empty tensor's data
// may be null). Throws
// footprint::Error naming the node (by `node_id` in its graph when it has no name) when it has no
// kernel or the kernel fails.
void evaluate_node(const Node& node, int64_t opset, std::span<const TensorRef* const> inputs,
                   std::span<TensorRef* const> outputs, int threads = 1, NodeId node_id = -1);

}  // namespace footprint::graph
