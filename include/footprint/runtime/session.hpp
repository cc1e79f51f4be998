#pragma once
// Runs a model inside its plan: every activation and every kernel's scratch at its planned offset
// in one 64-byte-aligned arena, weights used in place from the model, constant subgraphs
// evaluated once when the model is prepared, outputs returned as owned tensors.
//
//   graph::Model model = graph::load_model("net.onnx");
//   runtime::Session s(model, {.threads = 1});
//   std::vector<runtime::Tensor> out = s.run(inputs);   // prepares on first use
//   s.prepared().planned_arena_bytes == s.last_run().arena_bytes;
//
// The arena is obtained by the first run after preparing and kept until the next prepare or
// the session's end; release_arena() gives it back early.
//
// Preparing binds every named dim from the inputs' extents, infers concrete shapes, evaluates
// the constants, plans the arena (analysis::build_program -> simulate -> plan::plan_buffers) and
// builds the kernels' state. A run with other extents prepares again.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/carry_float32.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/plan/plan.hpp"
#include "footprint/runtime/tensor.hpp"

namespace footprint::runtime {

struct SessionOptions {
  int threads = 1;
  std::string planner = "auto";
  // Operator order: "stored" (topological, stored order first) or "memory".
  std::string order = "stored";
  // Values for named dims that no input's extents determine. Binding graph::kBatchDim ("batch")
  // on a model whose inputs have a fixed leading extent and name no such dim re-batches it
  // (graph::rebatch_if_bound): inputs() then declares [batch,...] and the inputs' leading
  // extent binds it.
  DimBindings dims;
  // Times every step of every run (RunStats::step_ns): two clock reads a step.
  bool profile = false;
  // Fold activations into the Conv/MatMul/Gemm before them (graph::fuse), as analysis does
  // unless told otherwise (analysis::ModelProgramOptions::fuse).
  bool fuse = true;
  // With fuse: 16-bit activations between float32 kernels as float32 carriers
  // (graph::carry_float32), as analysis does unless told otherwise.
  bool carry_float32 = true;
};

// What preparing predicted and measured.
struct PreparedStats {
  DimBindings dims;                  // every named dim, bound
  uint64_t planned_arena_bytes = 0;  // the plan's arena: activations + workspace
  uint64_t lower_bound_bytes = 0;    // the timeline's bound (64-byte buffers)
  uint64_t activations_peak_bytes = 0;
  uint64_t workspace_peak_bytes = 0;
  uint64_t outputs_bytes = 0;
  uint64_t weights_bytes = 0;         // initializers and evaluated constants
  uint64_t constant_bytes = 0;        // of which computed when preparing (and kept)
  uint64_t mapped_weights_bytes = 0;  // initializers read in place from the model's bytes
  // Weights kernels keep in their own layouts (blocked convolution weights, transposed LSTM/GRU/RNN
  // gates), on the heap; and the heap copies of weights released because no run reads them: only
  // packed copies do, or only the constants computed from them (a folded convolution's original
  // weights). Computed constants among them are no longer in constant_bytes.
  uint64_t packed_weights_bytes = 0;
  uint64_t released_constant_bytes = 0;
  // Pages of mapped initializers no run reads (packed or aligned copies do, or only constants
  // computed from them), given back to the OS (RSS).
  uint64_t released_mapped_bytes = 0;
  uint64_t total_peak_bytes = 0;  // the timeline's total (weights + inputs + arena + outputs)
  std::string planner;            // the algorithm the plan came from
  std::string rebatched;          // graph::Rebatch::note(), empty when run as stored
  size_t steps = 0;               // nodes run per inference
  size_t constant_nodes = 0;      // nodes evaluated once, when preparing
  // What graph::fuse folded into the node before it: "Conv 'c1' + Relu 'r1'"
  // (SessionOptions::fuse).
  std::vector<std::string> fused;
  // Patterns graph::fuse ran as one op: "Gelu '/mlp/Gelu' from 5 nodes: ..."
  std::vector<std::string> patterns;
  // graph::to_channels_last: nodes moved to channels-last rows, and the layout changes added.
  size_t channels_last_nodes = 0;
  size_t layout_changes = 0;
  // graph::carry_float32: the 16-bit activations stored as float32 carriers.
  graph::CarryReport carried;
  // The narrowest type the prepared graph stores activations in, which bounds how closely its
  // outputs can follow another runtime's: int8 where any is an 8- or 4-bit integer (a quantized
  // graph), float16 or bfloat16 where any is (or is carried as) one, else float32.
  DType computes_in = DType::float32;
  // Counting allocator (0 when the process does not link it): peak heap while preparing, above
  // what the heap held before.
  uint64_t prepare_peak_heap_bytes = 0;
  // Of that, the buffers preparing declares (weights copied for alignment, computed constants,
  // packed weights) at their peak together and what stays held: what analysis::predict_prepare
  // predicts (the main graph's).
  uint64_t prepare_buffers_peak_bytes = 0;
  uint64_t prepare_buffers_kept_bytes = 0;
  // Values of the model's graph whose extents depend on values (Dim::bounded): how many, the
  // bytes of the buffers they own at their bounds (planned so), and what decides them when
  // running (an op and, where it has several, which of its extents).
  size_t bounded_values = 0;
  uint64_t bounded_bytes = 0;
  std::vector<std::string> bounded_by;
  // Inputs whose values the plan was made for (a window's size, a Range's limit, a position):
  // extents that depend on them were unknown otherwise. The plan holds for these values; a run
  // given others prepares again, as for other extents.
  std::vector<std::string> bound_by_value;
};

// What the last run measured.
struct RunStats {
  uint64_t arena_bytes = 0;        // the arena the run used (obtained by the first run, kept)
  uint64_t heap_before_bytes = 0;  // counting allocator, at the start of run()
  // Its peak during run(), above heap_before_bytes: the arena, the outputs and oneDNN's own
  // buffers on the first run after preparing; the outputs and oneDNN's buffers after that.
  uint64_t peak_heap_bytes = 0;
  uint64_t output_bytes = 0;  // bytes of the returned outputs' elements
  // Of them, written into tensors the caller handed back (run(inputs, outputs)): not allocated
  // by this run, so not in peak_heap_bytes.
  uint64_t reused_output_bytes = 0;
  // Of PreparedStats::bounded_bytes, what this run's data made of those buffers.
  uint64_t bounded_used_bytes = 0;
  double latency_ms = 0;
  // The counting allocator's bytes in use (the whole process) after each step of the model's
  // graph; empty when the process does not link it. Sized when preparing, so sampling
  // allocates nothing.
  std::vector<uint64_t> step_heap_bytes;
  // With SessionOptions::profile, each step's wall time in nanoseconds (0 for a step that runs
  // nothing: a view); empty otherwise.
  std::vector<uint64_t> step_ns;
};

class GraphRunner;
}  // namespace footprint::runtime
namespace footprint::graph {
class Graph;
}  // namespace footprint::graph
namespace footprint::runtime {

class Session {
 public:
  // The model must outlive the session (weights stay views of it). Whatever format it was read
  // from, the session sees its graph (graph::Model::graph).
  explicit Session(const graph::Model& model, SessionOptions options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Inputs are matched by name (a tensor with an empty name takes the next unmatched input).
  // Throws footprint::Error naming the input, node or value at fault. Where an extent depends on
  // an input's values and is unknown without them, the plan is made for the values given
  // (PreparedStats::bound_by_value).
  void prepare(std::span<const Tensor> inputs);
  std::vector<Tensor> run(std::span<const Tensor> inputs);
  // The same into `outputs`: a tensor a previous run returned, handed back, is written in place
  // where this run makes one of its name, dtype and extents, so repeated runs allocate (and the
  // OS zero-fills) no fresh pages for them (a decode step's present keys and values: 25 MB a
  // step at GPT-2's width and 1024 past tokens); any other is replaced.
  void run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs);

