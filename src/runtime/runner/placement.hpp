#pragma once
// Where each value of a graph lives during a run: its home, decided once from the plan.
//
// A buffer's owner (a root of the timeline's storage) gets a home: the caller's input or output
// tensor, an initializer's bytes (a weight slot), a constant computed while preparing, its
// planned arena offset, or the enclosing graph's value (a branch's outer value). A view or an
// in-place alias lives at its root's home. An initializer is read where it lies in the model,
// or, where its bytes are not aligned for its dtype, from an aligned copy made here. Apart from
// those copies the homes hold no bytes: `point` resolves them to addresses from the bytes one
// run (or preparing) has.
//
//   Placement placement(g, program, timeline, plan);
//   Weights weights = placement.take_weights();  // for their owner, PreparedConstants
//   placement.point({arena, inputs, outputs, weights, constants, outer}, pointers);
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/plan/plan.hpp"

namespace footprint::runtime::runner {

enum class Home : uint8_t { none, input, weight, constant, arena, output, outer };

struct Place {
  Home home = Home::none;
  // Input/output position, weight slot, constant's value id, arena offset, outer value id.
  int64_t index = 0;
};

// The initializers' bytes, one per weight slot (slots 0, 1, ... in value order).
struct Weights {
  std::vector<onnx::TensorBytes> slots;
  uint64_t copied_bytes = 0;  // the aligned copies' heap bytes
  // A copy is all the kernels read: the mapped original's pages went back to the OS.
  uint64_t released_mapped_bytes = 0;
};

// The bytes behind the homes. Preparing has no arena, inputs, outputs nor outer values (the
// enclosing graph is still being prepared): those homes resolve to null.
struct HomeBytes {
  std::byte* arena = nullptr;
  std::span<const graph::TensorRef> inputs;
  std::span<const graph::TensorRef> outputs;
  std::span<const onnx::TensorBytes> weights;   // per weight slot
  std::span<const std::byte* const> constants;  // per value id
  std::span<void* const> outer;                 // per value id of the enclosing graph
};

class Placement {
 public:
  Placement(const graph::Graph& g, const analysis::GraphProgram& program,
            const analysis::Timeline& timeline, const plan::Plan& plan);

  const Place& operator[](size_t v) const { return places_[v]; }
  size_t size() const { return places_.size(); }
  // The initializers' bytes, handed once to the part that owns and releases them.
  Weights take_weights() { return std::exchange(weights_, {}); }
  // Graph outputs whose bytes are not the output tensor itself (an input, a weight, a value
  // another output also is): (output position, value), copied after the run.
  const std::vector<std::pair<size_t, graph::ValueId>>& output_copies() const {
    return output_copies_;
  }
  // Each value's address in `pointers` (one per value).
  void point(const HomeBytes& bytes, std::span<void*> pointers) const;

 private:
  std::vector<Place> places_;
  Weights weights_;
  std::vector<std::pair<size_t, graph::ValueId>> output_copies_;
};

}  // namespace footprint::runtime::runner
