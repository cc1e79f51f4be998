#pragma once
// Running one node: the one KernelContext every caller hands a kernel, and the three things done
// with it (size its scratch, prepare its state, run it). The runtime's steps, value propagation
// and constant folding (through evaluate_node) and the kernel tests all run nodes through here,
// so a kernel sees the same context, the same workspace and the same prepare call wherever it
// runs, and what a run did (workspace, state, heap) can be observed in one place.
//
//   graph::NodeContext ctx(node, id, /*opset=*/18);
//   ctx.inputs = {{DType::float32, x_dims, x_data}};
//   ctx.outputs = {{DType::float32, y_dims, y_data}};
//   const graph::NodeRun r = graph::evaluate(ctx);  // heap scratch, prepare, kernel
//   // r.workspace_bytes: the scratch the row declared; r.kernel_heap_allocations: what the
//   // kernel allocated itself (a kernel never should: DESIGN.md "Prediction = measurement")
//
// The graph layer owns no kernels: the node's schema must come from a registry that has them
// (runtime::op_registry()).
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::graph {

// Runs a node's subgraphs (If branches, Loop bodies) for the node's context: the runtime's
// GraphRunner. Value propagation and folding have none; a kernel that asks then fails.
class SubgraphRunner {
 public:
  virtual void run_subgraph(NodeId node, std::string_view attribute,
                            std::span<const TensorRef> inputs, std::span<TensorRef> outputs,
                            std::span<std::byte> scratch, int threads) = 0;

 protected:
  ~SubgraphRunner() = default;
};

// A node's tensors, scratch, thread count and state, filled by whoever runs it (add_input and
// add_output, or the slots directly). A present tensor with no data is one whose contents are
// not known yet (while preparing).
class NodeContext final : public KernelContext {
 public:
  NodeContext(const Node& node, NodeId id, int64_t opset, SubgraphRunner* subgraphs = nullptr)
      : node_(&node), id_(id), opset_(opset), subgraphs_(subgraphs) {}

  const Node& node() const override { return *node_; }
  int32_t node_id() const override { return id_; }
  int64_t opset() const override { return opset_; }
  size_t input_count() const override { return inputs.size(); }
  size_t output_count() const override { return outputs.size(); }
  const TensorRef* input_or_null(size_t i) const override {
    return i < inputs.size() && present_inputs[i] != 0 ? &inputs[i] : nullptr;
  }
  TensorRef* output_or_null(size_t i) override {
    return i < outputs.size() && present_outputs[i] != 0 ? &outputs[i] : nullptr;
  }
  std::span<std::byte> workspace() override { return scratch; }
  int threads() const override { return thread_count; }
  KernelState* state() const override { return kernel_state; }
  void run_subgraph(std::string_view attribute, std::span<const TensorRef> in,
                    std::span<TensorRef> out) override;
  void set_output_extents(size_t i, std::span<const int64_t> extents) override;

  // nullptr: an omitted optional input or output.
  void add_input(const TensorRef* t);
  void add_output(const TensorRef* t);

  std::vector<TensorRef> inputs;
  std::vector<TensorRef> outputs;
  std::vector<char> present_inputs;  // one flag per slot of `inputs`
  std::vector<char> present_outputs;
  std::span<std::byte> scratch;
  // Where in `scratch` the subgraphs' arena starts (after the kernel's own scratch).
  size_t subgraph_offset = 0;
  int thread_count = 1;
  KernelState* kernel_state = nullptr;
  // Per output, the extents set_output_extents reported (kept here, so output(i).dims may point
  // at them).
  std::vector<std::vector<int64_t>> reported_extents;

 private:
  const Node* node_;
  NodeId id_;
  int64_t opset_;
  SubgraphRunner* subgraphs_;
};

// The scratch bytes one run of the node needs with the context's extents (its row's
// WorkspaceFn; 0 when it declares none): what analysis plans, the runtime hands the kernel and
// evaluate() allocates. Data pointers are not read, so analysis asks with extents only.
uint64_t workspace_bytes(const NodeContext& ctx);
// The heap bytes the node's prepared state will keep (the row's PackedFn; 0 when it declares
// none), given which inputs are constants.
uint64_t packed_bytes(const NodeContext& ctx, const std::vector<bool>& constant_inputs);

// Whether a step reads input `i` only through its packed copy (OpSchema::packed_inputs): the
// state packs (`packed` bytes, as packed_bytes gives them) and the input is a constant.
bool replaced_by_packing(const OpSchema* schema, size_t i, uint64_t packed, bool constant);

// The kernel's per-node state (its row's PrepareFn), or nullptr when it builds none. Throws
// footprint::Error naming the node when preparing runs out of memory.
std::unique_ptr<KernelState> prepare(const KernelContext& ctx);

// Runs the node's kernel once with what the context holds. Throws footprint::Error naming the
// node when it has no kernel or runs out of memory.
void run(KernelContext& ctx);

// What evaluate() did, for callers and tests that check a kernel keeps its promises.
struct NodeRun {
  uint64_t workspace_bytes = 0;          // the scratch the row declared and the kernel was given
  bool prepared = false;                 // the row's PrepareFn built a state
  uint64_t state_bytes = 0;              // what that state holds beyond its primitives
  uint64_t kernel_heap_allocations = 0;  // heap blocks the kernel call itself took
};

// Sizes and allocates the scratch on the heap, prepares, and runs the node once; the scratch
// and the state are released before it returns. Heap figures are zero where the process does
// not link the counting allocator (heap::available()).
NodeRun evaluate(NodeContext& ctx);

// Whether the node can be evaluated on its own: a kernel, no subgraphs, deterministic.
bool can_evaluate(const Node& node);

// evaluate() on tensors the caller owns: `inputs[i]` and `outputs[i]` are nullptr for an omitted
// optional input or output; outputs have their extents and storage set by the caller (an empty
// tensor's data may be null). Value propagation (GraphBuilder) and folding (fold_model) use it.
void evaluate_node(const Node& node, int64_t opset, std::span<const TensorRef* const> inputs,
                   std::span<TensorRef* const> outputs, int threads = 1, NodeId node_id = -1);

}  // namespace footprint::graph
