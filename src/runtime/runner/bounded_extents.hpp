#pragma once
// The extents of a graph's values: as prepared and planned, and as each run makes them.
//
// A value whose extents depend on data (an axis that is a Dim::bounded: NonZero's count, the
// boxes NonMaxSuppression keeps) is planned, prepared and allocated at its bound, as analysis
// counts it. During a run the op that decides such an extent reports it (`reports_extents`), it
// is bound under its origin's name beside the named dims, and every later extent follows from
// those bindings. The top graph holds the bindings; an If branch's extents read and fill the
// same ones, so what a branch decides is known after it.
//
//   BoundedExtents extents(g, dims, /*parent=*/nullptr);
//   extents.start_run();
//   const StepExtents kind = extents.classify(ctx);  // once, when preparing the step
//   extents.enter(ctx, kind, workspace, pointers);    // before running it
//   extents.leave(ctx, kind);                          // after: binds what it reported
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "footprint/core/shape.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/node_runner.hpp"

namespace footprint::runtime::runner {

// How a step runs when a tensor it touches has data-dependent extents.
enum class StepExtents : uint8_t {
  fixed,           // it touches none
  at_run_extents,  // its tensors get this run's extents (a bounded output its bound)
  at_bound,        // a kernel prepared for the bound runs on it; only rows vary (rows_at_bound)
};

class BoundedExtents {
 public:
  // `g` has concrete shapes under `dims`, but for its data-dependent axes. `parent`, for a
  // subgraph, is the enclosing graph's extents, whose bindings this one shares.
  BoundedExtents(const graph::Graph& g, const DimBindings& dims, const BoundedExtents* parent);
  // The top one's bindings are pointed at by every graph below it.
  BoundedExtents(const BoundedExtents&) = delete;
  BoundedExtents& operator=(const BoundedExtents&) = delete;

  // Whether value v has extents before running (else a step touching it is refused).
  bool known(graph::ValueId v) const { return known_[v]; }
  // As prepared and planned (empty for a scalar); for a bounded value, its bound.
  const std::vector<int64_t>& planned(graph::ValueId v) const { return planned_[v]; }
  // In the last run: what the data made of a bounded value, else planned(v).
  const std::vector<int64_t>& run(graph::ValueId v) const {
    return bounded_[v] ? run_[v] : planned_[v];
  }
  // Whether value v's extents depend on values (its tensor is planned at its bound).
  bool bounded(graph::ValueId v) const { return bounded_[v] != 0; }
  // The data-dependent extents this graph's nodes decide (Dim::bounded's origins).
  const std::vector<std::string>& origins() const { return origin_names_; }
  // Over the bounded values that own a buffer (storage[v] == v): their bytes at their bounds,
  // and as the last run made them.
  std::pair<uint64_t, uint64_t> bounded_bytes(std::span<const int> storage) const;

  // Forgets what the last run of this graph decided.
  void start_run();
  // How the step of `ctx` runs; throws naming the node when its kernel, prepared for fixed
  // extents, cannot run on the ones it touches.
  StepExtents classify(const graph::NodeContext& ctx) const;
  // Before the step: its tensors get this run's extents, or (at its bound) the rows of input 0
  // past this run's are zeroed in `pointers` (per value). Throws when an input has no extents
  // yet or the planned `workspace_bytes` is too small for them.
  void enter(graph::NodeContext& ctx, StepExtents kind, uint64_t workspace_bytes,
             std::span<void* const> pointers);
  // After it: binds the extents the step reported and checks its outputs against inference.
  void leave(graph::NodeContext& ctx, StepExtents kind);

 private:
  void bind(const DimBindings& dims);
  void collect_origins(const DimBindings& dims);
  bool varies_only_in_rows(graph::ValueId v) const;
  // This run's extents of value v from the bindings so far; false where a dim is not reported
  // yet (`out` then holds the bound there).
  bool evaluate_run(graph::ValueId v, std::vector<int64_t>& out) const;

  const graph::Graph& g_;
  std::vector<std::vector<int64_t>> planned_;
  std::vector<bool> known_;
  std::vector<char> bounded_;
  std::vector<std::vector<int64_t>> run_;  // for bounded values
  // Held by the top graph: the named dims and, per data-dependent extent, its value in this run
  // (-1 until reported).
  DimBindings top_bindings_;
  DimBindings* bindings_ = nullptr;
  std::vector<int64_t*> origins_;  // this graph's slots in *bindings_
  std::vector<std::string> origin_names_;
};

}  // namespace footprint::runtime::runner
