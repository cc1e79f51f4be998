#pragma once
// Each step of a graph prepared once: its context (tensors at their planned extents), its
// kernel's state (oneDNN primitives, packed weights), how it runs with data-dependent extents,
// and whether it has nothing to do (a view whose output already is its input).
//
// The steps are prepared interleaved with the constants' evaluation (analysis::PrepareOrder):
// each as soon as the constants it reads are computed. Preparing a step may make an input
// constant unread (its kernel keeps a packed copy); the constants release it as soon as its
// last reader is done (analysis::PrepareReaders), before the next weight is computed.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "bounded_extents.hpp"
#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/node_runner.hpp"
#include "prepared_constants.hpp"

namespace footprint::runtime::runner {

class PreparedSteps {
 public:
  // Evaluates the constants and prepares the steps of `program` (step_nodes) in `constants`'
  // order, the steps' contexts pointed through `pointers` (per value; left pointing at the
  // constants kept). The states' bytes are held in `constants`' heap tally.
  PreparedSteps(const graph::Graph& g, const analysis::GraphProgram& program,
                const analysis::Timeline& timeline, const BoundedExtents& extents,
                PreparedConstants& constants, graph::SubgraphRunner* subgraphs,
                std::vector<void*>& pointers);

  size_t size() const { return contexts_.size(); }
  graph::NodeContext& context(size_t s) const { return *contexts_[s]; }
  StepExtents extents_kind(size_t s) const { return kinds_[s]; }
  // A view whose output already is its input: nothing to run.
  bool skipped(size_t s) const { return skip_[s] != 0; }
  // Whether step s reads input i only through its kernel state's packed copy (so it may have
  // been released).
  bool replaced(size_t s, size_t i) const;
  // Heap bytes the kernels' states own (packed weights and the like).
  uint64_t packed_bytes() const { return packed_bytes_; }

 private:
  void prepare(size_t s, const graph::Graph& g, const analysis::Timeline& timeline,
               const BoundedExtents& extents, PreparedConstants& constants,
               graph::SubgraphRunner* subgraphs, std::span<void* const> pointers);

  const analysis::GraphProgram& program_;
  std::vector<std::unique_ptr<graph::NodeContext>> contexts_;
  std::vector<std::unique_ptr<graph::KernelState>> states_;
  std::vector<char> skip_;
  std::vector<StepExtents> kinds_;
  uint64_t packed_bytes_ = 0;
};

}  // namespace footprint::runtime::runner
