#include "footprint/graph/rebatch.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::graph {
namespace {

// Two values of the batch: a leading dim equal to each of them is the batch, not a coincidence.
constexpr int64_t kProbeA = 2;
constexpr int64_t kProbeB = 3;

// The input of `n` that holds its output's extents (Reshape's shape), or -1.
int shape_input(const Node& n) {
  return n.schema != nullptr ? n.schema->output_shape_input : -1;
}

std::vector<std::byte> int64_bytes(const std::vector<int64_t>& values) {
  std::vector<std::byte> raw(values.size() * sizeof(int64_t));
  if (!raw.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

// A Reshape shape constant that may be rewritten: only Reshapes read it (as their shape), so
// rewriting it changes nothing else.
struct ShapeConstant {
  ValueId value = kNoValue;
  std::vector<int64_t> entries;
  std::vector<NodeId> reshapes;
};

class Rebatcher {
 public:
  Rebatcher(Graph& g, std::string_view dim) : g_(g) {
    result_.dim = std::string(dim);
    batch_ = Dim::named(dim);
  }

  Rebatch run() {
    result_.from = common_leading_extent();
    make_inputs_symbolic();
    drop_declared_batch();
    declared_ = save();
    patch_reshapes();
    check_outputs();
    restore();
    return result_;
  }

 private:
  struct Saved {
    DType dtype;
    Shape shape;
  };

  std::string where() const {
    return g_.model() != nullptr ? g_.model()->source().name() + ": " : std::string();
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where() + "cannot re-batch: " + what);
  }

  static const Dim* leading(const Value& v) {
    return v.shape.ranked && v.shape.rank() >= 1 ? &v.shape.dims[0] : nullptr;
  }

  bool follows(const Dim& d) const {
    return d.evaluate({{result_.dim, kProbeA}}) == kProbeA &&
           d.evaluate({{result_.dim, kProbeB}}) == kProbeB;
  }

  bool leading_follows(ValueId id) const {
    const Dim* d = leading(g_.value(id));
    return d != nullptr && follows(*d);
  }

  bool mentions_batch(ValueId id) const {
    std::vector<std::string> symbols;
    for (const Dim& d : g_.value(id).shape.dims) d.collect_symbols(symbols);
    return std::find(symbols.begin(), symbols.end(), result_.dim) != symbols.end();
  }

  int64_t common_leading_extent() const {
    std::optional<int64_t> common;
    ValueId first = kNoValue;
    for (ValueId id : g_.inputs()) {
      const Value& v = g_.value(id);
      if (v.shape.ranked && v.shape.rank() == 0) continue;
      const std::optional<int64_t> e = leading(v) != nullptr ? leading(v)->value() : std::nullopt;
      if (!e) {
        fail("input " + in_quotes(v.name) + " (" + v.shape.to_string() +
             ") has no fixed leading dim");
      }
      if (common && *common != *e) {
        fail("inputs " + in_quotes(g_.value(first).name) + " and " + in_quotes(v.name) +
             " have leading dims " + std::to_string(*common) + " and " + std::to_string(*e) +
             "; re-batching needs one batch for all inputs");
      }
      common = e;
      if (first == kNoValue) first = id;
    }
    if (!common) fail("no input has a leading dim");
    return *common;
  }

  void make_inputs_symbolic() {
    for (ValueId id : g_.inputs()) {
      Value& v = g_.mutable_value(id);
      if (v.shape.rank() == 0) continue;
      v.shape.dims[0] = batch_;
      ++result_.inputs;
    }
  }

  // Declared shapes win over inferred ones where they are concrete; a declared old batch would
  // pin the new one.
  void drop_declared_batch() {
    for (ValueId id = 0; id < static_cast<ValueId>(g_.values().size()); ++id) {
      Value& v = g_.mutable_value(id);
      if (v.kind != ValueKind::intermediate || leading(v) == nullptr) continue;
      if (leading(v)->value() == result_.from) v.shape.dims[0] = Dim::unknown();
    }
  }

  std::vector<Saved> save() const {
    std::vector<Saved> out;
    out.reserve(g_.values().size());
    for (const Value& v : g_.values()) out.push_back({v.dtype, v.shape});
    return out;
  }

  // Inference takes the shapes it finds for declared ones: each round starts from the model's.
  void restore() {
    for (ValueId id = 0; id < static_cast<ValueId>(declared_.size()); ++id) {
      Value& v = g_.mutable_value(id);
      v.dtype = declared_[id].dtype;
      v.shape = declared_[id].shape;
      v.known.reset();
      v.constant = false;
    }
  }

  void infer(bool strict) {
    ShapeInferenceOptions options;
    options.errors_as_warnings = !strict;
    restore();
    try {
      infer_shapes(g_, options);
    } catch (const Error& e) {
      std::string what = e.what();
      // The inference error names the file already.
      if (what.starts_with(where())) what.erase(0, where().size());
      fail(what);
    }
  }

  std::optional<ShapeConstant> shape_constant(ValueId id) const {
    if (id == kNoValue || g_.value(id).is_graph_output) return std::nullopt;
    const onnx::TensorProto* t = g_.constant_tensor(id);
    if (t == nullptr || t->data_type != static_cast<int32_t>(DType::int64) || t->dims.size() != 1)
      return std::nullopt;
    const auto known = known_value_of(*t);
    const auto entries = known ? known->int_values() : std::nullopt;
    if (!entries || entries->empty() || (*entries)[0] != result_.from) return std::nullopt;
    ShapeConstant c{id, *entries, {}};
    for (NodeId n : g_.value(id).consumers) {
      const Node& node = g_.node(n);
      const int at = shape_input(node);
      const bool as_shape = at >= 0 && static_cast<size_t>(at) < node.inputs.size() &&
                            node.inputs[static_cast<size_t>(at)] == id && node.inputs[0] != id;
      if (!as_shape) return std::nullopt;
      if (std::find(c.reshapes.begin(), c.reshapes.end(), n) == c.reshapes.end())
        c.reshapes.push_back(n);
    }
    return c;
  }

  std::vector<ShapeConstant> shape_constants() const {
    std::vector<ShapeConstant> out;
    for (ValueId id = 0; id < static_cast<ValueId>(g_.values().size()); ++id) {
      bool read_as_shape = false;
      for (NodeId n : g_.value(id).consumers) read_as_shape |= shape_input(g_.node(n)) >= 0;
      if (!read_as_shape) continue;
      if (auto c = shape_constant(id)) out.push_back(std::move(*c));
    }
    return out;
  }

  // The entry that replaces the old batch in `node`'s shape, when the node's input (as now
  // inferred) says which: nullopt while it does not carry the batch.
  std::optional<int64_t> new_leading_entry(NodeId node, const std::vector<int64_t>& entries) const {
    const Node& n = g_.node(node);
    const ValueId x = n.inputs[0];
    if (x == kNoValue) return std::nullopt;
    const bool allow_zero = [&] {
      const onnx::AttributeProto* a = n.attribute("allowzero");
      return a != nullptr && a->i != 0;
    }();
    if (!allow_zero && leading_follows(x)) return 0;
    const bool other_minus_one = std::count(entries.begin() + 1, entries.end(), -1) > 0;
    const bool literal_zero = allow_zero && std::count(entries.begin(), entries.end(), 0) > 0;
    if (other_minus_one || literal_zero) return std::nullopt;
    // The element count must grow with the batch and in proportion to it.
    const Dim numel = g_.value(x).shape.numel_expr();
    const auto a = numel.evaluate({{result_.dim, kProbeA}});
    const auto b = numel.evaluate({{result_.dim, kProbeB}});
    if (!a || !b || *a == 0 || *a * kProbeB != *b * kProbeA) return std::nullopt;
    return -1;
  }

  // The entry every Reshape reading `c` agrees on, if any.
  std::optional<int64_t> agreed_entry(const ShapeConstant& c) const {
    std::optional<int64_t> agreed;
    for (NodeId n : c.reshapes) {
      const auto e = new_leading_entry(n, c.entries);
      if (!e || (agreed && *agreed != *e)) return std::nullopt;
      agreed = e;
    }
    return agreed;
  }

  // A Reshape's input carries the batch only once the Reshapes before it are rewritten, so
  // rewrite what the inferred shapes decide, infer again, until nothing more is decided.
  void patch_reshapes() {
    std::vector<ShapeConstant> pending = shape_constants();
    bool changed = true;
    while (changed && !pending.empty()) {
      changed = false;
      infer(false);
      for (auto it = pending.begin(); it != pending.end();) {
        const auto entry = agreed_entry(*it);
        if (!entry) {
          ++it;
          continue;
        }
        it->entries[0] = *entry;
        g_.replace_constant(it->value, int64_bytes(it->entries));
        result_.reshapes += it->reshapes.size();
        it = pending.erase(it);
        changed = true;
      }
    }
  }

  void check_outputs() {
    infer(true);
    for (ValueId out : g_.outputs()) {
      const Value& v = g_.value(out);
      if (v.shape.ranked && v.shape.rank() == 0) continue;
      if (!leading_follows(out)) fail(pinned_by(out));
    }
  }

  // Walks up from a graph output whose leading dim is not the batch to the node that turns a
  // leading batch into something else.
  std::string pinned_by(ValueId out) const {
    ValueId cur = out;
    while (g_.value(cur).producer >= 0) {
      const NodeId p = g_.value(cur).producer;
      const Node& n = g_.node(p);
      ValueId carrier = kNoValue;
      for (ValueId in : n.inputs) {
        if (in == kNoValue) continue;
        if (leading_follows(in)) return "node " + n.label(p) + pins(cur);
        if (carrier == kNoValue && mentions_batch(in)) carrier = in;
      }
      // Past the pinning node nothing mentions the batch: follow what is computed at run time.
      for (ValueId in : n.inputs) {
        if (carrier == kNoValue && in != kNoValue && is_activation(in)) carrier = in;
      }
      if (carrier == kNoValue) {
        return "node " + n.label(p) + pins(cur) + " (its inputs do not depend on the batch)";
      }
      cur = carrier;
    }
    return "graph output " + in_quotes(g_.value(out).name) + " does not depend on the batch";
  }

  bool is_activation(ValueId id) const {
    const Value& v = g_.value(id);
    return (v.kind == ValueKind::input || v.kind == ValueKind::intermediate) && !v.constant;
  }

  std::string pins(ValueId v) const {
    const Dim* d = leading(g_.value(v));
    if (d == nullptr) return " gives " + in_quotes(g_.value(v).name) + " an unknown shape";
    if (const auto e = d->value()) return " fixes the leading dim to " + std::to_string(*e);
    return " makes the leading dim " + d->to_string() + ", not " + result_.dim;
  }

  Graph& g_;
  Dim batch_;
  Rebatch result_;
  std::vector<Saved> declared_;  // every value's dtype and shape before any inference
};

}  // namespace

std::string Rebatch::note() const {
  auto count = [](size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  std::string out = "re-batched: leading dim of " + count(inputs, "input");
  if (reshapes > 0) out += " and " + count(reshapes, "Reshape");
  return out + " made " + in_quotes(dim) + " (stored as " + std::to_string(from) + ")";
}

bool needs_rebatch(const Graph& g, std::string_view dim) {
  bool any = false;
  for (ValueId id : g.inputs()) {
    const Shape& s = g.value(id).shape;
    if (!s.ranked) return false;
    if (s.rank() == 0) continue;
    std::vector<std::string> symbols;
    for (const Dim& d : s.dims) d.collect_symbols(symbols);
    if (std::find(symbols.begin(), symbols.end(), dim) != symbols.end()) return false;
    if (!s.dims[0].value()) return false;
    any = true;
  }
  return any;
}

Rebatch rebatch(Graph& g, std::string_view dim) {
  return Rebatcher(g, dim).run();
}

std::optional<Rebatch> rebatch_if_bound(Graph& g, const DimBindings& dims) {
  if (dims.find(kBatchDim) == dims.end() || !needs_rebatch(g, kBatchDim)) return std::nullopt;
  return rebatch(g, kBatchDim);
}

}  // namespace footprint::graph
