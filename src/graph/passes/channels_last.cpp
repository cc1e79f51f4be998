#include "footprint/graph/channels_last.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "footprint/graph/node_attributes.hpp"
#include "footprint/graph/op_registry.hpp"

namespace footprint::graph {
namespace {

constexpr std::string_view kDomain = "footprint";

// A tensor of rank 4, in a dtype `layout` changes, whose extents past the batch are not decided
// by data: a kernel prepared for fixed extents runs a data-dependent batch at its bound
// (OpSchema::rows_at_bound), and nothing else, so such a tensor stays where the plain kernels
// refuse it by name.
bool layout_rank4(const Value& v, DTypeSet layout) {
  return layout.contains(v.dtype) && v.shape.ranked && v.shape.rank() == 4 &&
         std::none_of(v.shape.dims.begin() + 1, v.shape.dims.end(),
                      [](const Dim& d) { return d.is_data_dependent(); });
}

// The dtypes a value can change layout in: what both layout-change rows' kernels run (the
// registry says; none where it has no kernels, and then nothing moves).
DTypeSet layout_dtypes(const Graph& g) {
  if (g.registry() == nullptr) return {};
  const OpSchema* to = g.registry()->find(kDomain, "ToChannelsLast");
  const OpSchema* from = g.registry()->find(kDomain, "FromChannelsLast");
  if (to == nullptr || from == nullptr) return {};
  return to->kernel_dtypes & from->kernel_dtypes;
}

// Broadcasts the same in either layout: every extent a known 1.
bool broadcast_scalar(const Value& v) {
  return v.shape.ranked && v.shape.rank() <= 4 &&
         std::all_of(v.shape.dims.begin(), v.shape.dims.end(),
                     [](const Dim& d) { return d.value() && *d.value() == 1; });
}

// A per-channel operand written for NCHW without its batch axis, [C, 1, 1] (a caffe2 export's
// affine after BatchNormalization): flattened to [1, C] it broadcasts over NHWC's last axis the
// same way. `out` is the elementwise node's output.
bool per_channel(const Value& v, const Value& out, DTypeSet layout) {
  if (v.dtype != out.dtype || !v.shape.ranked || v.shape.rank() != 3 ||
      !layout_rank4(out, layout)) {
    return false;
  }
  const auto c = v.shape.dims[0].value();
  return c && c == out.shape.dims[1].value() && v.shape.dims[1].value() == 1 &&
         v.shape.dims[2].value() == 1;
}

const OpSchema* channels_last_row(const Graph& g, const Node& n) {
  if (n.schema == nullptr || n.schema->channels_last.empty() || g.registry() == nullptr) {
    return nullptr;
  }
  const OpSchema* row = g.registry()->find(kDomain, n.schema->channels_last);
  return row != nullptr && row->kernel != nullptr ? row : nullptr;
}

// Which nodes move, in the order they run: a node's inputs are decided before it.
class Plan {
 public:
  explicit Plan(const Graph& g)
      : g_(g), layout_(layout_dtypes(g)), moves_(g.nodes().size(), false) {
    for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) moves_[id] = decide(id);
  }

  bool moves(NodeId id) const { return id >= 0 && moves_[id]; }
  // Whether input `i` of a moving node is read channels-last (a convolution's weights are not).
  bool layout_input(NodeId id, size_t i) const {
    const Node& n = g_.node(id);
    if (n.inputs[i] == kNoValue) return false;
    if (n.schema != nullptr && n.schema->elementwise) return rank4(g_.value(n.inputs[i]));
    if (n.schema != nullptr && n.schema->channels_last_rank4_inputs) {
      const Shape& s = g_.value(n.inputs[i]).shape;
      return s.ranked && s.rank() == 4;
    }
    return n.schema != nullptr && static_cast<int64_t>(i) < n.schema->channels_last_inputs;
  }
  bool channels_last(ValueId v) const { return v != kNoValue && moves(g_.value(v).producer); }
  // Whether input `i` of a moving node is a per-channel operand to flatten.
  bool per_channel_input(NodeId id, size_t i) const {
    const Node& n = g_.node(id);
    return n.inputs[i] != kNoValue && n.schema != nullptr && n.schema->elementwise &&
           per_channel(g_.value(n.inputs[i]), g_.value(n.outputs[0]), layout_);
  }

