#include "footprint/analysis/model_program.hpp"

#include <algorithm>
#include <utility>

#include "footprint/analysis/memory_order.hpp"
#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/prepare_graph.hpp"

namespace footprint::analysis {
namespace {

// The graph analysis works on: built against the registry and prepared by the passes the runtime
// runs when it prepares (graph::prepare_graph), the inputs' extents bound under the dims and
// shapes, so prediction and run infer, fuse and lay out the same graph. Named input dims nothing
// binds go to the report's `defaulted`.
struct BoundGraph {
  graph::Graph graph;
  graph::PrepareReport report;
};

BoundGraph bound_graph(const graph::Model& model, const graph::OpRegistry& registry,
                       const DimBindings& dims, const graph::InputShapes& shapes,
                       const graph::InputValues& values, bool fuse, bool carry_float32) {
  BoundGraph b;
  b.graph = model.graph(registry);
  b.report = graph::prepare_graph(b.graph, dims,
                                  {.shapes = shapes,
                                   .values = values.empty() ? nullptr : &values,
                                   .fuse = fuse,
                                   .carry_float32 = carry_float32});
  return b;
}

void add_unbound(const std::vector<std::string>& defaulted, GraphProgram& program) {
  auto& u = program.unbound_dims;
  for (const std::string& d : defaulted) {
    if (std::find(u.begin(), u.end(), d) == u.end()) u.push_back(d);
  }
}

ModelProgram build_for(std::shared_ptr<const graph::Model> model, const graph::OpRegistry& registry,
                       const ModelProgramOptions& options, const graph::InputValues& values) {
  if (options.order != "stored" && options.order != "memory") {
    throw UsageError("order must be stored or memory, got " + in_quotes(options.order));
  }
  ModelProgram m;
  m.model = std::move(model);
  m.registry = &registry;
  m.options.inputs = options.inputs;
  m.options.dims = options.dims;
  m.options.subgraph_arena = options.subgraph_arena;
  m.shapes = options.shapes;
  m.values = values;
  m.fuse = options.fuse;
  m.carry_float32 = options.carry_float32;
  BoundGraph b =
      bound_graph(*m.model, registry, m.options.dims, m.shapes, m.values, m.fuse, m.carry_float32);
  m.graph = std::move(b.graph);
  m.fused = std::move(b.report.fused);
  m.channels_last = b.report.channels_last;
  m.carried = b.report.carried;
  m.inference = std::move(b.report.inference);
  if (b.report.rebatched) m.rebatched = b.report.rebatched->note();
  m.concrete_inputs = b.report.concrete;
  m.order = options.order;
  if (options.order == "memory") {
    // The search starts from (and never does worse than) the stored order.
    const MemoryOrder mo = memory_order(m.graph, m.options);
    m.stored_lower_bound_bytes = mo.stored_lower_bound_bytes;
    m.options.order = mo.order;
  }
  try {
    m.program = build_program(m.graph, m.options);
  } catch (const SizeOverflow&) {
    throw;
  } catch (const Error& e) {
    // A dim left at 1 is the usual reason an extent goes negative (a window longer than a
    // sequence of 1): say so beside the error.
    if (b.report.defaulted.empty()) throw;
    std::string note = std::string(e.what()) + " (with ";
    for (size_t i = 0; i < b.report.defaulted.size(); ++i)
      note += (i ? ", " : "") + b.report.defaulted[i] + "=1";
    throw Error(note + " by default; bind with --dim)");
  }
  add_unbound(b.report.defaulted, m.program);
  m.timeline = simulate(m.program.program);
  m.prepare = predict_prepare(m.graph, m.program, m.timeline);
  return m;
}

}  // namespace

ModelProgram build_model_program(std::shared_ptr<const graph::Model> model,
                                 const graph::OpRegistry& registry,
                                 const ModelProgramOptions& options) {
  try {
    return build_for(model, registry, options, {});
  } catch (const SizeOverflow&) {
    throw;
  } catch (const Error& first) {
    // An extent that depends on an input's values is unknown without them: with the values
    // given (--data-dir), the figures are computed for them, as the runtime plans for them.
    if (options.values.empty() || !graph::depends_on_values(first)) throw;
    try {
      return build_for(std::move(model), registry, options, options.values);
    } catch (const Error&) {
      throw first;
    }
  }
}

Timeline timeline_at(const ModelProgram& m, const DimBindings& dims) {
  // Node ids do not depend on the dims, so the order chosen for m holds here too.
  const BoundGraph b =
      bound_graph(*m.model, *m.registry, dims, m.shapes, m.values, m.fuse, m.carry_float32);
  GraphProgramOptions options = m.options;
  options.dims = dims;
  return simulate(build_program(b.graph, options).program);
}

DimSweep sweep_model(const ModelProgram& m, const std::string& dim,
                     const std::vector<int64_t>& values) {
  return sweep_dim(
      [&](int64_t v) {
        DimBindings at = m.options.dims;
        at[dim] = v;
        return timeline_at(m, at);
      },
      dim, values);
}

}  // namespace footprint::analysis