  // The graph's inputs as declared: name, dtype and (possibly symbolic) shape.
  struct InputInfo {
    std::string name;
    DType dtype = DType::undefined;
    Shape shape;
    // What the model declares the input to be where it is not a tensor: "sequence", "map",
    // "optional" or "sparse tensor"; empty for a tensor. A sequence or an optional is given as
    // its tensors (graph::element_name: "s[0]", "s[1]", ...; an optional's under its own name,
    // or none); a run refuses the others.
    std::string not_a_tensor;
  };
  std::vector<InputInfo> inputs() const;
  // The graph's outputs as the model declares them. A run returns a sequence as its elements,
  // named graph::element_name(name, i), and an optional as its tensor, or none when empty.
  struct OutputInfo {
    std::string name;
    std::string not_a_tensor;  // as InputInfo's
  };
  std::vector<OutputInfo> outputs() const;

  void release_arena() { arena_ = AlignedBuffer(); }

  // The steps a run executes, named as analysis names them (RunStats::step_heap_bytes follows
  // this order). Empty before preparing.
  std::vector<std::string> step_names() const;
  // Their op types, in the same order.
  std::vector<std::string> step_ops() const;

  // Each value of the main graph as the last prepare gave it to the kernels: the extents of its
  // tensor and the bytes the runner's memory program counts for it. Empty before preparing.
  // A value whose extents depend on values (Dim::bounded) is prepared and planned at its bound;
  // `ran` holds what the last run made of it (its extents, for every other value).
  struct ValueExtents {
    std::string name;
    DType dtype = DType::undefined;
    std::vector<int64_t> extents;
    uint64_t bytes = 0;
    bool bounded = false;
    std::vector<int64_t> ran;
  };
  std::vector<ValueExtents> prepared_values() const;

  const PreparedStats& prepared() const { return prepared_; }
  const RunStats& last_run() const { return last_run_; }
  const SessionOptions& options() const { return options_; }

 private:
  // prepare(), the small integer and bool inputs' values given to inference when `bind_values`.
  void prepare_with(std::span<const Tensor> inputs, bool bind_values);

  const graph::Model* model_;
  SessionOptions options_;
  std::unique_ptr<graph::Graph> graph_;  // with the inputs' extents bound and shapes inferred
  std::unique_ptr<GraphRunner> runner_;
  AlignedBuffer arena_;
  std::vector<graph::TensorRef> input_refs_;  // kept so a run allocates only arena and outputs
  std::vector<graph::TensorRef> output_refs_;
  std::vector<std::vector<int64_t>> prepared_extents_;
  // Per input the plan was made for by value (PreparedStats::bound_by_value): its position among
  // the graph's inputs and its bytes then.
  std::vector<std::pair<size_t, std::vector<std::byte>>> prepared_values_;
  PreparedStats prepared_;
  RunStats last_run_;
};

}  // namespace footprint::runtime
