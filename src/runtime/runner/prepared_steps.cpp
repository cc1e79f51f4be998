#include "prepared_steps.hpp"

#include <string>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "step_context.hpp"

namespace footprint::runtime::runner {

PreparedSteps::PreparedSteps(const graph::Graph& g, const analysis::GraphProgram& program,
                             const analysis::Timeline& timeline, const BoundedExtents& extents,
                             PreparedConstants& constants, graph::SubgraphRunner* subgraphs,
                             std::vector<void*>& pointers)
    : program_(program) {
  const size_t steps = program_.step_nodes.size();
  contexts_.resize(steps);
  states_.resize(steps);
  skip_.assign(steps, 0);
  kinds_.resize(steps);
  bool pointed = true;  // `pointers` show every constant evaluated so far
  for (const analysis::PrepareOrder::Event& e : constants.order().events) {
    if (!e.is_step) {
      constants.evaluate(e.index, pointers);
      pointed = false;
      continue;
    }
    if (!pointed) constants.point(pointers);
    pointed = true;
    prepare(e.index, g, timeline, extents, constants, subgraphs, pointers);
  }
  // What runs read between runs: the constants kept, the released ones null.
  constants.point(pointers);
}

void PreparedSteps::prepare(size_t s, const graph::Graph& g, const analysis::Timeline& timeline,
                            const BoundedExtents& extents, PreparedConstants& constants,
                            graph::SubgraphRunner* subgraphs, std::span<void* const> pointers) {
  const graph::NodeId id = program_.step_nodes[s];
  const graph::Node& n = g.node(id);
  auto ctx = make_context(g, id, extents, subgraphs);
  point_context(*ctx, pointers);
  const graph::OpSchema* schema = n.schema;
  if (schema == nullptr) {
    throw Error("node " + n.label(id) + ": the op " + in_quotes(n.qualified_op()) +
                " is unknown to footprint");
  }
  // A view whose output already is its input has nothing to write.
  const bool aliased = runtime::runs_as_view_copy(*schema) && n.outputs[0] != graph::kNoValue &&
                       timeline.storage[n.outputs[0]] ==
                           timeline.storage[n.inputs[static_cast<size_t>(schema->output_view_of)]];
  if (schema->kernel == nullptr) {
    throw Error("node " + n.label(id) + ": footprint has no kernel for " +
                in_quotes(n.qualified_op()));
  }
  kinds_[s] = extents.classify(*ctx);
  std::unique_ptr<graph::KernelState> state = aliased ? nullptr : graph::prepare(*ctx);
  ctx->kernel_state = state.get();
  if (state != nullptr) {
    packed_bytes_ += state->owned_bytes();
    constants.hold(state->owned_bytes());
  }
  states_[s] = std::move(state);
  contexts_[s] = std::move(ctx);
  skip_[s] = aliased ? 1 : 0;
  constants.release_replaced(n, [this, s](size_t i) { return replaced(s, i); });
}

bool PreparedSteps::replaced(size_t s, size_t i) const {
  const graph::Node& n = contexts_[s]->node();
  const uint64_t packed = !skip_[s] && states_[s] != nullptr ? states_[s]->owned_bytes() : 0;
  const bool constant =
      n.inputs[i] != graph::kNoValue &&
      program_.program.tensors[n.inputs[i]].category == analysis::Category::weights;
  return graph::replaced_by_packing(n.schema, i, packed, constant);
}

}  // namespace footprint::runtime::runner
