#include "footprint/graph/node_runner.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/op_registry.hpp"

namespace footprint::graph {
namespace {

std::vector<ConcreteTensor> concrete(const std::vector<TensorRef>& refs,
                                     const std::vector<char>& present) {
  std::vector<ConcreteTensor> out(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    if (present[i] != 0) out[i] = {refs[i].dtype, {refs[i].dims.begin(), refs[i].dims.end()}};
  }
  return out;
}

struct FreeBytes {
  void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }
};

}  // namespace

void NodeContext::add_input(const TensorRef* t) {
  inputs.push_back(t != nullptr ? *t : TensorRef{});
  present_inputs.push_back(t != nullptr ? 1 : 0);
}

void NodeContext::add_output(const TensorRef* t) {
  outputs.push_back(t != nullptr ? *t : TensorRef{});
  present_outputs.push_back(t != nullptr ? 1 : 0);
}

void NodeContext::run_subgraph(std::string_view attribute, std::span<const TensorRef> in,
                               std::span<TensorRef> out) {
  if (subgraphs_ == nullptr) fail("its subgraphs are not run here (only when the model runs)");
  subgraphs_->run_subgraph(id_, attribute, in, out,
                           scratch.subspan(std::min(subgraph_offset, scratch.size())),
                           thread_count);
}

void NodeContext::set_output_extents(size_t i, std::span<const int64_t> extents) {
  TensorRef* out = output_or_null(i);
  if (out == nullptr) fail("output " + std::to_string(i) + " is absent");
  bool within = extents.size() == out->dims.size();
  for (size_t k = 0; within && k < extents.size(); ++k) {
    within = extents[k] >= 0 && extents[k] <= out->dims[k];
  }
  if (!within) {
    fail("output " + std::to_string(i) + " came out " + extents_text(extents) +
         ", beyond the bound it was given, " + extents_text(out->dims));
  }
  // The extents it was given: nothing to keep (a kernel run allocates nothing on static shapes).
  if (std::equal(extents.begin(), extents.end(), out->dims.begin())) return;
  if (reported_extents.size() < outputs.size()) reported_extents.resize(outputs.size());
  reported_extents[i].assign(extents.begin(), extents.end());
  out->dims = reported_extents[i];
}

uint64_t workspace_bytes(const NodeContext& ctx) {
  const OpSchema* s = ctx.node().schema;
  if (s == nullptr || s->workspace == nullptr) return 0;
  return s->workspace(ctx.node(), concrete(ctx.inputs, ctx.present_inputs),
                      concrete(ctx.outputs, ctx.present_outputs));
}

uint64_t packed_bytes(const NodeContext& ctx, const std::vector<bool>& constant_inputs) {
  const OpSchema* s = ctx.node().schema;
  if (s == nullptr || s->packed == nullptr) return 0;
  return s->packed(ctx.node(), concrete(ctx.inputs, ctx.present_inputs),
                   concrete(ctx.outputs, ctx.present_outputs), constant_inputs);
}

bool replaced_by_packing(const OpSchema* schema, size_t i, uint64_t packed, bool constant) {
  return schema != nullptr && packed > 0 && constant && i < 32 &&
         ((schema->packed_inputs >> i) & 1U) != 0;
}

std::unique_ptr<KernelState> prepare(const KernelContext& ctx) {
  const OpSchema* s = ctx.node().schema;
  if (s == nullptr || s->prepare == nullptr) return nullptr;
  try {
    return s->prepare(ctx);
  } catch (const std::bad_alloc&) {
    ctx.fail("out of memory while preparing its kernel");
  }
}

void run(KernelContext& ctx) {
  const OpSchema* s = ctx.node().schema;
  if (s == nullptr || s->kernel == nullptr) ctx.fail("no kernel to run it with");
  try {
    s->kernel(ctx);
  } catch (const std::bad_alloc&) {
    ctx.fail("out of memory while running its kernel");
  }
}

NodeRun evaluate(NodeContext& ctx) {
  NodeRun r;
  r.workspace_bytes = workspace_bytes(ctx);
  std::unique_ptr<std::byte, FreeBytes> scratch;
  if (r.workspace_bytes > 0) {
    scratch.reset(
        static_cast<std::byte*>(::operator new[](r.workspace_bytes, std::align_val_t{64})));
    ctx.scratch = {scratch.get(), static_cast<size_t>(r.workspace_bytes)};
  }
  const std::unique_ptr<KernelState> state = prepare(ctx);
  r.prepared = state != nullptr;
  r.state_bytes = state != nullptr ? state->owned_bytes() : 0;
  ctx.kernel_state = state.get();
  const uint64_t before = heap::snapshot().allocations;
  run(ctx);
  r.kernel_heap_allocations = heap::snapshot().allocations - before;
  ctx.kernel_state = nullptr;
  ctx.scratch = {};
  return r;
}

bool can_evaluate(const Node& node) {
  const OpSchema* s = node.schema;
  return s != nullptr && s->kernel != nullptr && !s->has_subgraphs && s->deterministic &&
         node.subgraphs.empty();
}

void evaluate_node(const Node& node, int64_t opset, std::span<const TensorRef* const> inputs,
                   std::span<TensorRef* const> outputs, int threads, NodeId node_id) {
  NodeContext ctx(node, node_id, opset);
  ctx.thread_count = threads;
  for (const TensorRef* t : inputs) ctx.add_input(t);
  for (const TensorRef* t : outputs) ctx.add_output(t);
  evaluate(ctx);
}

}  // namespace footprint::graph
