#include "footprint/analysis/model_program.hpp"

#include <utility>

#include "footprint/analysis/memory_order.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/rebatch.hpp"

namespace footprint::analysis {

ModelProgram build_model_program(std::shared_ptr<const onnx::Model> model,
                                 const graph::OpRegistry& registry,
                                 const ModelProgramOptions& options) {
  if (options.order != "stored" && options.order != "memory") {
    throw UsageError("order must be stored or memory, got " + in_quotes(options.order));
  }
  ModelProgram m;
  m.model = std::move(model);
  m.options.inputs = options.inputs;
  m.options.dims = options.dims;
  m.graph = graph::Graph::from_onnx(*m.model, registry);
  if (const auto rebatched = graph::rebatch_if_bound(m.graph, m.options.dims))
    m.rebatched = rebatched->note();
  m.inference = graph::infer_shapes(m.graph);
  m.order = options.order;
  if (options.order == "memory") {
    // The search starts from (and never does worse than) the stored order.
    const MemoryOrder mo = memory_order(m.graph, m.options);
    m.stored_lower_bound_bytes = mo.stored_lower_bound_bytes;
    m.options.order = mo.order;
  }
  m.program = build_program(m.graph, m.options);
  m.timeline = simulate(m.program.program);
  return m;
}

}  // namespace footprint::analysis