 private:
  bool decide(NodeId id) const {
    const Node& n = g_.node(id);
    if (!n.subgraphs.empty() || n.outputs.size() != 1 || n.inputs.empty() ||
        n.inputs[0] == kNoValue || !rank4(g_.value(n.outputs[0]))) {
      return false;
    }
    // The row the node would run as must run its dtype (OpSchema::kernel_dtypes): the
    // channels-last row, or for an elementwise op its own.
    const DType dtype = g_.value(n.outputs[0]).dtype;
    if (const OpSchema* row = channels_last_row(g_, n)) {
      if (!row->kernel_dtypes.contains(dtype)) return false;
      if (n.schema->channels_last_runs != nullptr && !n.schema->channels_last_runs(n)) return false;
      for (size_t i = 0; i < n.inputs.size() && i < 32; ++i) {
        const bool needs = ((n.schema->channels_last_constant_inputs >> i) & 1U) != 0;
        if (needs && n.inputs[i] != kNoValue && !g_.value(n.inputs[i]).constant) return false;
      }
      bool any = false;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (!layout_input(id, i)) continue;
        if (!rank4(g_.value(n.inputs[i]))) return false;
        any = any || channels_last(n.inputs[i]);
      }
      return any || n.schema->channels_last_alone;
    }
    if (n.schema == nullptr || !n.schema->elementwise ||
        !n.schema->kernel_dtypes.contains(kernel_dtype(n)) ||
        (n.schema->channels_last_runs != nullptr && !n.schema->channels_last_runs(n))) {
      return false;
    }
    bool any = false;
    for (const ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const Value& v = g_.value(in);
      if (rank4(v)) {
        any = any || channels_last(in);
      } else if (!broadcast_scalar(v) && !per_channel(v, g_.value(n.outputs[0]), layout_)) {
        return false;
      }
    }
    return any;
  }

  bool rank4(const Value& v) const { return layout_rank4(v, layout_); }

  // The dtype of the value the node's kernel_dtypes speak of (OpSchema::kernel_dtype_of): a
  // DequantizeLinear's input, a QuantizeLinear's output.
  DType kernel_dtype(const Node& n) const {
    const int of = n.schema->kernel_dtype_of;
    if (of < 0 || static_cast<size_t>(of) >= n.inputs.size() || n.inputs[of] == kNoValue) {
      return g_.value(n.outputs[0]).dtype;
    }
    return g_.value(n.inputs[of]).dtype;
  }

  const Graph& g_;
  DTypeSet layout_;  // layout_dtypes(g_)
  std::vector<bool> moves_;
};

Node layout_change(const Graph& g, std::string_view op, ValueId from, ValueId to, uint64_t offset) {
  Node n;
  n.name = g.value(to).name;
  n.op_type = std::string(op);
  n.domain = std::string(kDomain);
  n.inputs = {from};
  n.outputs = {to};
  n.schema = g.registry()->find(kDomain, op);
  n.source_offset = offset;
  return n;
}

// Flatten(v, axis 0): [C, 1, 1] as [1, C].
Node flattened(Graph& g, ValueId from, ValueId to, uint64_t offset) {
  Node n;
  n.name = g.value(to).name;
  n.op_type = "Flatten";
  n.inputs = {from};
  n.outputs = {to};
  n.attributes = g.own_attributes({int_attribute("axis", 0)});
  n.schema = g.registry()->find("", "Flatten");
  n.source_offset = offset;
  return n;
}

// What a node that stays plain computes from a channels-last copy of its input as it is, or
// nullptr: Shape its extents (as NhwcShape, in NCHW's order), Size its count, Transpose(perm 0,
// 2, 3, 1) the plain [N, H, W, C] tensor that copy already is (as an Identity view: ConvNeXt's
// and Swin's permutes). An exporter's dynamic reshapes and chunks take a Shape of most
// activations; changing each one's layout back only to read its extents would cost a pass.
const OpSchema* reads_channels_last_copy(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.inputs.size() != 1 || n.outputs.size() != 1) return nullptr;
  const OpRegistry& r = *g.registry();
  const OpSchema* row = nullptr;
  if (n.op_type == "Size") {
    row = n.schema;
  } else if (n.op_type == "Shape") {
    row = r.find(kDomain, "NhwcShape");
  } else if (n.op_type == "Transpose" && attr_ints(n, "perm") == std::vector<int64_t>{0, 2, 3, 1}) {
    row = r.find("", "Identity");
  }
  return row != nullptr && row->kernel != nullptr ? row : nullptr;
}

