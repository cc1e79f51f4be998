#include "footprint/graph/lower_sequences.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/graph/topo_order.hpp"

namespace footprint::graph {
namespace {

constexpr std::array<std::string_view, 11> kSequenceOps = {
    "SequenceConstruct", "SequenceEmpty",      "SequenceInsert",     "SequenceErase",
    "SequenceAt",        "SequenceLength",     "ConcatFromSequence", "SplitToSequence",
    "Optional",          "OptionalHasElement", "OptionalGetElement"};

// What a sequence or optional value holds once lowered.
struct Held {
  bool optional = false;        // an optional, else a sequence
  bool has_element = true;      // an optional's
  bool holds_sequence = false;  // an optional of a sequence: `elements` are the sequence's
  std::vector<ValueId> elements;
};

// Thrown by a trial run (Lowering::trial) that needs inferred shapes or values to go on.
struct NeedsInference {};

// One walk over a graph's nodes in topological order. A trial walk changes nothing and stops at
// the first length or position it cannot read yet; the real one rewrites the graph.
class Lowering {
 public:
  Lowering(Graph& g, bool trial) : g_(g), trial_(trial) {}

  SequenceReport run() {
    for (const HeldInput& in : g_.held_inputs()) {
      Held h;
      h.optional = in.optional;
      h.has_element = in.has_element;
      h.holds_sequence = in.holds_sequence;
      h.elements = in.elements;
      held_[in.value] = std::move(h);
    }
    const std::vector<NodeId> order = topo_order(g_);
    std::vector<std::optional<Node>> replacement(g_.nodes().size());
    std::vector<bool> dropped(g_.nodes().size(), false);
    for (const NodeId id : order) {
      const Node& n = g_.node(id);
      if (is_sequence_op(n) || (n.op_type == "Identity" && n.domain.empty() && reads_held(n))) {
        ++report_.nodes;
        std::optional<Node> made = lower(id);
        if (made) {
          replacement[id] = std::move(made);
        } else {
          dropped[id] = true;
        }
        continue;
      }
      for (const ValueId v : n.inputs) refuse_held(id, v, "reads");
      for (const ValueId v : n.implicit_inputs) refuse_held(id, v, "reads (in a subgraph)");
      if (!trial_) {
        for (const Subgraph& s : n.subgraphs) {
          const SequenceReport inner = lower_sequences(*s.graph);
          report_.nodes += inner.nodes;
          report_.values += inner.values;
        }
      }
    }
    report_.values = held_.size();
    if (trial_ || (report_.nodes == 0 && held_.empty())) return report_;
    std::vector<Node> returned = return_held_outputs();
    g_.clear_held_inputs();
    std::vector<Node> nodes = g_.take_nodes();
    std::vector<Node> rewritten;
    rewritten.reserve(nodes.size() + returned.size());
    for (const NodeId id : order) {
      if (dropped[id]) continue;
      rewritten.push_back(replacement[id] ? std::move(*replacement[id]) : std::move(nodes[id]));
    }
    for (Node& n : returned) rewritten.push_back(std::move(n));
    g_.replace_nodes(std::move(rewritten));
    return report_;
  }

 private:
  // A sequence the graph returns comes back as its elements, each an Identity of the element
  // named element_name(output, i); an optional as its tensor (the output itself) or nothing.
  std::vector<Node> return_held_outputs() {
    std::vector<Node> made_nodes;
    const std::vector<ValueId> outputs = g_.outputs();
    for (const ValueId out : outputs) {
      const auto it = held_.find(out);
      if (it == held_.end()) continue;
      const Held h = it->second;
      const std::string name = g_.value(out).name;
      if (g_.parent() != nullptr) {
        throw Error("graph " + in_quotes(g_.name()) + ": output " + in_quotes(name) + " is " +
                    (h.optional ? "an optional" : "a sequence") +
                    ": footprint lowers sequences and optionals to the tensors they hold, and "
                    "cannot pass one out of a subgraph yet");
      }
      std::vector<ValueId> returned;
      if (h.optional && !h.holds_sequence) {
        if (h.has_element) {
          Value& v = g_.mutable_value(out);
          v.declared_type = nullptr;
          v.dtype = DType::undefined;
          v.shape = Shape::unranked();
          made_nodes.push_back(returned_as(name, h.elements[0], out));
          returned.push_back(out);
        }
      } else {
        for (size_t i = 0; i < h.elements.size(); ++i) {
          const ValueId e = g_.add_intermediate(element_name(name, i));
          made_nodes.push_back(returned_as(element_name(name, i), h.elements[i], e));
          returned.push_back(e);
        }
      }
      g_.replace_output(out, returned);
    }
    return made_nodes;
  }

