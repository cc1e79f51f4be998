#include "placement.hpp"

#include <algorithm>

namespace footprint::runtime::runner {

using analysis::Category;

Placement::Placement(const graph::Graph& g, const analysis::GraphProgram& program,
                     const analysis::Timeline& timeline, const plan::Plan& plan)
    : g_(g), program_(program), timeline_(timeline) {
  places_.assign(g_.values().size(), {});
  std::vector<int64_t> arena_offset(g_.values().size(), -1);
  for (size_t i = 0; i < timeline_.buffers.size(); ++i) {
    const analysis::BufferLifetime& b = timeline_.buffers[i];
    if (b.category == Category::activations) arena_offset[b.tensor] = plan.offsets[i];
  }
  // Roots first (what owns a buffer), then every view or in-place alias takes its root's home.
  for (size_t v = 0; v < g_.values().size(); ++v) {
    if (timeline_.storage[v] == static_cast<int>(v)) places_[v] = place_root(v, arena_offset);
  }
  for (size_t v = 0; v < g_.values().size(); ++v) {
    places_[v] = places_[static_cast<size_t>(timeline_.storage[v])];
  }
  for (size_t k = 0; k < g_.outputs().size(); ++k) {
    const graph::ValueId o = g_.outputs()[k];
    const Place& p = places_[o];
    if (p.home != Home::output || p.index != static_cast<int64_t>(k)) {
      output_copies_.emplace_back(k, o);
    }
  }
}

Place Placement::place_root(size_t v, const std::vector<int64_t>& arena_offset) {
  const auto id = static_cast<graph::ValueId>(v);
  const graph::Value& value = g_.value(id);
  auto position = [id](const std::vector<graph::ValueId>& list) {
    return static_cast<int64_t>(std::find(list.begin(), list.end(), id) - list.begin());
  };
  switch (value.kind) {
    case graph::ValueKind::input:
      return {Home::input, position(g_.inputs())};
    case graph::ValueKind::outer:
      return {Home::outer, value.outer_value};
    case graph::ValueKind::initializer:
      return {Home::weight, static_cast<int64_t>(weight_slots_++)};
    case graph::ValueKind::intermediate:
      break;
  }
  switch (program_.program.tensors[v].category) {
    case Category::weights:
      return {Home::constant, id};  // its bytes are made when constants are evaluated
    case Category::activations: {
      if (arena_offset[v] >= 0) return {Home::arena, arena_offset[v]};
      // Viewed by a graph output, the buffer is that output (the timeline counts it so): the
      // producer writes straight into the output.
      const auto& outs = g_.outputs();
      for (size_t k = 0; k < outs.size(); ++k) {
        if (timeline_.storage[outs[k]] == id) return {Home::output, static_cast<int64_t>(k)};
      }
      return {};
    }
    case Category::outputs:
      return {Home::output, position(g_.outputs())};
    default:
      return {};
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
