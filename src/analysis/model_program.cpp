#include "footprint/analysis/model_program.hpp"

#include <algorithm>
#include <utility>

#include "footprint/analysis/memory_order.hpp"
#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/rebatch.hpp"

namespace footprint::analysis {
namespace {

// The graph analysis works on: built against the registry, re-batched when batch is bound, and
// with the inputs' extents bound before inference as the runtime binds them when it prepares, so
// prediction and run infer the same shapes. Named input dims nothing binds go to `defaulted`.
struct BoundGraph {
  graph::Graph graph;
  graph::ShapeInferenceReport inference;
  std::string rebatched;
  bool concrete = false;
  std::vector<std::string> defaulted;
  graph::FuseReport fused;
  graph::ChannelsLastReport channels_last;
};

// Fused after inference, as Session::prepare fuses: the same graph for prediction and run.
BoundGraph bound_graph(const graph::Model& model, const graph::OpRegistry& registry,
                       const DimBindings& dims, const graph::InputShapes& shapes, bool fuse) {
  BoundGraph b;
  b.graph = model.graph(registry);
  if (const auto rebatched = graph::rebatch_if_bound(b.graph, dims))
    b.rebatched = rebatched->note();
  b.concrete = graph::bind_input_extents(b.graph, dims, b.defaulted, shapes);
  b.inference = graph::infer_shapes(b.graph);
  if (fuse) {
    b.fused = graph::fuse(b.graph);
    b.channels_last = graph::to_channels_last(b.graph);
  }
  return b;
}

void add_unbound(const std::vector<std::string>& defaulted, GraphProgram& program) {
  auto& u = program.unbound_dims;
  for (const std::string& d : defaulted) {
    if (std::find(u.begin(), u.end(), d) == u.end()) u.push_back(d);
  }
}

}  // namespace

ModelProgram build_model_program(std::shared_ptr<const graph::Model> model,
                                 const graph::OpRegistry& registry,
                                 const ModelProgramOptions& options) {
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
  m.fuse = options.fuse;
  BoundGraph b = bound_graph(*m.model, registry, m.options.dims, m.shapes, m.fuse);
  m.graph = std::move(b.graph);
  m.fused = std::move(b.fused);
  m.channels_last = b.channels_last;
  m.inference = std::move(b.inference);
  m.rebatched = std::move(b.rebatched);
  m.concrete_inputs = b.concrete;
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
    if (b.defaulted.empty()) throw;
    std::string note = std::string(e.what()) + " (with ";
    for (size_t i = 0; i < b.defaulted.size(); ++i) note += (i ? ", " : "") + b.defaulted[i] + "=1";
    throw Error(note + " by default; bind with --dim)");
  }
  add_unbound(b.defaulted, m.program);
  m.timeline = simulate(m.program.program);
  m.prepare = predict_prepare(m.graph, m.program, m.timeline);
  return m;
}

Timeline timeline_at(const ModelProgram& m, const DimBindings& dims) {
  // Node ids do not depend on the dims, so the order chosen for m holds here too.
  const BoundGraph b = bound_graph(*m.model, *m.registry, dims, m.shapes, m.fuse);
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