  Node returned_as(const std::string& name, ValueId element, ValueId out) const {
    return node_of(name, 0, "", "Identity", {element}, {out}, {});
  }

  bool reads_held(const Node& n) const {
    return std::any_of(n.inputs.begin(), n.inputs.end(),
                       [&](ValueId v) { return held_.contains(v); });
  }

  [[noreturn]] void fail(NodeId id, const std::string& what) const {
    throw Error("graph " + in_quotes(g_.name()) + ": node " + g_.node(id).label(id) + ": " + what);
  }

  void refuse_held(NodeId id, ValueId v, const char* how) const {
    if (v == kNoValue) return;
    const auto it = held_.find(v);
    if (it == held_.end()) return;
    const Node& n = g_.node(id);
    const std::string what = it->second.optional ? "an optional" : "a sequence";
    const std::string why =
        n.op_type == "SequenceMap" ? "SequenceMap is not supported yet"
        : !n.subgraphs.empty()
            ? "footprint lowers sequences and optionals to the tensors they hold, and "
              "cannot pass one into or out of a subgraph yet"
            : "only the sequence and optional ops read one";
    fail(id, std::string(how) + " " + in_quotes(g_.value(v).name) + ", " + what + ": " + why);
  }

  // The held value input i of node id reads: a sequence or optional made before, or (where
  // `tensor_ok`) a plain tensor, which the optional ops take as an optional holding it.
  Held input(NodeId id, size_t i, bool tensor_ok) const {
    const Node& n = g_.node(id);
    if (i >= n.inputs.size() || n.inputs[i] == kNoValue) fail(id, "has no sequence input");
    const ValueId v = n.inputs[i];
    if (const auto it = held_.find(v); it != held_.end()) return it->second;
    const Value& value = g_.value(v);
    const bool plain_tensor = value.declared_type == nullptr;  // declared a tensor, or undeclared
    if ((value.kind == ValueKind::input || value.kind == ValueKind::outer) &&
        !(tensor_ok && plain_tensor)) {
      fail(id, "reads " + in_quotes(value.name) + ", " +
                   (value.kind == ValueKind::input ? "an input of graph " + in_quotes(g_.name())
                                                   : std::string("a value of an outer graph")) +
                   declared_as(value) + ": footprint sizes it by the tensors it is given (" +
                   (non_tensor_kind(value) == "optional"
                        ? "a tensor named " + in_quotes(value.name) + ", or none"
                        : "tensors named " + in_quotes(element_name(value.name, 0)) + ", " +
                              in_quotes(element_name(value.name, 1)) + ", ...") +
                   "), and none were given: run it with them, or analyze it with --data-dir or "
                   "--shape");
    }
    if (!tensor_ok) fail(id, "reads " + in_quotes(value.name) + ", which is not a sequence");
    Held h;
    h.optional = true;
    h.elements = {v};
    return h;
  }

  static std::string declared_as(const Value& v) {
    const std::string_view kind = non_tensor_kind(v);
    if (kind.empty()) return "";
    return std::string(" declared a") + (kind[0] == 'o' ? "n " : " ") + std::string(kind);
  }

  // The integer in input i (a position, a split size), from a constant or an inferred value.
  std::optional<int64_t> scalar_input(NodeId id, size_t i) const {
    const Node& n = g_.node(id);
    if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return std::nullopt;
    const auto values = int_values(n.inputs[i]);
    if (!values) {
      if (trial_) throw NeedsInference{};
      fail(id, "its " + std::string(i == 1 ? "input 1" : "input 2") + " (" +
                   in_quotes(g_.value(n.inputs[i]).name) +
                   ") is known only when running; footprint needs sequence positions before it "
                   "runs");
    }
    if (values->size() != 1) fail(id, "a position must be one integer");
    return (*values)[0];
  }

  // The value of v before running: inferred, or a constant's.
  std::optional<KnownValue> known(ValueId v) const {
    const Value& value = g_.value(v);
    if (value.known) return value.known;
    if (const onnx::TensorProto* t = g_.constant_tensor(v)) return known_value_of(*t);
    return std::nullopt;
  }

