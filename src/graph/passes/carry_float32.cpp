#include "footprint/graph/carry_float32.hpp"

#include <algorithm>
#include <vector>

#include "footprint/graph/op_registry.hpp"

namespace footprint::graph {
namespace {

bool sixteen(DType t) {
  return t == DType::float16 || t == DType::bfloat16;
}

bool constant_value(const Value& v) {
  return v.constant || v.kind == ValueKind::initializer || v.known.has_value();
}

Float32Carriers mode(const Node& n) {
  return n.schema != nullptr ? n.schema->float32_carriers : Float32Carriers::none;
}

class Region {
 public:
  explicit Region(const Graph& g) : g_(g), in_(g.nodes().size(), false) {
    std::vector<char> read_by_subgraph(g.values().size(), 0);
    for (const Node& n : g.nodes()) {
      for (const ValueId v : n.implicit_inputs) {
        if (v != kNoValue) read_by_subgraph[static_cast<size_t>(v)] = 1;
      }
    }
    carriable_.resize(g.values().size(), false);
    for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
      const Value& val = g.value(v);
      carriable_[static_cast<size_t>(v)] =
          sixteen(val.dtype) && val.kind == ValueKind::intermediate && !constant_value(val) &&
          !val.is_graph_output && val.producer >= 0 && !val.consumers.empty() &&
          read_by_subgraph[static_cast<size_t>(v)] == 0;
    }
    for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) in_[id] = candidate(id);
    settle();
  }

  bool carried(ValueId v) const {
    if (v == kNoValue || !carriable_[static_cast<size_t>(v)]) return false;
    const Value& val = g_.value(v);
    return in_[val.producer] && std::all_of(val.consumers.begin(), val.consumers.end(),
                                            [&](NodeId c) { return in_[c]; });
  }

 private:
  // The 16-bit activations of n: its non-constant 16-bit inputs and its 16-bit outputs.
  template <class F>
  void for_activations(const Node& n, F&& f) const {
    for (const ValueId v : n.inputs) {
      if (v != kNoValue && sixteen(g_.value(v).dtype) && !constant_value(g_.value(v))) f(v);
    }
    for (const ValueId v : n.outputs) {
      if (v != kNoValue && sixteen(g_.value(v).dtype)) f(v);
    }
  }

  // A node whose row takes carriers, whose 16-bit tensors are of one type, with an activation of
  // it to carry (and, for a `whole` row, no 16-bit constant beside them).
  bool candidate(NodeId id) const {
    const Node& n = g_.node(id);
    const Float32Carriers m = mode(n);
    if (m == Float32Carriers::none || !n.subgraphs.empty() || !n.implicit_inputs.empty()) {
      return false;
    }
    DType type = DType::undefined;
    bool one_type = true;
    bool constant_16 = false;
    const auto see = [&](ValueId v) {
      if (v == kNoValue || !sixteen(g_.value(v).dtype)) return;
      if (type != DType::undefined && type != g_.value(v).dtype) one_type = false;
      type = g_.value(v).dtype;
      constant_16 = constant_16 || constant_value(g_.value(v));
    };
    for (const ValueId v : n.inputs) see(v);
    for (const ValueId v : n.outputs) {
      see(v);
      if (v != kNoValue && constant_value(g_.value(v))) return false;  // evaluated when preparing
    }
    bool any = false;
    for_activations(n, [&](ValueId) { any = true; });
    return one_type && any && !(m == Float32Carriers::whole && constant_16);
  }

  // Drops the nodes whose rows take all their activations carried or none, but would have some
  // of each, until none is left: each drop can only uncarry values, so this ends.
  void settle() {
    for (bool changed = true; changed;) {
      changed = false;
      for (NodeId id = 0; id < static_cast<NodeId>(g_.nodes().size()); ++id) {
        const Node& n = g_.node(id);
        if (!in_[id] || mode(n) == Float32Carriers::per_tensor) continue;
        bool some = false;
        bool all = true;
        for_activations(n, [&](ValueId v) {
          const bool c = carried(v);
          some = some || c;
          all = all && c;
        });
        if (!all) {
          in_[id] = false;
          changed = changed || some;
        }
      }
    }
  }

  const Graph& g_;
  std::vector<bool> in_;
  std::vector<bool> carriable_;
};

}  // namespace

CarryReport carry_float32(Graph& g) {
  CarryReport report;
  const Region region(g);
  std::vector<ValueId> carried;
  for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
    if (region.carried(v)) carried.push_back(v);
  }
  for (const ValueId v : carried) {
    Value& val = g.mutable_value(v);
    report.rounds_to = val.dtype;
    if (const auto n = val.shape.numel()) report.extra_bytes += static_cast<int64_t>(*n) * 2;
    const Node& producer = g.node(val.producer);
    uint32_t bits = 0;
    for (size_t i = 0; i < producer.outputs.size() && i < 32; ++i) {
      if (producer.outputs[i] == v) bits |= 1U << i;
    }
    g.set_rounding(val.producer, val.dtype, bits);
    for (const NodeId id : val.consumers) g.set_rounding(id, val.dtype, 0);
    val.dtype = DType::float32;
  }
  report.values = carried.size();
  return report;
}

}  // namespace footprint::graph
