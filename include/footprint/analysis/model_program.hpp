#pragma once
// A loaded model as analyze, plan and report see it: its graph against a registry, shapes
// inferred, the node order chosen and the program simulated.
//
//   auto model = std::make_shared<const onnx::Model>(onnx::load_file("net.onnx"));
//   ModelProgram m = build_model_program(model, runtime::op_registry(), {.dims = {{"N", 8}}});
//   m.timeline.total_peak_bytes;  m.program.unbound_dims;  m.rebatched  // a note, or ""
//
// The CLI and the Python package build it the same way, so their figures are the same.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"

namespace footprint::analysis {

struct ModelProgramOptions {
  DimBindings dims;  // unbound named dims are 1 (listed in program.unbound_dims)
  InputsPolicy inputs = InputsPolicy::caller;
  std::string order = "stored";  // stored | memory (searched; never worse than stored)
};

struct ModelProgram {
  std::shared_ptr<const onnx::Model> model;  // shared: the graph refers into it
  graph::Graph graph;
  graph::ShapeInferenceReport inference;
  GraphProgramOptions options;
  GraphProgram program;
  Timeline timeline;
  std::string order;                                 // "stored" or "memory"
  std::optional<uint64_t> stored_lower_bound_bytes;  // set for the memory order
  std::string rebatched;                             // graph::Rebatch::note(), or ""
};

// Throws footprint::UsageError for an order other than stored or memory, footprint::Error for
// a graph that cannot be analysed (naming the node).
ModelProgram build_model_program(std::shared_ptr<const onnx::Model> model,
                                 const graph::OpRegistry& registry,
                                 const ModelProgramOptions& options);

}  // namespace footprint::analysis