  std::optional<std::vector<int64_t>> int_values(ValueId v) const {
    const auto k = known(v);
    return k ? k->int_values() : std::nullopt;
  }

  // A position in [-size, size) (or [-size, size] where inserting) made non-negative.
  size_t position(NodeId id, int64_t pos, size_t size, bool inserting) const {
    const auto n = static_cast<int64_t>(size);
    const int64_t last = inserting ? n : n - 1;
    if (pos < -n || pos > last) {
      fail(id, "position " + std::to_string(pos) + " is outside a sequence of " +
                   std::to_string(size) + (size == 1 ? " element" : " elements"));
    }
    return static_cast<size_t>(pos < 0 ? pos + n : pos);
  }

  void hold(NodeId id, size_t output, Held h) {
    const Node& n = g_.node(id);
    if (output < n.outputs.size() && n.outputs[output] != kNoValue) {
      held_[n.outputs[output]] = std::move(h);
    }
  }

  // A node over the lowered values: `op` of `domain`, inputs and outputs given, the original's
  // name, place and attributes (or `attributes`).
  Node made(NodeId id, std::string_view domain, std::string_view op, std::vector<ValueId> inputs,
            std::vector<ValueId> outputs,
            std::optional<onnx::Array<onnx::AttributeProto>> attributes = std::nullopt) const {
    const Node& n = g_.node(id);
    return node_of(n.name, n.source_offset, domain, op, std::move(inputs), std::move(outputs),
                   attributes ? *attributes : n.attributes);
  }

  Node node_of(const std::string& name, uint64_t offset, std::string_view domain,
               std::string_view op, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
               onnx::Array<onnx::AttributeProto> attributes) const {
    Node out;
    out.name = name;
    out.op_type = std::string(op);
    out.domain = std::string(domain);
    out.inputs = std::move(inputs);
    out.outputs = std::move(outputs);
    out.attributes = attributes;
    out.source_offset = offset;
    const OpRegistry& registry = g_.registry() != nullptr ? *g_.registry() : OpRegistry::builtin();
    out.schema = registry.find(out.domain, out.op_type);
    return out;
  }

  // The element as the node's output. A value read out of a sequence was declared with the
  // sequence's one element type, which need not fit this element (the last part of an uneven
  // split; PyTorch declares the parts of an unbind with the axis they lose): inference gives its
  // shape from the element itself.
  Node identity(NodeId id, ValueId element) {
    if (!trial_) g_.mutable_value(g_.node(id).outputs[0]).shape = Shape::unranked();
    return made(id, "", "Identity", {element}, {g_.node(id).outputs[0]},
                onnx::Array<onnx::AttributeProto>{});
  }

  // A node with no inputs whose one integer attribute `name` is its known output.
  Node constant(NodeId id, std::string_view op, std::string_view name, int64_t value) {
    if (trial_) return {};
    onnx::AttributeProto a;
    a.name = name;
    a.type = onnx::AttributeProto::Type::int_;
    a.i = value;
    return made(id, "footprint", op, {}, {g_.node(id).outputs[0]}, g_.own_attributes({a}));
  }

