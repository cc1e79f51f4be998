#pragma once
// The KernelContext the executor hands a kernel: the node's tensors with pointers into the
// arena, weights, inputs and outputs, refreshed before each run.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime {

class GraphRunner;

class StepContext final : public graph::KernelContext {
 public:
  StepContext(const graph::Node& node, graph::NodeId id, int64_t opset, GraphRunner* runner)
      : node_(node), id_(id), opset_(opset), runner_(runner) {}

  const graph::Node& node() const override { return node_; }
  int32_t node_id() const override { return id_; }
  int64_t opset() const override { return opset_; }
  size_t input_count() const override { return inputs.size(); }
  size_t output_count() const override { return outputs.size(); }
  const graph::TensorRef* input_or_null(size_t i) const override {
    return i < inputs.size() && present_inputs[i] ? &inputs[i] : nullptr;
  }
  graph::TensorRef* output_or_null(size_t i) override {
    return i < outputs.size() && present_outputs[i] ? &outputs[i] : nullptr;
  }
  std::span<std::byte> workspace() override { return scratch; }
  int threads() const override { return thread_count; }
  graph::KernelState* state() const override { return kernel_state; }
  void run_subgraph(std::string_view attribute, std::span<const graph::TensorRef> in,
                    std::span<graph::TensorRef> out) override;

  std::vector<graph::TensorRef> inputs;
  std::vector<graph::TensorRef> outputs;
  std::vector<char> present_inputs;
  std::vector<char> present_outputs;
  std::span<std::byte> scratch;
  int thread_count = 1;
  graph::KernelState* kernel_state = nullptr;

 private:
  const graph::Node& node_;
  graph::NodeId id_;
  int64_t opset_;
  GraphRunner* runner_;
};

}  // namespace footprint::runtime
