#pragma once
// One graph (the model's, or an If branch) prepared to run inside its plan. The session owns the
// top one; each node with subgraphs owns a runner per subgraph, whose arena is that node's
// planned scratch in the enclosing arena.
//
// The runner plans the graph and composes the parts under runner/, built in this order, each
// reading only the ones before it: the values' extents (runner::BoundedExtents, with those that
// depend on data), where each value lives (runner::Placement), the constants' bytes and their
// release (runner::PreparedConstants), and the prepared steps (runner::PreparedSteps). What is
// left here: the subgraphs' runners, planning, and the run loop.
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
#include "runner/bounded_extents.hpp"
#include "runner/placement.hpp"
#include "runner/prepared_constants.hpp"
#include "runner/prepared_steps.hpp"

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
  uint64_t arena_bytes() const { return static_cast<uint64_t>(planned_.plan.arena_bytes); }
  const analysis::GraphProgram& program() const { return planned_.program; }
  const analysis::Timeline& timeline() const { return planned_.timeline; }
  const plan::Plan& plan() const { return planned_.plan; }
  uint64_t constant_bytes() const { return constants_.constant_bytes(); }
  // Heap bytes of weights released because the kernels that read them keep packed copies
  // (computed constants, initializers copied for alignment), and the bytes of those copies (and
  // any other state the kernels own).
  uint64_t released_constant_bytes() const { return constants_.released_bytes(); }
  // Pages of mapped initializers given back to the OS for the same reason.
  uint64_t released_mapped_bytes() const { return constants_.released_mapped_bytes(); }
  uint64_t packed_bytes() const { return prepared_.packed_bytes(); }
  const analysis::HeapTally& prepare_heap() const { return constants_.heap(); }
  // Initializers read in place (not copied for alignment).
  uint64_t mapped_weight_bytes() const { return constants_.mapped_weight_bytes(); }
  size_t step_count() const { return planned_.steps.size(); }
  // Extents of a value of this graph as prepared and planned (empty for a scalar); for one whose
  // extents depend on values (Dim::bounded), its bound.
  const std::vector<int64_t>& extents(graph::ValueId v) const { return extents_.planned(v); }
  // Its extents in the last run: what the data made of a bounded one, else extents(v).
  const std::vector<int64_t>& run_extents(graph::ValueId v) const { return extents_.run(v); }
  // Whether the extents of value v depend on values (its tensor is planned at its bound).
  bool bounded(graph::ValueId v) const { return extents_.bounded(v); }
  // The bytes of the buffers such values own, at their bounds and as the last run made them.
  std::pair<uint64_t, uint64_t> bounded_bytes() const {
    return extents_.bounded_bytes(planned_.timeline.storage);
  }
  // What decides those extents (Dim::bounded's origins), for this graph's nodes.
  const std::vector<std::string>& bound_origins() const { return extents_.origins(); }

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
  // A step: its node and its planned scratch in the arena.
  struct Step {
    graph::NodeId node = -1;
    int64_t workspace_offset = 0;
    uint64_t workspace_bytes = 0;
  };
  // The graph planned: its program, each step, the timeline and the arena offsets.
  struct Planned {
    analysis::GraphProgram program;
    std::vector<Step> steps;
    analysis::Timeline timeline;
    plan::Plan plan;
  };
  using Children = std::vector<std::vector<std::unique_ptr<GraphRunner>>>;

  Children make_children() const;
  Planned plan_graph() const;
  // The runner of a subgraph at any depth below this graph (analysis asks for a nested branch's
  // arena while analysing the branch around it).
  const GraphRunner& child_for(const graph::Graph& sub) const;
  const GraphRunner* find_runner(const graph::Graph& sub) const;
  void point_values(std::byte* arena, std::span<const graph::TensorRef> inputs,
                    std::span<const graph::TensorRef> outputs);
  void run_step(size_t s, std::span<std::byte> arena, int threads);
  void check_pointers(size_t step, const graph::NodeContext& ctx) const;
  [[noreturn]] void fail(const std::string& what) const;

  // In the order they are built: each part reads only the ones above it.
  const graph::Graph& g_;
  DimBindings dims_;
  SessionOptions options_;
  const GraphRunner* parent_;
  runner::BoundedExtents extents_;
  // Per node, one runner per subgraph (same order as Node::subgraphs), prepared before this
  // graph is planned: a branch's arena is its node's scratch.
  Children children_;
  Planned planned_;
  runner::Placement placement_;
  std::vector<void*> pointers_;  // per value: while preparing, then during a run
  runner::PreparedConstants constants_;
  runner::PreparedSteps prepared_;
};

}  // namespace footprint::runtime