  std::optional<Node> lower(NodeId id) {
    const Node& n = g_.node(id);
    const std::string& op = n.op_type;
    if (op == "SequenceEmpty") {
      hold(id, 0, Held{});
      return std::nullopt;
    }
    if (op == "SequenceConstruct") {
      Held h;
      for (const ValueId v : n.inputs) {
        refuse_held(id, v, "holds");
        h.elements.push_back(v);
      }
      hold(id, 0, std::move(h));
      return std::nullopt;
    }
    if (op == "Identity") {
      hold(id, 0, input(id, 0, false));
      return std::nullopt;
    }
    if (op == "SequenceInsert") {
      Held h = input(id, 0, false);
      if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) fail(id, "has no tensor to insert");
      refuse_held(id, n.inputs[1], "inserts");
      const auto pos = scalar_input(id, 2);
      const size_t at = pos ? position(id, *pos, h.elements.size(), true) : h.elements.size();
      h.elements.insert(h.elements.begin() + static_cast<std::ptrdiff_t>(at), n.inputs[1]);
      hold(id, 0, std::move(h));
      return std::nullopt;
    }
    if (op == "SequenceErase") {
      Held h = input(id, 0, false);
      if (h.elements.empty()) fail(id, "erases from an empty sequence");
      const auto pos = scalar_input(id, 1);
      const size_t at = position(id, pos.value_or(-1), h.elements.size(), false);
      h.elements.erase(h.elements.begin() + static_cast<std::ptrdiff_t>(at));
      hold(id, 0, std::move(h));
      return std::nullopt;
    }
    if (op == "SequenceAt") {
      const Held h = input(id, 0, false);
      const auto pos = scalar_input(id, 1);
      if (!pos) fail(id, "has no position");
      return identity(id, h.elements[position(id, *pos, h.elements.size(), false)]);
    }
    if (op == "SequenceLength") {
      const Held h = input(id, 0, false);
      return constant(id, "SequenceLength", "length", static_cast<int64_t>(h.elements.size()));
    }
    if (op == "ConcatFromSequence") {
      const Held h = input(id, 0, false);
      if (h.elements.empty()) fail(id, "concatenates an empty sequence");
      return made(id, "footprint", op, h.elements, n.outputs);
    }
    if (op == "SplitToSequence") return split_to_sequence(id);
    if (op == "Optional") {
      Held h;
      h.optional = true;
      if (n.inputs.empty() || n.inputs[0] == kNoValue) {
        h.has_element = false;
      } else if (const auto it = held_.find(n.inputs[0]); it != held_.end()) {
        if (it->second.optional) fail(id, "wraps an optional in an optional");
        h.holds_sequence = true;
        h.elements = it->second.elements;
      } else {
        h.elements = {n.inputs[0]};
      }
      hold(id, 0, std::move(h));
      return std::nullopt;
    }
    if (op == "OptionalHasElement") {
      const bool has =
          !n.inputs.empty() && n.inputs[0] != kNoValue && input(id, 0, true).has_element;
      return constant(id, "OptionalHasElement", "has_element", has ? 1 : 0);
    }
    // OptionalGetElement: the optional's tensor, or its sequence (a sequence read as an optional
    // is itself).
    const Held h = input(id, 0, true);
    if (!h.optional) {
      hold(id, 0, h);
      return std::nullopt;
    }
    if (!h.has_element) fail(id, "reads an optional that holds nothing");
    if (h.holds_sequence) {
      Held seq;
      seq.elements = h.elements;
      hold(id, 0, std::move(seq));
      return std::nullopt;
    }
    return identity(id, h.elements[0]);
  }

  // SplitToSequence: as many parts as `split` has entries (1-D), ceil(extent / split) (a
  // scalar), or the extent along the axis (no split).
  std::optional<Node> split_to_sequence(NodeId id) {
    const Node& n = g_.node(id);
    const ValueId x = n.inputs.empty() ? kNoValue : n.inputs[0];
    if (x == kNoValue) fail(id, "has no input to split");
    refuse_held(id, x, "splits");
    const bool has_split = n.inputs.size() > 1 && n.inputs[1] != kNoValue;
    std::optional<std::vector<int64_t>> split;
    bool scalar = false;
    if (has_split) {
      const auto k = known(n.inputs[1]);
      if (k) split = k->int_values();
      if (split) {
        scalar = k->dims.empty();
      } else if (const Shape& s = g_.value(n.inputs[1]).shape;
                 s.ranked && s.rank() == 1 && s.dims[0].value()) {
        // Parts whose sizes the data gives: as many as the 1-D split has entries.
        split = std::vector<int64_t>(static_cast<size_t>(*s.dims[0].value()), 0);
      } else {
        if (trial_) throw NeedsInference{};
        fail(id, "its split (" + in_quotes(g_.value(n.inputs[1]).name) +
                     ") is a scalar or of a length known only when running; footprint needs the "
                     "sequence's length before it runs");
      }
    }
    size_t parts = 0;
    if (has_split && !scalar) {
      parts = split->size();
    } else {
      const Shape& shape = g_.value(x).shape;
      const int64_t axis_attr = [&] {
        const onnx::AttributeProto* a = n.attribute("axis");
        return a != nullptr ? a->i : 0;
      }();
      std::optional<int64_t> extent;
      if (shape.ranked) {
        const auto rank = static_cast<int64_t>(shape.rank());
        if (axis_attr < -rank || axis_attr >= rank) {
          fail(id, "axis " + std::to_string(axis_attr) + " is outside a tensor of rank " +
                       std::to_string(rank));
        }
        extent =
            shape.dims[static_cast<size_t>(axis_attr < 0 ? axis_attr + rank : axis_attr)].value();
      }
      if (!extent) {
        if (trial_) throw NeedsInference{};
        fail(id, "splits " + in_quotes(g_.value(x).name) + " along an extent " +
                     (shape.ranked ? "not bound (give its dims with --dim or --shape)"
                                   : "of unknown rank") +
                     "; footprint needs the sequence's length before it runs");
      }
      if (!has_split) {
        parts = static_cast<size_t>(*extent);
      } else {
        const int64_t chunk = (*split)[0];
        if (chunk <= 0) fail(id, "splits into chunks of " + std::to_string(chunk));
        parts = static_cast<size_t>((*extent + chunk - 1) / chunk);
      }
    }
    Held h;
    std::vector<ValueId> outputs;
    const std::string base =
        n.outputs.empty() || n.outputs[0] == kNoValue ? n.name : g_.value(n.outputs[0]).name;
    for (size_t i = 0; i < parts; ++i) {
      const ValueId part =
          trial_ ? kNoValue : g_.add_intermediate(base + "[" + std::to_string(i) + "]");
      outputs.push_back(part);
      h.elements.push_back(part);
    }
    hold(id, 0, std::move(h));
    std::vector<ValueId> inputs = {x};
    if (has_split) inputs.push_back(n.inputs[1]);
    return made(id, "footprint", "SplitToSequence", std::move(inputs), std::move(outputs));
  }

