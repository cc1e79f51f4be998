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
                             std::span<void* const> pointers)
    : program_(program) {
  PreparedConstants::Readers readers = constants.count_readers(program_.step_nodes);
  for (graph::NodeId id : program_.step_nodes) {
    const graph::Node& n = g.node(id);
    auto ctx = make_context(g, id, extents, subgraphs);
    point_context(*ctx, pointers);
    const graph::OpSchema* schema = n.schema;
    if (schema == nullptr) {
      throw Error("node " + n.label(id) + ": the op " + in_quotes(n.op_type) +
                  " is unknown to footprint");
    }
    // A view whose output already is its input has nothing to write.
    const bool aliased =
        runtime::runs_as_view_copy(*schema) && n.outputs[0] != graph::kNoValue &&
        timeline.storage[n.outputs[0]] ==
            timeline.storage[n.inputs[static_cast<size_t>(schema->output_view_of)]];
    if (schema->kernel == nullptr) {
      throw Error("node " + n.label(id) + ": footprint has no kernel for " +
                  in_quotes(n.qualified_op()));
    }
    kinds_.push_back(extents.classify(*ctx));
    std::unique_ptr<graph::KernelState> state = aliased ? nullptr : graph::prepare(*ctx);
    ctx->kernel_state = state.get();
    if (state != nullptr) {
      packed_bytes_ += state->owned_bytes();
      constants.hold(state->owned_bytes());
    }
    states_.push_back(std::move(state));
    contexts_.push_back(std::move(ctx));
    skip_.push_back(aliased ? 1 : 0);
    const size_t s = states_.size() - 1;
    constants.release_replaced(
        n, [this, s](size_t i) { return replaced(s, i); }, readers);
  }
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
