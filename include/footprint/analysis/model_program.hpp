#pragma once
// A loaded model as analyze, plan and report see it: its graph against a registry, the inputs'
// extents bound under the dims and shapes inferred from them (graph::bind_input_extents, as the
// runtime does when it prepares), the node order chosen and the program simulated.
//
//   auto model = std::make_shared<const graph::Model>(graph::load_model("net.onnx"));
//   ModelProgram m = build_model_program(model, runtime::op_registry(), {.dims = {{"N", 8}}});
//   m.timeline.total_peak_bytes;  m.program.unbound_dims;  m.rebatched  // a note, or ""
//
// The CLI and the Python package build it the same way, so their figures are the same.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "footprint/analysis/dim_sweep.hpp"
#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/prepare_memory.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/carry_float32.hpp"
#include "footprint/graph/channels_last.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/prepare_graph.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::analysis {

struct ModelProgramOptions {
  DimBindings dims;           // unbound named dims are 1 (listed in program.unbound_dims)
  graph::InputShapes shapes;  // whole inputs' extents (graph::bind_input_extents)
  // Inputs' values (--data-dir's small integer and bool tensors): given to inference only when an
  // extent that depends on them is otherwise unknown, as runtime::Session does.
  graph::InputValues values;
  InputsPolicy inputs = InputsPolicy::caller;
  std::string order = "stored";  // stored | memory (searched; never worse than stored)
  // How a branch or body's arena is planned (analysis::subgraph_arena); empty: at its lower bound.
  SubgraphArenaFn subgraph_arena;
  // Fold activations into the nodes whose kernels take them (graph::fuse), as the runtime does
  // unless told otherwise (SessionOptions::fuse).
  bool fuse = true;
  // With fuse: 16-bit activations between float32 kernels as float32 carriers
  // (graph::carry_float32), as the runtime does unless told otherwise
  // (SessionOptions::carry_float32).
  bool carry_float32 = true;
};

struct ModelProgram {
  std::shared_ptr<const graph::Model> model;  // shared: the graph refers into it
  graph::Graph graph;
  graph::ShapeInferenceReport inference;
  GraphProgramOptions options;
  graph::InputShapes shapes;  // as given; every other point of a sweep binds them too
  graph::InputValues values;  // the inputs' values the figures were computed for; else empty
  GraphProgram program;
  Timeline timeline;
  std::string order;                                 // "stored" or "memory"
  std::optional<uint64_t> stored_lower_bound_bytes;  // set for the memory order
  std::string rebatched;                             // graph::Rebatch::note(), or ""
  const graph::OpRegistry* registry = nullptr;       // what the graph was built against
  bool concrete_inputs = false;  // every input got extents before inference (no dim {} input)
  bool fuse = true;              // as asked (ModelProgramOptions::fuse)
  bool carry_float32 = true;     // as asked (ModelProgramOptions::carry_float32)
  graph::FuseReport fused;       // what graph::fuse folded
  graph::ChannelsLastReport channels_last;  // what graph::to_channels_last moved
  graph::CarryReport carried;               // what graph::carry_float32 made float32
  PrepareMemory prepare;                    // the heap buffers preparing it takes
};

// Throws footprint::UsageError for an order other than stored or memory, footprint::Error for
// a graph that cannot be analysed (naming the node).
ModelProgram build_model_program(std::shared_ptr<const graph::Model> model,
                                 const graph::OpRegistry& registry,
                                 const ModelProgramOptions& options);

// The timeline of the same model, order and inputs policy at other dims, its shapes inferred
// anew there.
Timeline timeline_at(const ModelProgram& m, const DimBindings& dims);

// The peak at each value of `dim` (the other dims as `m` binds them), each point inferred anew.
DimSweep sweep_model(const ModelProgram& m, const std::string& dim,
                     const std::vector<int64_t>& values);

}  // namespace footprint::analysis