  Graph& g_;
  bool trial_;
  std::unordered_map<ValueId, Held> held_;
  SequenceReport report_;
};

bool has_sequence_ops(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (is_sequence_op(n)) return true;
    for (const Subgraph& s : n.subgraphs) {
      if (has_sequence_ops(*s.graph)) return true;
    }
  }
  return false;
}

}  // namespace

std::string_view non_tensor_kind(const Value& v) {
  if (v.declared_type == nullptr) return {};
  switch (v.declared_type->kind) {
    case onnx::TypeProto::Kind::sequence:
      return "sequence";
    case onnx::TypeProto::Kind::map:
      return "map";
    case onnx::TypeProto::Kind::optional:
      return "optional";
    case onnx::TypeProto::Kind::sparse_tensor:
      return "sparse tensor";
    default:
      return {};
  }
}

std::string element_name(std::string_view sequence, size_t i) {
  return std::string(sequence) + "[" + std::to_string(i) + "]";
}

void hold_sequence_inputs(Graph& g, const std::function<bool(const std::string&)>& given,
                          bool absent_optional_is_empty) {
  const std::vector<ValueId> inputs = g.inputs();
  for (const ValueId id : inputs) {
    const Value& v = g.value(id);
    if (v.declared_type == nullptr) continue;
    const auto kind = v.declared_type->kind;
    if (kind != onnx::TypeProto::Kind::sequence && kind != onnx::TypeProto::Kind::optional) {
      continue;
    }
    std::vector<std::string> elements;
    if (kind == onnx::TypeProto::Kind::optional && given(v.name)) {
      elements.push_back(v.name);
    } else {
      for (size_t i = 0; given(element_name(v.name, i)); ++i) {
        elements.push_back(element_name(v.name, i));
      }
    }
    if (!elements.empty() ||
        (absent_optional_is_empty && kind == onnx::TypeProto::Kind::optional)) {
      g.hold_input(id, elements);
    }
  }
}

bool is_sequence_op(const Node& n) {
  return n.domain.empty() &&
         std::find(kSequenceOps.begin(), kSequenceOps.end(), n.op_type) != kSequenceOps.end();
}

SequenceReport lower_sequences(Graph& g) {
  if (!has_sequence_ops(g) && g.held_inputs().empty()) return {};
  try {
    Lowering(g, true).run();
  } catch (const NeedsInference&) {
    // A length or position comes from computed values: infer them over the graph as it is (the
    // sequence ops have no rows yet, so what follows them stays unknown until inference runs
    // again on the lowered graph).
    ShapeInferenceOptions options;
    options.errors_as_warnings = true;
    infer_shapes(g, options);
  }
  return Lowering(g, false).run();
}

}  // namespace footprint::graph
