#pragma once
// One graph (the model's, or an If branch) prepared to run inside its plan. The session owns the
// top one; each node with subgraphs owns a runner per subgraph, whose arena is that node's
// planned scratch in the enclosing arena.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/prepare_memory.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/plan/plan.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/tensor.hpp"

namespace footprint::runtime {

class GraphRunner final : public graph::SubgraphRunner {
 public:
  // `g` has concrete shapes under `dims` (shape inference ran with the inputs' extents bound).
  GraphRunner(const graph::Graph& g, const DimBindings& dims, const SessionOptions& options,
              const GraphRunner* parent);
  GraphRunner(const GraphRunner&) = delete;
  GraphRunner& operator=(const GraphRunner&) = delete;
  ~GraphRunner();

  const graph::Graph& graph() const { return g_; }
  uint64_t arena_bytes() const { return static_cast<uint64_t>(plan_.arena_bytes); }
  const analysis::GraphProgram& program() const { return program_; }
  const analysis::Timeline& timeline() const { return timeline_; }
  const plan::Plan& plan() const { return plan_; }
  uint64_t constant_bytes() const { return constant_bytes_; }
  // Heap bytes of weights released because the kernels that read them keep packed copies
  // (computed constants, initializers copied for alignment), and the bytes of those copies (and
  // any other state the kernels own).
  uint64_t released_constant_bytes() const { return released_constant_bytes_; }
  // Pages of mapped initializers given back to the OS for the same reason.
  uint64_t released_mapped_bytes() const { return released_mapped_bytes_; }
  uint64_t packed_bytes() const { return packed_bytes_; }
  const analysis::HeapTally& prepare_heap() const { return prepare_heap_; }
  // Initializers read in place (not copied for alignment).
  uint64_t mapped_weight_bytes() const;
  size_t step_count() const { return steps_.size(); }
  // Extents of a value of this graph as prepared and planned (empty for a scalar); for one whose
  // extents depend on values (Dim::bounded), its bound.
  const std::vector<int64_t>& extents(graph::ValueId v) const { return dims_[v]; }
  // Its extents in the last run: what the data made of a bounded one, else extents(v).
  const std::vector<int64_t>& run_extents(graph::ValueId v) const {
    return dynamic_[v] ? run_dims_[v] : dims_[v];
  }
  // Whether the extents of value v depend on values (its tensor is planned at its bound).
  bool bounded(graph::ValueId v) const { return dynamic_[v] != 0; }
  // The bytes of the buffers such values own, at their bounds and as the last run made them.
  std::pair<uint64_t, uint64_t> bounded_bytes() const;
  // What decides those extents (Dim::bounded's origins), for this graph's nodes.
  const std::vector<std::string>& bound_origins() const { return own_origin_names_; }

  // Runs every step with `arena` (at least arena_bytes(), 64-byte aligned) as the arena;
  // `inputs[i]` holds graph input i (formal inputs for a subgraph), `outputs[i]` graph output i,
  // both allocated by the caller with this graph's extents.
  // `step_heap`, when not empty, receives the heap bytes in use after each step; `step_ns`, when
  // not empty, each step's wall time.
  void run(std::span<std::byte> arena, std::span<const graph::TensorRef> inputs,
           std::span<const graph::TensorRef> outputs, int threads,
           std::span<uint64_t> step_heap = {}, std::span<uint64_t> step_ns = {});

  // Called by a step's context for its node's subgraph.
  void run_subgraph(graph::NodeId node, std::string_view attribute,
                    std::span<const graph::TensorRef> inputs, std::span<graph::TensorRef> outputs,
                    std::span<std::byte> scratch, int threads) override;

 private:
  // Where a value's bytes are during a run.
  enum class Home : uint8_t { none, input, weight, constant, arena, output, outer };
  struct Placement {
    Home home = Home::none;
    // Input/output position, weight slot, constant's value id, arena offset, outer value id.
    int64_t index = 0;
  };
  struct Step {
    graph::NodeId node = -1;
    int64_t workspace_offset = 0;
    uint64_t workspace_bytes = 0;
  };