// Whether `v` (a moving node's output) is read plain anywhere: by a node that stays (but one that
// reads only extents), at an input a moving node reads plain, or as a graph output.
bool read_plain(const Graph& g, const Plan& plan, ValueId v) {
  const Value& value = g.value(v);
  if (value.is_graph_output) return true;
  for (const NodeId c : value.consumers) {
    if (!plan.moves(c)) {
      if (reads_channels_last_copy(g, g.node(c)) != nullptr) continue;
      return true;
    }
    const Node& n = g.node(c);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == v && !plan.layout_input(c, i)) return true;
    }
  }
  return false;
}

}  // namespace

ChannelsLastReport to_channels_last(Graph& g, const ShapeInferenceOptions& options) {
  ChannelsLastReport report;
  const Plan plan(g);
  const auto count = static_cast<NodeId>(g.nodes().size());
  // Decided on the graph as it is, before its nodes move out.
  std::vector<std::vector<bool>> layout_inputs(count);
  std::vector<std::vector<bool>> per_channel_inputs(count);
  std::vector<bool> output_read_plain(count, false);
  for (NodeId id = 0; id < count; ++id) {
    if (!plan.moves(id)) continue;
    ++report.nodes;
    for (size_t i = 0; i < g.node(id).inputs.size(); ++i) {
      layout_inputs[id].push_back(g.node(id).inputs[i] != kNoValue && plan.layout_input(id, i));
      per_channel_inputs[id].push_back(plan.per_channel_input(id, i));
    }
    output_read_plain[id] = read_plain(g, plan, g.node(id).outputs[0]);
  }
  if (report.nodes == 0) return report;

  std::unordered_map<ValueId, ValueId> nhwc;  // a value -> its channels-last copy
  std::unordered_map<ValueId, ValueId> rows;  // a per-channel operand -> it as [1, C]
  std::vector<Node> nodes;
  nodes.reserve(static_cast<size_t>(count) * 2);
  std::vector<Node> old = g.take_nodes();
  for (NodeId id = 0; id < count; ++id) {
    Node n = std::move(old[id]);
    if (!plan.moves(id)) {
      const OpSchema* row = reads_channels_last_copy(g, n);
      if (row != nullptr && plan.channels_last(n.inputs[0])) {
        n.inputs[0] = nhwc.at(n.inputs[0]);
        n.op_type = std::string(row->op_type);
        n.domain = std::string(row->domain);
        n.schema = row;  // the attributes stay: Shape's start and end are NhwcShape's
      }
      nodes.push_back(std::move(n));
      continue;
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (per_channel_inputs[id][i]) {
        const ValueId in = n.inputs[i];
        auto it = rows.find(in);
        if (it == rows.end()) {
          const ValueId to = g.add_intermediate(g.value(in).name + "/per_channel");
          nodes.push_back(flattened(g, in, to, n.source_offset));
          it = rows.emplace(in, to).first;
        }
        n.inputs[i] = it->second;
        continue;
      }
      if (!layout_inputs[id][i]) continue;
      const ValueId in = n.inputs[i];
      auto it = nhwc.find(in);
      if (it == nhwc.end()) {
        const ValueId to = g.add_intermediate(g.value(in).name + "/channels_last");
        nodes.push_back(layout_change(g, "ToChannelsLast", in, to, n.source_offset));
        ++report.layout_changes;
        it = nhwc.emplace(in, to).first;
      }
      n.inputs[i] = it->second;
    }
    if (const OpSchema* row = channels_last_row(g, n)) {
      n.op_type = std::string(row->op_type);
      n.domain = std::string(kDomain);
      n.schema = row;
    }
    const ValueId out = n.outputs[0];
    const ValueId moved = g.add_intermediate(g.value(out).name + "/channels_last");
    n.outputs[0] = moved;
    nhwc.emplace(out, moved);
    const uint64_t offset = n.source_offset;
    nodes.push_back(std::move(n));
    if (output_read_plain[id]) {
      nodes.push_back(layout_change(g, "FromChannelsLast", moved, out, offset));
      ++report.layout_changes;
    }
  }
  g.replace_nodes(std::move(nodes));
  // Shapes, known values and constants are derived again from the new nodes.
  for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
    Value& value = g.mutable_value(v);
    if (value.kind == ValueKind::intermediate) {
      value.known.reset();
      value.constant = false;
    }
  }
  infer_shapes(g, options);
  return report;
}

}  // namespace footprint::graph
