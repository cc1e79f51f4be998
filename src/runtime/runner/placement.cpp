#include "placement.hpp"

#include <algorithm>

#include "footprint/onnx/model.hpp"
#include "footprint/onnx/model_source.hpp"

namespace footprint::runtime::runner {

using analysis::Category;

namespace {

// What the graph, its program and its plan say of one value that owns its buffer.
struct Roots {
  Roots(const graph::Graph& graph, const analysis::GraphProgram& p, const analysis::Timeline& t,
        const std::vector<int64_t>& offsets)
      : g(graph),
        program(p),
        timeline(t),
        arena_offset(offsets),
        input_index(graph.values().size(), -1),
        output_index(graph.values().size(), -1),
        output_viewing(graph.values().size(), -1) {
    // Positions by value, once: a sequence of thousands of elements is thousands of inputs.
    for (size_t k = 0; k < g.inputs().size(); ++k) {
      input_index[static_cast<size_t>(g.inputs()[k])] = static_cast<int64_t>(k);
    }
    for (size_t k = g.outputs().size(); k-- > 0;) {  // the first output wins, as a search would
      const auto o = static_cast<size_t>(g.outputs()[k]);
      output_index[o] = static_cast<int64_t>(k);
      output_viewing[static_cast<size_t>(timeline.storage[o])] = static_cast<int64_t>(k);
    }
  }

  Place place(size_t v, Weights& weights) const;

  const graph::Graph& g;
  const analysis::GraphProgram& program;
  const analysis::Timeline& timeline;
  const std::vector<int64_t>& arena_offset;  // per value: its planned offset, or -1
  std::vector<int64_t> input_index;          // per value: its position among the inputs, or -1
  std::vector<int64_t> output_index;         // ... among the outputs
  std::vector<int64_t> output_viewing;  // per value: the first output whose storage it is, or -1
};

Place Roots::place(size_t v, Weights& weights) const {
  const auto id = static_cast<graph::ValueId>(v);
  const graph::Value& value = g.value(id);
  // A value not in the list is past its end, as std::find says.
  const auto position = [](int64_t index, size_t size) {
    return index >= 0 ? index : static_cast<int64_t>(size);
  };
  switch (value.kind) {
    case graph::ValueKind::input:
      return {Home::input, position(input_index[v], g.inputs().size())};
    case graph::ValueKind::outer:
      return {Home::outer, value.outer_value};
    case graph::ValueKind::initializer: {
      onnx::TensorBytes w =
          onnx::tensor_bytes(*value.initializer, onnx::element_alignment(value.dtype));
      // A copy (an exporter's raw_data at an odd offset, or typed fields) is all the kernels read:
      // the mapped original's pages go back to the OS as soon as it is made, so preparing never
      // holds a model's weights twice (PyTorch's exporter misaligns most of them).
      if (!w.is_view()) {
        weights.copied_bytes += w.size();
        if (g.model() != nullptr) {
          weights.released_mapped_bytes +=
              g.model()->source().release_pages(onnx::tensor_view(*value.initializer));
        }
      }
      weights.slots.push_back(std::move(w));
      return {Home::weight, static_cast<int64_t>(weights.slots.size() - 1)};
    }
    case graph::ValueKind::intermediate:
      break;
  }
  switch (program.program.tensors[v].category) {
    case Category::weights:
      return {Home::constant, id};  // its bytes are made when constants are evaluated
    case Category::activations: {
      if (arena_offset[v] >= 0) return {Home::arena, arena_offset[v]};
      // Viewed by a graph output, the buffer is that output (the timeline counts it so): the
      // producer writes straight into the output.
      if (output_viewing[v] >= 0) return {Home::output, output_viewing[v]};
      return {};
    }
    case Category::outputs:
      return {Home::output, position(output_index[v], g.outputs().size())};
    default:
      return {};
  }
}

}  // namespace

Placement::Placement(const graph::Graph& g, const analysis::GraphProgram& program,
                     const analysis::Timeline& timeline, const plan::Plan& plan) {
  places_.assign(g.values().size(), {});
  std::vector<int64_t> arena_offset(g.values().size(), -1);
  for (size_t i = 0; i < timeline.buffers.size(); ++i) {
    const analysis::BufferLifetime& b = timeline.buffers[i];
    if (b.category == Category::activations) arena_offset[b.tensor] = plan.offsets[i];
  }
  // Roots first (what owns a buffer), then every view or in-place alias takes its root's home.
  const Roots roots(g, program, timeline, arena_offset);
  for (size_t v = 0; v < g.values().size(); ++v) {
    if (timeline.storage[v] == static_cast<int>(v)) places_[v] = roots.place(v, weights_);
  }
  for (size_t v = 0; v < g.values().size(); ++v) {
    places_[v] = places_[static_cast<size_t>(timeline.storage[v])];
  }
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const graph::ValueId o = g.outputs()[k];
    const Place& p = places_[o];
    if (p.home != Home::output || p.index != static_cast<int64_t>(k)) {
      output_copies_.emplace_back(k, o);
    }
  }
}

void Placement::point(const HomeBytes& bytes, std::span<void*> pointers) const {
  for (size_t v = 0; v < places_.size(); ++v) {
    const Place& p = places_[v];
    const auto i = static_cast<size_t>(p.index);
    void* ptr = nullptr;
    switch (p.home) {
      case Home::input:
        ptr = i < bytes.inputs.size() ? bytes.inputs[i].data : nullptr;
        break;
      case Home::weight:
        ptr = i < bytes.weights.size() ? const_cast<std::byte*>(bytes.weights[i].bytes().data())
                                       : nullptr;
        break;
      case Home::constant:
        ptr = i < bytes.constants.size() ? const_cast<std::byte*>(bytes.constants[i]) : nullptr;
        break;
      case Home::arena:
        ptr = bytes.arena != nullptr ? bytes.arena + p.index : nullptr;
        break;
      case Home::output:
        ptr = i < bytes.outputs.size() ? bytes.outputs[i].data : nullptr;
        break;
      case Home::outer:
        ptr = i < bytes.outer.size() ? bytes.outer[i] : nullptr;
        break;
      case Home::none:
        break;
    }
    pointers[v] = ptr;
  }
}

}  // namespace footprint::runtime::runner
