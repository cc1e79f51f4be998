#pragma once
// The passes that make a loaded graph the one that is analysed, planned and run, in one ordered
// list: analysis (analysis::build_model_program) and the runtime (runtime::Session::prepare) both
// call prepare_graph, so the graph a prediction is made for is the graph the run executes.
//
//   graph::Graph g = graph::Graph::from_onnx(model, runtime::op_registry());
//   const graph::PrepareReport r = graph::prepare_graph(g, {{"batch", 8}});
//   r.rebatched->note();  // "re-batched: leading dim of 1 input made 'batch' (stored as 1)"
//   r.fused.fused;         // "Conv 'c1' + Relu 'r1'", ...
//
// The order (kPasses in src/graph/prepare_graph.cpp; prepare_passes() names it): re-batch when
// `batch` is bound (graph::rebatch_if_bound), bind the inputs' extents, lower sequences and
// optionals to the tensors they hold (graph::lower_sequences), infer shapes, then the
// rewrites options.fuse turns on: fold per-channel affine maps into the weights before them, run
// exporters' patterns as one op, fold activations into their hosts as epilogues,
// squeeze-and-excitation blocks, runs of elementwise ops, the channels-last layout (which infers
// shapes again), and last the float32 carriers of 16-bit activations (options.carry_float32).
//
// Inputs get their extents in one of two ways, the only difference between the two callers:
// analysis binds their declared dims under `dims` and options.shapes (graph::bind_input_extents:
// unbound names take 1 and are listed in `defaulted`); a run binds the tensors it was handed
// (options.bind, an InputBinder: Session checks each against its declaration, binds the named
// dims it fixes and gives the input its extents).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/shape.hpp"
#include "footprint/graph/bind_inputs.hpp"
#include "footprint/graph/carry_float32.hpp"
#include "footprint/graph/channels_last.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/lower_sequences.hpp"
#include "footprint/graph/rebatch.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::graph {

// The bind step of a caller that holds the inputs themselves (a run: runtime::Session).
class InputBinder {
 public:
  virtual ~InputBinder() = default;
  // Called on the re-batched graph before inference: gives each of g's inputs its extents and
  // sets `bound` to `dims` and the named dims the inputs fix.
  virtual void bind(Graph& g, const DimBindings& dims, DimBindings& bound) = 0;
};

// Inputs' values, by name, given to inference (graph::KnownValue): what an extent that depends on
// an input's values is computed from (analysis with --data-dir, as runtime::Session does).
using InputValues = std::map<std::string, KnownValue, std::less<>>;

struct PrepareOptions {
  InputShapes shapes = {};  // --shape: whole inputs' extents, when `bind` is not set
  // With `shapes`: inputs whose values inference is given (kept on the input by infer_shapes).
  const InputValues* values = nullptr;
  // Unset: the inputs' extents come from their declared dims (bind_input_extents).
  InputBinder* bind = nullptr;
  bool fuse = true;  // the rewrites after inference (fusion and layout); false: as stored
  // With fuse: 16-bit activations between kernels that compute in float32 stored as float32
  // carriers (graph::carry_float32); false: every activation in the dtype the model gives it.
  bool carry_float32 = true;
  // The last pass to run (a name prepare_passes() lists); empty: every one. What a model asks of
  // its user (Session::inputs: the re-batched inputs, their dims still named) is the graph as
  // the first passes leave it.
  std::string_view through = {};
};

struct PrepareReport {
  std::optional<Rebatch> rebatched;    // unset when the graph keeps its batch
  DimBindings dims;                    // `dims` and the named dims a binder's inputs fix
  bool concrete = false;               // every input got extents before inference (no dim {} input)
  std::vector<std::string> defaulted;  // named dims nothing bound, taken as 1
  SequenceReport sequences;            // sequence and optional values lowered to their tensors
  ShapeInferenceReport inference;
  FuseReport fused;
  ChannelsLastReport channels_last;
  CarryReport carried;
};

// Runs the passes on g's main graph with the named dims `dims` (--dim; binding kBatchDim
// re-batches a model stored at a fixed batch). Throws footprint::Error (a model that cannot be
// re-batched, an input its dims leave negative) or UsageError (a --shape that does not fit),
// naming the input or node at fault.
PrepareReport prepare_graph(Graph& g, const DimBindings& dims, const PrepareOptions& options = {});

// The passes' names in the order prepare_graph runs them.
std::vector<std::string_view> prepare_passes();

}  // namespace footprint::graph