  void bind_extents();
  // The data-dependent extents this graph's nodes report, given a binding (unreported) in the
  // top runner's run_bindings_.
  void own_origins();
  // Per step: whether it touches data-dependent extents, and how it runs with them.
  // Before and after a step touching data-dependent extents: its tensors get this run's extents
  // (a bounded output its bound), then what it reported binds the extents its op decides.
  enum class Dynamic : uint8_t { none, at_run_extents, at_bound };
  Dynamic dynamic_kind(const graph::NodeContext& ctx) const;
  bool varies_only_in_rows(graph::ValueId v) const;
  void enter_dynamic_step(size_t s);
  void leave_dynamic_step(size_t s);
  // This run's extents of value v from the bindings so far; false where a dim is not reported
  // yet (`out` then holds the bound there).
  bool evaluate_run_extents(graph::ValueId v, std::vector<int64_t>& out) const;
  void make_children();
  void build_plan();
  // The runner of a subgraph at any depth below this graph (analysis asks for a nested branch's
  // arena while analysing the branch around it).
  const GraphRunner& child_for(const graph::Graph& sub) const;
  const GraphRunner* find_runner(const graph::Graph& sub) const;
  void place_values();
  Placement place_root(size_t v, const std::vector<int64_t>& arena_offset);
  void evaluate_constants();
  void evaluate_constant(graph::NodeId id);
  // Whether an input of the constant node `n` is computed when running.
  bool computed_from_run(const graph::Node& n) const;
  // Heap bytes for value `v`; an allocation that fails or is refused names `what`.
  AlignedBuffer allocate(graph::ValueId v, const std::string& what) const;
  const std::byte* constant_in_model(const graph::Node& n) const;
  void prepare_kernels();
  // Per value root: reads by steps not yet prepared, and whether some reader needs the tensor.
  struct Readers {
    std::vector<int> left;
    std::vector<char> kept;
  };
  Readers count_readers() const;
  void release_replaced(size_t step, Readers& readers);
  // Frees what root `r` holds on the heap, or gives an initializer's mapped pages back; true when
  // it held heap bytes.
  bool release_root(size_t r);
  std::unique_ptr<graph::NodeContext> make_context(graph::NodeId id);
  void point_values(std::byte* arena, std::span<const graph::TensorRef> inputs,
                    std::span<const graph::TensorRef> outputs);
  void point_context(graph::NodeContext& ctx) const;
  void run_step(size_t s, std::span<std::byte> arena, int threads);
  void check_pointers(size_t step, const graph::NodeContext& ctx) const;
  // Whether step s reads input i only through its kernel state's packed copy.
  bool replaced(size_t s, size_t i) const;
  int64_t opset_of(const graph::Node& n) const;
  [[noreturn]] void fail(const std::string& what) const;

  const graph::Graph& g_;
  DimBindings dims_bindings_;
  SessionOptions options_;
  const GraphRunner* parent_;
  std::vector<std::vector<int64_t>> dims_;
  std::vector<bool> dims_known_;
  // Data-dependent extents. Per value: whether they depend on values, and (for those) the
  // extents of the current run. The top runner holds the bindings every runner below it reads:
  // the named dims and, per data-dependent extent, its value in this run (-1 until reported).
  std::vector<char> dynamic_;
  std::vector<std::vector<int64_t>> run_dims_;
  DimBindings run_bindings_;
  DimBindings* bindings_ = nullptr;
  std::vector<int64_t*> own_origins_;  // reset when this graph starts a run
  std::vector<std::string> own_origin_names_;
  std::vector<Dynamic> dynamic_steps_;  // per step
  analysis::GraphProgram program_;
  analysis::Timeline timeline_;
  plan::Plan plan_;
  std::vector<Placement> placement_;
  std::vector<onnx::TensorBytes> weights_;
  // Per value id, for constant roots: their bytes (owned, or in place in the model).
  std::vector<AlignedBuffer> constants_;
  std::vector<const std::byte*> constant_data_;
  uint64_t constant_bytes_ = 0;
  uint64_t released_constant_bytes_ = 0;
  uint64_t released_mapped_bytes_ = 0;
  uint64_t packed_bytes_ = 0;
  // The buffers preparing allocates and releases (weight copies, constants, packed states), as
  // analysis::predict_prepare replays them.
  analysis::HeapTally prepare_heap_;
  std::vector<Step> steps_;
  std::vector<std::unique_ptr<graph::NodeContext>> contexts_;  // per step
  std::vector<std::unique_ptr<graph::KernelState>> states_;    // per step
  std::vector<char> skip_;  // per step: a view whose output already is its input
  // Per node, one runner per subgraph (same order as Node::subgraphs).
  std::vector<std::vector<std::unique_ptr<GraphRunner>>> children_;
  std::vector<std::pair<size_t, graph::ValueId>> output_copies_;  // output slot <- value
  std::vector<void*> pointers_;                                   // per value, during a run
};

}  // namespace footprint::runtime
