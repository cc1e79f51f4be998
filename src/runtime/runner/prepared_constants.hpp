#pragma once
// The bytes of a graph's constants, from preparing to the last run: initializers (as Placement
// found them: in place in the model, or aligned copies), and the constant nodes (weights
// computed from weights, shape arithmetic, Constant) evaluated once on the heap.
//
// It also gives back what no one reads any more, as analysis::predict_prepare counts it
// (analysis::PrepareReaders): a constant read only while preparing (prepare_only) after its last
// constant reader, and one every step reads only through its kernel's packed copy after the
// last such step is prepared. A copy or computed constant is freed; an initializer read in place
// from a mapped model gives its pages back to the OS. `heap()` tallies the buffers preparing holds:
// these, and the kernels' states (`hold`).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bounded_extents.hpp"
#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/prepare_memory.hpp"
#include "footprint/analysis/prepare_order.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/runtime/tensor.hpp"
#include "placement.hpp"

namespace footprint::runtime::runner {

class PreparedConstants {
 public:
  // Takes the initializers' bytes; the constant nodes (those of program.order that are not
  // steps) are evaluated one by one (`evaluate`), in analysis::PrepareOrder's order, each on a
  // context pointed through `pointers` (the owner's, one per value, sized here). `subgraphs` and
  // `threads` are the contexts'.
  PreparedConstants(const graph::Graph& g, const analysis::GraphProgram& program,
                    const analysis::Timeline& timeline, const BoundedExtents& extents,
                    const Placement& placement, Weights weights, graph::SubgraphRunner* subgraphs,
                    int threads, std::vector<void*>& pointers);
  PreparedConstants(const PreparedConstants&) = delete;
  PreparedConstants& operator=(const PreparedConstants&) = delete;

  // The order the owner prepares in: constant nodes and steps interleaved.
  const analysis::PrepareOrder& order() const { return order_; }
  // Evaluates constant node k of order().constants, then releases each input no one reads any
  // more.
  void evaluate(size_t k, std::vector<void*>& pointers);
  // Evaluates every constant node not evaluated yet (a graph prepared without its steps) and
  // points `pointers` at the constants.
  void evaluate_all(std::vector<void*>& pointers);
  // Points `pointers` at the constants (null where released), as the steps are prepared.
  void point(std::span<void*> pointers) const { point_preparing(pointers); }

  // Per weight slot and per value id: the bytes Placement::point resolves homes to.
  std::span<const onnx::TensorBytes> weights() const { return weights_; }
  std::span<const std::byte* const> constants() const { return constant_data_; }

  // Heap bytes of the computed constants and initializer copies still held.
  uint64_t constant_bytes() const { return constant_bytes_; }
  // Heap bytes released because no one reads them any more.
  uint64_t released_bytes() const { return released_bytes_; }
  // Pages of mapped initializers given back to the OS.
  uint64_t released_mapped_bytes() const { return released_mapped_bytes_; }
  // Initializers and Constant nodes read in place from the model.
  uint64_t mapped_weight_bytes() const;
  // The buffers preparing allocates and releases, as analysis::predict_prepare replays them.
  const analysis::HeapTally& heap() const { return heap_; }
  // A kernel state of `bytes` that preparing keeps.
  void hold(uint64_t bytes) { heap_.add(bytes); }
  // Reads not done yet and whether something needs the tensor itself, per root.
  const analysis::PrepareReaders& readers() const { return readers_; }

  // After step node `n` is prepared: a constant input all of whose readers are done and read it
  // only through their packed copies (`replaced(i)` for input i) is released, so packing
  // replaces the weights rather than doubling them, even while preparing.
  void release_replaced(const graph::Node& n, const std::function<bool(size_t)>& replaced);

 private:
  // Every value's address while preparing: only the constants have bytes.
  void point_preparing(std::span<void*> pointers) const;
  void evaluate_constant(graph::NodeId id, std::span<void*> pointers);
  // Whether an input of the constant node `n` is computed when running.
  bool computed_from_run(const graph::Node& n) const;
  // Heap bytes for value `v`; an allocation that fails or is refused names `what`.
  AlignedBuffer allocate(graph::ValueId v, const std::string& what) const;
  const std::byte* constant_in_model(const graph::Node& n) const;
  // Frees what root `r` holds on the heap, or gives an initializer's mapped pages back.
  void release_root(size_t r);

  const graph::Graph& g_;
  const analysis::GraphProgram& program_;
  const analysis::Timeline& timeline_;
  const BoundedExtents& extents_;
  const Placement& placement_;
  graph::SubgraphRunner* subgraphs_;
  int threads_;
  analysis::PrepareOrder order_;
  analysis::PrepareReaders readers_;
  std::vector<char> evaluated_;             // per constant node of order_
  std::vector<onnx::TensorBytes> weights_;  // per weight slot
  // Per value id, for constant roots: their bytes (owned, or in place in the model).
  std::vector<AlignedBuffer> constants_;
  std::vector<const std::byte*> constant_data_;
  uint64_t constant_bytes_ = 0;
  uint64_t released_bytes_ = 0;
  uint64_t released_mapped_bytes_ = 0;
  analysis::HeapTally heap_;
};

}  // namespace footprint::runtime::runner
