#include "step_context.hpp"

#include <string>

#include "footprint/core/error.hpp"

namespace footprint::runtime::runner {

std::unique_ptr<graph::NodeContext> make_context(const graph::Graph& g, graph::NodeId id,
                                                 const BoundedExtents& extents,
                                                 graph::SubgraphRunner* subgraphs) {
  const graph::Node& n = g.node(id);
  auto ctx = std::make_unique<graph::NodeContext>(n, id, g.opset(n.domain), subgraphs);
  auto ref_of = [&](graph::ValueId v, const char* role, size_t i) {
    const graph::Value& value = g.value(v);
    if (!extents.known(v)) {
      throw Error("node " + n.label(id) + ": " + role + " " + std::to_string(i) + " " +
                  in_quotes(value.name) + " has extents unknown before running (" +
                  std::string(dtype_name(value.dtype)) + value.shape.to_string() +
                  "); footprint runs graphs whose shapes follow from the inputs' extents");
    }
    return graph::TensorRef{value.dtype, extents.planned(v), nullptr};
  };
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const graph::ValueId v = n.inputs[i];
    ctx->present_inputs.push_back(v != graph::kNoValue ? 1 : 0);
    ctx->inputs.push_back(v != graph::kNoValue ? ref_of(v, "input", i) : graph::TensorRef{});
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const graph::ValueId v = n.outputs[i];
    ctx->present_outputs.push_back(v != graph::kNoValue ? 1 : 0);
    ctx->outputs.push_back(v != graph::kNoValue ? ref_of(v, "output", i) : graph::TensorRef{});
  }
  return ctx;
}

void point_context(graph::NodeContext& ctx, std::span<void* const> pointers) {
  const graph::Node& n = ctx.node();
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] != graph::kNoValue) ctx.inputs[i].data = pointers[n.inputs[i]];
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] != graph::kNoValue) ctx.outputs[i].data = pointers[n.outputs[i]];
  }
}

}  // namespace footprint::runtime::runner
