#include "footprint/graph/node_eval.hpp"

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"

namespace footprint::graph {
namespace {

// The smallest KernelContext: the caller's tensors, a heap workspace for the one call.
class EvalContext final : public KernelContext {
 public:
  EvalContext(const Node& node, NodeId id, int64_t opset, std::span<const TensorRef* const> inputs,
              std::span<TensorRef* const> outputs, int threads)
      : node_(node),
        id_(id),
        opset_(opset),
        inputs_(inputs),
        outputs_(outputs),
        threads_(threads) {}

  const Node& node() const override { return node_; }
  int32_t node_id() const override { return id_; }
  int64_t opset() const override { return opset_; }
  size_t input_count() const override { return inputs_.size(); }
  size_t output_count() const override { return outputs_.size(); }
  const TensorRef* input_or_null(size_t i) const override {
    return i < inputs_.size() ? inputs_[i] : nullptr;
  }
  TensorRef* output_or_null(size_t i) override {
    return i < outputs_.size() ? outputs_[i] : nullptr;
  }
  std::span<std::byte> workspace() override { return workspace_; }
  int threads() const override { return threads_; }
  KernelState* state() const override { return state_; }
  void run_subgraph(std::string_view, std::span<const TensorRef>, std::span<TensorRef>) override {
    fail("subgraphs are not evaluated at build time");
  }

  std::span<std::byte> workspace_;
  KernelState* state_ = nullptr;

 private:
  const Node& node_;
  NodeId id_;
  int64_t opset_;
  std::span<const TensorRef* const> inputs_;
  std::span<TensorRef* const> outputs_;
  int threads_;
};

std::vector<ConcreteTensor> concrete(std::span<const TensorRef* const> refs) {
  std::vector<ConcreteTensor> out;
  out.reserve(refs.size());
  for (const TensorRef* r : refs) {
    ConcreteTensor t;
    if (r != nullptr) t = {r->dtype, {r->dims.begin(), r->dims.end()}};
    out.push_back(std::move(t));
  }
  return out;
}

struct FreeBytes {
  void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }
};

}  // namespace

bool can_evaluate(const Node& node) {
  const OpSchema* s = node.schema;
  return s != nullptr && s->kernel != nullptr && !s->has_subgraphs && s->deterministic &&
         node.subgraphs.empty();
}

void evaluate_node(const Node& node, int64_t opset, std::span<const TensorRef* const> inputs,
                   std::span<TensorRef* const> outputs, int threads, NodeId node_id) {
  const OpSchema* s = node.schema;
  if (s == nullptr || s->kernel == nullptr) {
    throw Error("node " + node.label(node_id) + ": no kernel to evaluate it with");
  }
  EvalContext ctx(node, node_id, opset, inputs, outputs, threads);
  uint64_t scratch_bytes = 0;
  if (s->workspace != nullptr) {
    const std::vector<const TensorRef*> outs(outputs.begin(), outputs.end());
    scratch_bytes = s->workspace(node, concrete(inputs), concrete(outs));
  }
  std::unique_ptr<std::byte, FreeBytes> scratch;
  if (scratch_bytes > 0) {
    scratch.reset(static_cast<std::byte*>(::operator new[](scratch_bytes, std::align_val_t{64})));
    ctx.workspace_ = {scratch.get(), static_cast<size_t>(scratch_bytes)};
  }
  std::unique_ptr<KernelState> state;
  if (s->prepare != nullptr) state = s->prepare(ctx);
  ctx.state_ = state.get();
  s->kernel(ctx);
}

}  // namespace footprint::graph
