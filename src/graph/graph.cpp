#include "footprint/graph/graph.hpp"

#include <algorithm>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/tensor_data.hpp"

namespace footprint::graph {
namespace {

// dtype and shape of a declared tensor type; other types are kept as declared.
void apply_type(Value& v, const onnx::TypeProto* type) {
  if (type == nullptr) return;
  v.has_declared_type = true;
  if (type->kind != onnx::TypeProto::Kind::tensor) {
    v.declared_type = type;
    return;
  }
  if (is_known_dtype(type->elem_type)) v.dtype = static_cast<DType>(type->elem_type);
  if (!type->has_shape) return;
  v.shape.ranked = true;
  v.shape.dims.clear();
  v.shape.dims.reserve(type->shape.size());
  for (const onnx::DimensionProto& d : type->shape) {
    if (d.has_value && d.value >= 0) {
      v.shape.dims.push_back(Dim::known(d.value));
    } else if (d.has_param && !d.param.empty()) {
      v.shape.dims.push_back(Dim::named(std::string(d.param)));
    } else {
      v.shape.dims.push_back(Dim::unknown());
    }
  }
}

// The first declared dim_value below 0, as "dim 1 is -5". ONNX extents are >= 0; a dynamic one is
// a dim_param or no value, so a negative one is a broken exporter, not "unknown".
std::optional<std::string> negative_dim(const onnx::TypeProto* type) {
  if (type == nullptr || type->kind != onnx::TypeProto::Kind::tensor || !type->has_shape)
    return std::nullopt;
  size_t i = 0;
  for (const onnx::DimensionProto& d : type->shape) {
    if (d.has_value && d.value < 0)
      return "dim " + std::to_string(i) + " is " + std::to_string(d.value);
    ++i;
  }
  return std::nullopt;
}

void apply_tensor(Value& v, const onnx::TensorProto& t) {
  v.initializer = &t;
  v.dtype = static_cast<DType>(t.data_type);
  v.shape = Shape::of(std::vector<int64_t>(t.dims.begin(), t.dims.end()));
}

bool holds_graphs(const onnx::AttributeProto& a) {
  return a.g != nullptr || !a.graphs().empty();
}

}  // namespace

const onnx::AttributeProto* Node::attribute(std::string_view attr_name) const {
  for (const onnx::AttributeProto& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

std::string Node::qualified_op() const {
  return domain.empty() ? op_type : domain + "::" + op_type;
}

std::string Node::label(NodeId id) const {
  // Appended piecewise: GCC 12's -Wrestrict misfires on chained string operator+ at -O2.
  std::string out;
  if (name.empty()) {
    out.append("#").append(std::to_string(id));
  } else {
    out.append(in_quotes(name));
  }
  out.append(" (").append(printable(op_type)).append(")");
  return out;
}

struct Graph::OwnedConstant {
  onnx::TensorProto tensor;
  std::vector<std::byte> raw;
  // A Constant node's attributes, their `value` pointing at `tensor`.
  std::vector<onnx::AttributeProto> attributes;
  std::string text;  // own_text's
};

Graph::Graph() = default;
Graph::~Graph() = default;

Graph::Graph(Graph&& other) noexcept
    : name_(std::move(other.name_)),
      values_(std::move(other.values_)),
      nodes_(std::move(other.nodes_)),
      inputs_(std::move(other.inputs_)),
      outputs_(std::move(other.outputs_)),
      initializers_(std::move(other.initializers_)),
      by_name_(std::move(other.by_name_)),
      parent_(other.parent_),
      model_(other.model_),
      registry_(other.registry_),
      proto_(other.proto_),
      owned_constants_(std::move(other.owned_constants_)),
      function_calls_(other.function_calls_),
      held_inputs_(std::move(other.held_inputs_)) {
  relink_children();
}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    name_ = std::move(other.name_);
    values_ = std::move(other.values_);
    nodes_ = std::move(other.nodes_);
    inputs_ = std::move(other.inputs_);
    outputs_ = std::move(other.outputs_);
    initializers_ = std::move(other.initializers_);
    by_name_ = std::move(other.by_name_);
    parent_ = other.parent_;
    model_ = other.model_;
    registry_ = other.registry_;
    proto_ = other.proto_;
    owned_constants_ = std::move(other.owned_constants_);
    function_calls_ = other.function_calls_;
    held_inputs_ = std::move(other.held_inputs_);
    relink_children();
  }
  return *this;
}

void Graph::relink_children() {
  for (Node& n : nodes_) {
    for (Subgraph& s : n.subgraphs) s.graph->parent_ = this;
  }
}

int64_t Graph::opset(std::string_view domain) const {
  const int64_t imported = model_ != nullptr ? model_->opset_version(domain) : 0;
  return imported > 0 ? imported : kNewestOpset;
}

Graph Graph::from_onnx(const onnx::Model& model, const OpRegistry& registry) {
  Graph g;
  g.model_ = &model;
  g.registry_ = &registry;
  g.build(model.graph());
  return g;
}

std::optional<ValueId> Graph::find(std::string_view value_name) const {
  auto it = by_name_.find(std::string(value_name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

size_t Graph::subgraph_count() const {
  size_t n = 0;
  for (const Node& node : nodes_) {
    for (const Subgraph& s : node.subgraphs) n += 1 + s.graph->subgraph_count();
  }
  return n;
}

bool Graph::is_stored_value(ValueId id) const {
  const Value& v = values_[id];
  if (v.producer < 0) return false;
  const Node& n = nodes_[v.producer];
  return n.schema != nullptr && !n.schema->stored_value_attribute.empty() && !n.outputs.empty() &&
         n.outputs[0] == id;
}

const onnx::TensorProto* Graph::constant_tensor(ValueId id) const {
  const Value& v = values_[id];
  if (v.kind == ValueKind::initializer) return v.initializer;
  if (!is_stored_value(id)) return nullptr;
  const Node& n = nodes_[v.producer];
  const onnx::AttributeProto* a = n.attribute(n.schema->stored_value_attribute);
  return a != nullptr ? a->t : nullptr;
}

void Graph::replace_constant(ValueId id, std::vector<std::byte> raw) {
  Value& v = values_[id];
  const onnx::TensorProto* old = constant_tensor(id);
  if (old == nullptr) {
    throw Error("graph " + in_quotes(name_) + ": " + in_quotes(v.name) +
                " is neither an initializer nor a Constant's value; it cannot be rewritten");
  }
  if (onnx::tensor_storage_bytes(*old) != raw.size()) {
    throw Error("graph " + in_quotes(name_) + ": a new payload for " + in_quotes(v.name) + " has " +
                std::to_string(raw.size()) + " bytes, not " +
                std::to_string(onnx::tensor_storage_bytes(*old)));
  }
  auto owned = std::make_unique<OwnedConstant>();
  owned->raw = std::move(raw);
  owned->tensor = *old;  // name, dims and dtype stay views of the model
  owned->tensor.has_raw_data = true;
  owned->tensor.raw_data = owned->raw;
  owned->tensor.typed_data = {};
  owned->tensor.data_location = onnx::TensorProto::Location::inline_data;
  owned->tensor.external_data = {};
  owned->tensor.external_bytes = {};
  if (v.kind == ValueKind::initializer) {
    v.initializer = &owned->tensor;
  } else {
    Node* constant_node = &nodes_[v.producer];
    owned->attributes.assign(constant_node->attributes.begin(), constant_node->attributes.end());
    for (onnx::AttributeProto& a : owned->attributes) {
      if (a.name == constant_node->schema->stored_value_attribute) a.t = &owned->tensor;
    }
    constant_node->attributes = {owned->attributes.data(),
                                 static_cast<uint32_t>(owned->attributes.size()), 0};
  }
  owned_constants_.push_back(std::move(owned));
}

onnx::Array<onnx::AttributeProto> Graph::own_attributes(
    std::vector<onnx::AttributeProto> attributes) {
  auto owned = std::make_unique<OwnedConstant>();
  owned->attributes = std::move(attributes);
  const onnx::Array<onnx::AttributeProto> out{owned->attributes.data(),
                                              static_cast<uint32_t>(owned->attributes.size()), 0};
  owned_constants_.push_back(std::move(owned));
  return out;
}

std::string_view Graph::own_text(std::string text) {
  auto owned = std::make_unique<OwnedConstant>();
  owned->text = std::move(text);
  const std::string_view out = owned->text;
  owned_constants_.push_back(std::move(owned));
  return out;
}

void Graph::fuse_into(NodeId host, std::span<const NodeId> absorbed, Epilogue epilogue) {
  const auto bad = [&](const std::string& why) {
    throw Error("graph " + in_quotes(name_) + ": cannot fuse into node " +
                nodes_[host].label(host) + ": " + why);
  };
  if (absorbed.empty() || nodes_[host].outputs.empty()) bad("nothing to fuse");
  std::vector<bool> dead_nodes(nodes_.size(), false);
  for (const NodeId id : absorbed) dead_nodes[id] = true;
  // Values made inside the chain: host's output 0 and the absorbed nodes' outputs.
  std::vector<bool> inside(values_.size(), false);
  inside[nodes_[host].outputs[0]] = true;
  for (const NodeId id : absorbed) {
    const Node& n = nodes_[id];
    if (n.outputs.size() != 1 || !n.subgraphs.empty()) bad(n.label(id) + " is not elementwise");
    inside[n.outputs[0]] = true;
  }
  const ValueId result = nodes_[absorbed.back()].outputs[0];
  std::vector<bool> dead_values = inside;
  dead_values[result] = false;
  for (ValueId v = 0; v < static_cast<ValueId>(values_.size()); ++v) {
    if (!dead_values[v]) continue;
    const Value& value = values_[v];
    const bool read_outside = std::any_of(value.consumers.begin(), value.consumers.end(),
                                          [&](NodeId c) { return !dead_nodes[c]; });
    if (value.is_graph_output || read_outside) {
      bad(in_quotes(value.name) + " is read beyond the fused nodes");
    }
  }
  for (const NodeId id : absorbed) {
    for (const ValueId in : nodes_[id].inputs) {
      if (in == kNoValue || inside[in]) continue;
      // A constant operand (Clip's bounds) loses a reader; anything computed would be lost.
      if (values_[in].kind != ValueKind::initializer && !values_[in].constant &&
          !is_stored_value(in)) {
        bad(nodes_[id].label(id) + " reads " + in_quotes(values_[in].name));
      }
    }
  }
  Node& h = nodes_[host];
  h.outputs[0] = result;
  h.epilogues.push_back(std::move(epilogue));
  values_[result].producer = host;
  erase(dead_nodes, dead_values);
}

void Graph::erase(const std::vector<bool>& dead_nodes, const std::vector<bool>& dead_values) {
  std::vector<NodeId> node_id(nodes_.size(), -1);
  std::vector<Node> nodes;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (dead_nodes[i]) continue;
    node_id[i] = static_cast<NodeId>(nodes.size());
    nodes.push_back(std::move(nodes_[i]));
  }
  std::vector<ValueId> value_id(values_.size(), kNoValue);
  std::vector<Value> values;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (dead_values[i]) {
      by_name_.erase(values_[i].name);
      continue;
    }
    value_id[i] = static_cast<ValueId>(values.size());
    values.push_back(std::move(values_[i]));
  }
  const auto remap = [&](std::vector<ValueId>& ids) {
    for (ValueId& v : ids) {
      if (v != kNoValue) v = value_id[v];
    }
  };
  for (Value& v : values) {
    if (v.producer >= 0) v.producer = node_id[v.producer];
    std::erase_if(v.consumers, [&](NodeId c) { return dead_nodes[c]; });
    for (NodeId& c : v.consumers) c = node_id[c];
  }
  for (Node& n : nodes) {
    remap(n.inputs);
    remap(n.outputs);
    remap(n.implicit_inputs);
    for (Subgraph& sub : n.subgraphs) {
      for (Value& inner : sub.graph->values_) {
        if (inner.kind == ValueKind::outer) inner.outer_value = value_id[inner.outer_value];
      }
    }
  }
  remap(inputs_);
  remap(outputs_);
  remap(initializers_);
  for (HeldInput& h : held_inputs_) {
    h.value = value_id[h.value];
    remap(h.elements);
  }
  for (auto& [name, id] : by_name_) id = value_id[id];
  nodes_ = std::move(nodes);
  values_ = std::move(values);
  relink_children();
}

ValueId Graph::add_intermediate(std::string_view base) {
  std::string name(base);
  for (int i = 1; by_name_.contains(name); ++i) name = std::string(base) + "_" + std::to_string(i);
  return add_value(name, ValueKind::intermediate);
}

void Graph::replace_nodes(std::vector<Node> nodes) {
  nodes_ = std::move(nodes);
  for (Value& v : values_) {
    if (v.kind == ValueKind::intermediate) v.producer = -1;
    v.consumers.clear();
  }
  std::vector<bool> written(values_.size(), false);
  for (size_t v = 0; v < values_.size(); ++v) {
    written[v] = values_[v].kind != ValueKind::intermediate;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const auto id = static_cast<NodeId>(i);
    const Node& n = nodes_[i];
    const auto read = [&](ValueId v) {
      if (v == kNoValue) return;
      if (!written[v]) {
        throw Error("graph " + in_quotes(name_) + ": node " + n.label(id) + " reads " +
                    in_quotes(values_[v].name) + " before a node writes it");
      }
      values_[v].consumers.push_back(id);
    };
    for (const ValueId v : n.inputs) read(v);
    for (const ValueId v : n.implicit_inputs) read(v);
    for (const ValueId v : n.outputs) {
      if (v == kNoValue) continue;
      if (written[v]) {
        throw Error("graph " + in_quotes(name_) + ": node " + n.label(id) + " writes " +
                    in_quotes(values_[v].name) + ", which is written before");
      }
      written[v] = true;
      values_[v].producer = id;
    }
  }
  std::vector<bool> dead_values(values_.size(), false);
  for (size_t v = 0; v < values_.size(); ++v) {
    const Value& value = values_[v];
    dead_values[v] = value.kind == ValueKind::intermediate && value.producer < 0 &&
                     value.consumers.empty() && !value.is_graph_output;
  }
  relink_children();
  erase(std::vector<bool>(nodes_.size(), false), dead_values);
}

void Graph::hold_input(ValueId value, const std::vector<std::string>& element_names) {
  Value& v = values_[value];
  const onnx::TypeProto* declared = v.declared_type;
  if (declared == nullptr || (declared->kind != onnx::TypeProto::Kind::sequence &&
                              declared->kind != onnx::TypeProto::Kind::optional)) {
    throw Error("graph " + in_quotes(name_) + ": input " + in_quotes(v.name) +
                " is not declared a sequence or an optional");
  }
  HeldInput held;
  held.value = value;
  held.optional = declared->kind == onnx::TypeProto::Kind::optional;
  held.has_element = !element_names.empty();
  const onnx::TypeProto* element = declared->elem;
  if (held.optional && element != nullptr && element->kind == onnx::TypeProto::Kind::sequence) {
    held.holds_sequence = true;
    element = element->elem;
  }
  const auto at = std::find(inputs_.begin(), inputs_.end(), value);
  if (at == inputs_.end()) {
    throw Error("graph " + in_quotes(name_) + ": " + in_quotes(v.name) + " is not an input");
  }
  const auto index = static_cast<size_t>(at - inputs_.begin());
  inputs_.erase(at);
  if (held.optional && !held.holds_sequence && held.has_element) {
    // The optional is its tensor.
    Value& t = values_[value];
    t.declared_type = nullptr;
    apply_type(t, element);
    held.elements = {value};
    inputs_.insert(inputs_.begin() + static_cast<std::ptrdiff_t>(index), value);
  } else {
    values_[value].kind = ValueKind::intermediate;  // held by nothing once lowered
    for (size_t i = 0; i < element_names.size(); ++i) {
      const ValueId e = add_value(element_names[i], ValueKind::input);
      apply_type(values_[e], element);
      // One declared shape stands for every element: a named dim there names no one extent.
      for (Dim& d : values_[e].shape.dims) {
        if (!d.value()) d = Dim::unknown();
      }
      held.elements.push_back(e);
    }
    inputs_.insert(inputs_.begin() + static_cast<std::ptrdiff_t>(index), held.elements.begin(),
                   held.elements.end());
  }
  held_inputs_.push_back(std::move(held));
}

void Graph::replace_output(ValueId output, const std::vector<ValueId>& values) {
  const auto at = std::find(outputs_.begin(), outputs_.end(), output);
  if (at == outputs_.end()) {
    throw Error("graph " + in_quotes(name_) + ": " + in_quotes(values_[output].name) +
                " is not an output");
  }
  const auto index = at - outputs_.begin();
  outputs_.erase(at);
  values_[output].is_graph_output =
      std::find(outputs_.begin(), outputs_.end(), output) != outputs_.end();
  outputs_.insert(outputs_.begin() + index, values.begin(), values.end());
  for (const ValueId v : values) values_[v].is_graph_output = true;
}

ValueId Graph::add_value(std::string_view value_name, ValueKind kind) {
  const auto id = static_cast<ValueId>(values_.size());
  Value v;
  v.name = std::string(value_name);
  v.kind = kind;
  values_.push_back(std::move(v));
  by_name_.emplace(values_.back().name, id);
  return id;
}

std::optional<ValueId> Graph::lookup_or_capture(std::string_view value_name) {
  if (auto local = find(value_name)) return local;
  if (parent_ == nullptr) return std::nullopt;
  auto outer = parent_->lookup_or_capture(value_name);
  if (!outer) return std::nullopt;
  const ValueId id = add_value(value_name, ValueKind::outer);
  const Value& src = parent_->values_[*outer];
  values_[id].outer_value = *outer;
  values_[id].dtype = src.dtype;
  values_[id].shape = src.shape;
  values_[id].declared_type = src.declared_type;
  return id;
}

void Graph::fail(uint64_t offset, const std::string& what) const {
  std::string where;
  if (model_ != nullptr) {
    where = model_->source().name() + ": ";
    if (offset != kUnknownOffset) where += "offset " + std::to_string(offset) + ": ";
  }
  throw Error(where + "graph " + in_quotes(name_) + ": " + what);
}

ValueId Graph::resolve_input(std::string_view value_name, std::string_view reader,
                             uint64_t offset) {
  if (value_name.empty()) return kNoValue;
  if (auto id = lookup_or_capture(value_name)) return *id;
  fail(offset, std::string(reader) + " reads " + in_quotes(value_name) +
                   ", which no node, graph input or initializer of this or an enclosing graph "
                   "provides");
}

std::string_view Graph::NodeSpec::rename(std::string_view written, std::string& buffer) const {
  if (renames == nullptr || written.empty()) return written;
  buffer.assign(written);
  const auto it = renames->formal.find(buffer);
  buffer = it != renames->formal.end() ? it->second : renames->prefix + buffer;
  return buffer;
}

const onnx::FunctionProto* Graph::local_function(const onnx::NodeProto& np) const {
  if (model_ == nullptr) return nullptr;
  for (const onnx::FunctionProto& f : model_->proto().functions) {
    if (f.name == np.op_type && f.domain == np.domain && f.overload == np.overload) return &f;
  }
  return nullptr;
}

std::vector<Graph::NodeSpec> Graph::expand_functions(const onnx::GraphProto& proto) {
  std::vector<NodeSpec> specs;
  specs.reserve(proto.nodes.size());
  std::vector<const onnx::FunctionProto*> calling;
  for (const onnx::NodeProto& np : proto.nodes) {
    NodeSpec top;
    top.proto = &np;
    top.name = std::string(np.name);
    top.attributes = np.attributes;
    expand_call(top, calling, specs);
  }
  return specs;
}

// The attributes of body node `np` of a call: those referring to an attribute of the call
// (ref_attr_name) take the caller's value, or the function's default, under their own name.
onnx::Array<onnx::AttributeProto> Graph::call_attributes(const onnx::NodeProto& np,
                                                         const onnx::FunctionProto& f,
                                                         const NodeSpec& caller) {
  bool refers = false;
  for (const onnx::AttributeProto& a : np.attributes) refers = refers || !a.ref_attr_name().empty();
  if (!refers) return np.attributes;
  std::vector<onnx::AttributeProto> out;
  for (const onnx::AttributeProto& a : np.attributes) {
    const std::string_view ref = a.ref_attr_name();
    if (ref.empty()) {
      out.push_back(a);
      continue;
    }
    const onnx::AttributeProto* given = nullptr;
    for (const onnx::AttributeProto& c : caller.attributes) {
      if (c.name == ref) given = &c;
    }
    for (const onnx::AttributeProto& d : f.attribute_protos) {
      if (given == nullptr && d.name == ref) given = &d;
    }
    if (given == nullptr) continue;  // neither given nor defaulted: the op's own default
    onnx::AttributeProto copy = *given;
    copy.name = a.name;
    out.push_back(copy);
  }
  return own_attributes(std::move(out));
}

void Graph::expand_call(const NodeSpec& call, std::vector<const onnx::FunctionProto*>& calling,
                        std::vector<NodeSpec>& out) {
  const onnx::NodeProto& np = *call.proto;
  const onnx::FunctionProto* f = local_function(np);
  if (f == nullptr) {
    if (!calling.empty()) {
      for (const onnx::AttributeProto& a : call.attributes) {
        if (holds_graphs(a)) {
          fail(np.source_offset, "function " +
                                     in_quotes(std::string(calling.back()->domain) +
                                               "::" + std::string(calling.back()->name)) +
                                     " holds a subgraph (" + in_quotes(call.name) +
                                     "), which footprint does not inline yet");
        }
      }
    }
    out.push_back(call);
    return;
  }
  const std::string qualified = std::string(f->domain) + "::" + std::string(f->name);
  if (std::find(calling.begin(), calling.end(), f) != calling.end()) {
    fail(np.source_offset,
         "function " + in_quotes(qualified) + " calls itself" +
             (call.name.empty() ? std::string() : " (node " + in_quotes(call.name) + ")"));
  }
  if (calling.size() >= kMaxFunctionDepth) {
    fail(np.source_offset, "functions nest deeper than " + std::to_string(kMaxFunctionDepth) +
                               " calls at " + in_quotes(qualified));
  }
  auto renames = std::make_shared<Renames>();
  renames->prefix = std::string(f->name) + "#" + std::to_string(function_calls_++) + "/";
  if (call.renames != nullptr) renames->prefix = call.renames->prefix + renames->prefix;
  size_t i = 0;
  for (std::string_view formal : f->inputs) {
    std::string buffer;
    renames->formal[std::string(formal)] =
        i < np.inputs.size() ? std::string(call.rename(np.inputs[i], buffer)) : std::string();
    ++i;
  }
  i = 0;
  for (std::string_view formal : f->outputs) {
    std::string buffer;
    renames->formal[std::string(formal)] =
        i < np.outputs.size() ? std::string(call.rename(np.outputs[i], buffer)) : std::string();
    ++i;
  }
  calling.push_back(f);
  for (const onnx::NodeProto& body : f->nodes) {
    NodeSpec spec;
    spec.proto = &body;
    spec.renames = renames;
    spec.name = renames->prefix + std::string(body.name.empty() ? body.op_type : body.name);
    spec.attributes = call_attributes(body, *f, call);
    expand_call(spec, calling, out);
  }
  calling.pop_back();
}

void Graph::build(const onnx::GraphProto& proto) {
  proto_ = &proto;
  name_ = std::string(proto.name);
  values_.reserve(proto.initializers.size() + proto.inputs.size() + proto.nodes.size() * 2);
  nodes_.reserve(proto.nodes.size());

  for (const onnx::TensorProto& t : proto.initializers) {
    if (find(t.name)) {
      fail(t.source_offset, "initializer " + in_quotes(t.name) + " is defined twice");
    }
    const ValueId id = add_value(t.name, ValueKind::initializer);
    apply_tensor(values_[id], t);
    initializers_.push_back(id);
  }
  for (const onnx::ValueInfoProto& in : proto.inputs) {
    // Before IR version 4 initializers were also listed as inputs; they stay weights.
    if (auto existing = find(in.name)) {
      if (values_[*existing].kind == ValueKind::initializer) continue;
      fail(kUnknownOffset, "input " + in_quotes(in.name) + " is listed twice");
    }
    if (const auto bad = negative_dim(in.type)) {
      fail(kUnknownOffset, "input " + in_quotes(in.name) + ": " + *bad +
                               " (an extent is >= 0, or a named dim_param when dynamic)");
    }
    const ValueId id = add_value(in.name, ValueKind::input);
    apply_type(values_[id], in.type);
    inputs_.push_back(id);
  }

  // The nodes as they run: the graph's own, with each call of a model-local function replaced
  // by the function's body (FunctionSpecs).
  const std::vector<NodeSpec> specs = expand_functions(proto);

  // Outputs first, so nodes stored out of order still find their producers.
  for (const NodeSpec& spec : specs) {
    const onnx::NodeProto& np = *spec.proto;
    const auto id = static_cast<NodeId>(nodes_.size());
    Node& n = nodes_.emplace_back();
    n.name = spec.name;
    n.op_type = std::string(np.op_type);
    n.domain = std::string(np.domain == "ai.onnx" ? std::string_view() : np.domain);
    n.attributes = spec.attributes;
    const OpRegistry& registry = registry_ != nullptr ? *registry_ : OpRegistry::builtin();
    n.schema = registry.find(n.domain, n.op_type);
    n.source_offset = np.source_offset;
    n.outputs.reserve(np.outputs.size());
    std::string buffer;
    for (std::string_view written : np.outputs) {
      const std::string_view out = spec.rename(written, buffer);
      if (out.empty()) {
        n.outputs.push_back(kNoValue);
        continue;
      }
      if (auto existing = find(out)) {
        const Value& prev = values_[*existing];
        std::string by = prev.producer >= 0 ? "node " + nodes_[prev.producer].label(prev.producer)
                         : prev.kind == ValueKind::initializer ? std::string("an initializer")
                                                               : std::string("a graph input");
        fail(n.source_offset, "node " + n.label(id) + " writes " + in_quotes(out) + ", which " +
                                  by + " already defines");
      }
      const ValueId v = add_value(out, ValueKind::intermediate);
      values_[v].producer = id;
      n.outputs.push_back(v);
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto id = static_cast<NodeId>(i);
    const onnx::NodeProto& np = *specs[i].proto;
    const std::string reader = "node " + nodes_[id].label(id);
    std::vector<ValueId> inputs;
    inputs.reserve(np.inputs.size());
    std::string buffer;
    for (std::string_view in : np.inputs) {
      inputs.push_back(resolve_input(specs[i].rename(in, buffer), reader, np.source_offset));
    }
    nodes_[id].inputs = std::move(inputs);
    for (ValueId v : nodes_[id].inputs) {
      if (v != kNoValue) values_[v].consumers.push_back(id);
    }
    read_subgraphs(id);
  }

  for (const onnx::ValueInfoProto& out : proto.outputs) {
    if (out.name.empty()) {
      fail(kUnknownOffset, "output #" + std::to_string(outputs_.size()) + " has no name");
    }
    const ValueId id = resolve_input(out.name, "graph output", kUnknownOffset);
    values_[id].is_graph_output = true;
    apply_type(values_[id], out.type);
    outputs_.push_back(id);
  }
  for (const onnx::ValueInfoProto& info : proto.value_info) {
    if (auto id = find(info.name)) {
      if (values_[*id].kind != ValueKind::initializer) apply_type(values_[*id], info.type);
    }
  }
}

void Graph::read_subgraphs(NodeId id) {
  for (const onnx::AttributeProto& a : nodes_[id].attributes) {
    if (!holds_graphs(a)) continue;
    auto add = [&](const onnx::GraphProto& gp) {
      auto child = std::make_unique<Graph>();
      child->parent_ = this;
      child->model_ = model_;
      child->registry_ = registry_;
      child->build(gp);
      // What the subgraph reads from this graph orders the node after its producers.
      for (const Value& v : child->values_) {
        if (v.kind != ValueKind::outer) continue;
        auto& implicit = nodes_[id].implicit_inputs;
        if (std::find(implicit.begin(), implicit.end(), v.outer_value) == implicit.end()) {
          implicit.push_back(v.outer_value);
          values_[v.outer_value].consumers.push_back(id);
        }
      }
      nodes_[id].subgraphs.push_back(Subgraph{std::string(a.name), std::move(child)});
    };
    if (a.g != nullptr) add(*a.g);
    for (const onnx::GraphProto& gp : a.graphs()) add(gp);
  }
}

}  // namespace footprint::graph
