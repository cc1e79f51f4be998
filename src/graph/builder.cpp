#include "footprint/graph/builder.hpp"

#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "footprint/core/error.hpp"
#include "footprint/core/thread_count.hpp"
#include "footprint/graph/graph_export.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/onnx/wire_writer.hpp"
#include "footprint/onnx/writer.hpp"
#include "footprint/version.hpp"

namespace footprint::graph {
namespace {

// A repeated scalar field as one packed run, the encoding the reader produces views of.
template <class T>
onnx::RepeatedScalar packed(BumpArena& arena, uint32_t field, std::span<const T> values) {
  std::vector<std::byte> message;
  onnx::WireWriter w{onnx::VectorSink{&message}};
  onnx::ScalarKind kind = onnx::ScalarKind::varint;
  if constexpr (std::is_same_v<T, float>) {
    w.packed_floats(field, values);
    kind = onnx::ScalarKind::fixed32;
  } else {
    w.packed_varints(field, values);
  }
  auto stored = arena.make_array<std::byte>(message.size());
  std::copy(message.begin(), message.end(), stored.begin());
  onnx::RepeatedScalar r;
  r.message = stored;
  r.field = field;
  r.count = static_cast<uint32_t>(values.size());
  r.kind = kind;
  r.single_run = true;
  return r;
}

// A TensorProto whose raw_data views `v` (which must outlive it).
onnx::TensorProto tensor_proto(BumpArena& arena, const HostValue& v, std::string_view name) {
  onnx::TensorProto t;
  t.name = arena.copy(name);
  auto dims = arena.make_array<int64_t>(v.dims().size());
  std::copy(v.dims().begin(), v.dims().end(), dims.begin());
  t.dims = onnx::array_of(dims);
  t.data_type = static_cast<int32_t>(v.dtype());
  t.has_raw_data = true;
  t.raw_data = {v.data(), v.bytes()};
  return t;
}

// A small integer (or few-float) value as inference sees it, so Reshape(x, shape) infers.
std::optional<KnownValue> known_of(const HostValue& v) {
  onnx::TensorProto t;
  t.dims = {v.dims().data(), static_cast<uint32_t>(v.dims().size())};
  t.data_type = static_cast<int32_t>(v.dtype());
  t.has_raw_data = true;
  t.raw_data = {v.data(), v.bytes()};
  return known_value_of(t);
}

}  // namespace

Attr Attr::of(std::string name, int64_t v) {
  Attr a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::int_;
  a.i = v;
  return a;
}
Attr Attr::of(std::string name, float v) {
  Attr a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::float_;
  a.f = v;
  return a;
}
Attr Attr::of(std::string name, std::string v) {
  Attr a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::string;
  a.s = std::move(v);
  return a;
}
Attr Attr::of(std::string name, std::vector<int64_t> v) {
  Attr a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::ints;
  a.ints = std::move(v);
  return a;
}
Attr Attr::of(std::string name, std::vector<float> v) {
  Attr a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::floats;
  a.floats = std::move(v);
  return a;
}
Attr Attr::of(std::string name, SharedValue v) {
  Attr a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::tensor;
  a.tensor = std::move(v);
  return a;
}

Attr Attr::of(std::string name, const GraphBuilder& subgraph) {
  Attr a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::graph;
  a.graph = &subgraph;
  return a;
}

// What the builder keeps per value: metadata only, never a propagated value.
struct BuiltValue {
  std::string name;
  TensorType type;
  // Small shape values with symbols (Shape of an input with a dynamic dim): metadata that lets
  // later Reshapes infer; concrete values live in the Vars instead.
  std::optional<KnownValue> symbolic;
};

struct GraphBuilder::Impl {
  Impl(const OpRegistry& r, BuilderOptions o) : registry(r), options(std::move(o)) {}

  const OpRegistry& registry;
  BuilderOptions options;
  BumpArena arena;  // attributes and their protos, trivially destructible
  std::vector<BuiltValue> values;
  std::vector<Node> nodes;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  // Constants are graph data: an export writes them as initializers.
  std::vector<std::pair<ValueId, SharedValue>> constants;
  std::vector<SharedValue> attribute_tensors;
  // Subgraphs: the enclosing builder, the prefix that keeps names unique across the graph tree,
  // the builders of this graph's subgraphs, and the enclosing values read here (by name).
  const GraphBuilder* parent = nullptr;
  std::string prefix;
  std::vector<std::unique_ptr<GraphBuilder>> children;
  std::unordered_map<std::string, ValueId> captured;

  ValueId add_value(std::string name, TensorType type) {
    const auto id = static_cast<ValueId>(values.size());
    if (name.empty()) name = prefix + "v" + std::to_string(id);
    values.push_back({std::move(name), std::move(type), std::nullopt});
    return id;
  }

  onnx::Array<onnx::AttributeProto> attributes(const std::vector<Attr>& attrs) {
    using Type = onnx::AttributeProto::Type;
    auto out = arena.make_array<onnx::AttributeProto>(attrs.size());
    for (size_t k = 0; k < attrs.size(); ++k) {
      const Attr& a = attrs[k];
      onnx::AttributeProto& p = out[k];
      p.name = arena.copy(a.name);
      p.type = a.type;
      p.i = a.i;
      p.f = a.f;
      if (a.type == Type::string) p.s = arena.copy(a.s);
      if (a.type == Type::ints) p.ints = packed(arena, 8, std::span<const int64_t>(a.ints));
      if (a.type == Type::floats) p.floats = packed(arena, 7, std::span<const float>(a.floats));
      if (a.type == Type::tensor) {
        if (!a.tensor) throw Error("attribute " + in_quotes(a.name) + " has no tensor");
        attribute_tensors.push_back(a.tensor);
        p.t = arena.make<onnx::TensorProto>(tensor_proto(arena, *a.tensor, a.name));
      }
      if (a.type == Type::graph) {
        if (a.graph == nullptr) throw Error("attribute " + in_quotes(a.name) + " has no graph");
        p.g = a.graph->export_graph(arena);
      }
    }
    return onnx::array_of(out);
  }

  // Evaluates the node now when every input is known and the outputs are small enough.
  std::vector<SharedValue> propagate(const Node& n, NodeId id, const std::vector<Var>& in,
                                     const InferResult& r) const {
    if (!options.propagate) return {};
    std::vector<const TensorRef*> refs;
    std::vector<TensorRef> in_refs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].valid() && in[i].value() == nullptr) return {};
      if (in[i].valid()) in_refs[i] = in[i].value()->ref();
      refs.push_back(in[i].valid() ? &in_refs[i] : nullptr);
    }
    std::vector<std::vector<int64_t>> extents;
    uint64_t total = 0;
    for (const TensorType& t : r.outputs) {
      auto e = t.shape.extents();
      const auto numel = e ? checked_numel(e->data(), e->size()) : std::nullopt;
      const auto bytes = numel ? dtype_storage_bytes(t.dtype, *numel) : std::nullopt;
      if (!bytes || t.dtype == DType::undefined || t.dtype == DType::string) return {};
      total += *bytes;
      extents.push_back(std::move(*e));
    }
    if (total > options.max_value_bytes) return {};
    const OpSchema& s = *n.schema;
    if (s.output_view_of >= 0 && n.outputs.size() == 1 &&
        static_cast<size_t>(s.output_view_of) < in.size() && in[s.output_view_of].valid()) {
      // A view computes nothing: the output shares its input's bytes.
      return {HostValue::view(*in[s.output_view_of].value(), std::move(extents[0]))};
    }
    if (!can_evaluate(n)) return {};
    std::vector<SharedValue> out;
    std::vector<TensorRef> out_refs;
    for (size_t k = 0; k < extents.size(); ++k) {
      auto v = HostValue::make(r.outputs[k].dtype, std::move(extents[k]));
      out_refs.push_back(v->ref());
      out.push_back(std::move(v));
    }
    std::vector<TensorRef*> out_ptrs;
    out_ptrs.reserve(out_refs.size());
    for (TensorRef& o : out_refs) out_ptrs.push_back(&o);
    evaluate_node(n, options.opset, refs, out_ptrs, options.threads, id);
    return out;
  }
};

const std::string& Var::name() const {
  return builder_->name_of(id_);
}
DType Var::dtype() const {
  return builder_->dtype_of(id_);
}
const Shape& Var::shape() const {
  return builder_->shape_of(id_);
}

GraphBuilder::GraphBuilder(const OpRegistry& registry, BuilderOptions options)
    : impl_(std::make_unique<Impl>(registry, std::move(options))) {
  checked_thread_count(impl_->options.threads, "GraphBuilder: threads");
}

GraphBuilder::GraphBuilder(const GraphBuilder* parent, std::string prefix)
    : impl_(std::make_unique<Impl>(parent->impl_->registry, parent->impl_->options)) {
  impl_->parent = parent;
  impl_->prefix = std::move(prefix);
}

GraphBuilder::~GraphBuilder() = default;

GraphBuilder& GraphBuilder::subgraph() {
  Impl& m = *impl_;
  std::string prefix = m.prefix + "g" + std::to_string(m.children.size()) + "_";
  m.children.push_back(std::unique_ptr<GraphBuilder>(new GraphBuilder(this, std::move(prefix))));
  return *m.children.back();
}

ValueId GraphBuilder::local(const Var& v) {
  if (v.builder_ == this) return v.id();
  for (const GraphBuilder* b = impl_->parent; b != nullptr; b = b->impl_->parent) {
    if (v.builder_ != b) continue;
    const std::string& name = b->name_of(v.id());
    if (auto it = impl_->captured.find(name); it != impl_->captured.end()) return it->second;
    const ValueId id = impl_->add_value(name, b->impl_->values[v.id()].type);
    impl_->captured.emplace(name, id);
    return id;
  }
  throw Error("value " + in_quotes(v.builder_->name_of(v.id())) +
              " belongs to a builder this graph cannot see");
}

const std::string& GraphBuilder::name_of(ValueId id) const {
  return impl_->values[id].name;
}
DType GraphBuilder::dtype_of(ValueId id) const {
  return impl_->values[id].type.dtype;
}
const Shape& GraphBuilder::shape_of(ValueId id) const {
  return impl_->values[id].type.shape;
}
size_t GraphBuilder::node_count() const {
  return impl_->nodes.size();
}
size_t GraphBuilder::value_count() const {
  return impl_->values.size();
}

Var GraphBuilder::input(std::string name, DType dtype, std::vector<Dim> dims) {
  Shape shape{true, std::move(dims)};
  const ValueId id = impl_->add_value(std::move(name), {dtype, std::move(shape)});
  impl_->inputs.push_back(id);
  return Var(this, id, nullptr);
}

Var GraphBuilder::constant(SharedValue value, std::string name) {
  if (!value) throw Error("constant: no value");
  const ValueId id = impl_->add_value(std::move(name), {value->dtype(), Shape::of(value->dims())});
  impl_->constants.emplace_back(id, value);
  return Var(this, id, std::move(value));
}

// What an op's subgraphs produce, as its inference asks: the output types the subgraph's
// builder already inferred.
class GraphBuilder::SubgraphTypes final : public SubgraphInferrer {
 public:
  explicit SubgraphTypes(const std::vector<Attr>& attrs) {
    for (const Attr& a : attrs) {
      if (a.graph == nullptr) continue;
      SubgraphResult r;
      for (ValueId o : a.graph->impl_->outputs) {
        r.outputs.push_back(a.graph->impl_->values[o].type);
        r.values.emplace_back();
      }
      results_.emplace_back(a.name, std::move(r));
    }
  }
  bool any() const { return !results_.empty(); }
  SubgraphResult infer(std::string_view attribute, const std::vector<TensorType>&) const override {
    for (const auto& [name, r] : results_)
      if (name == attribute) return r;
    throw Error("no subgraph " + in_quotes(attribute));
  }

 private:
  std::vector<std::pair<std::string, SubgraphResult>> results_;
};

std::vector<Var> GraphBuilder::op(std::string_view op_type, const std::vector<Var>& inputs,
                                  const std::vector<Attr>& attrs, size_t outputs,
                                  std::string_view domain) {
  Impl& m = *impl_;
  const OpSchema* schema = m.registry.find(domain, op_type);
  if (schema == nullptr) throw Error("op " + in_quotes(op_type) + " is not registered");
  const auto id = static_cast<NodeId>(m.nodes.size());
  Node n;
  n.name = m.prefix + std::string(op_type) + "_" + std::to_string(id);
  n.op_type = std::string(op_type);
  n.domain = std::string(domain);
  n.schema = schema;
  n.attributes = m.attributes(attrs);

  std::vector<TensorType> types(inputs.size());
  std::vector<std::optional<KnownValue>> known(inputs.size());
  InferContext ctx{n, m.options.opset, {}, {}, nullptr, id};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Var& v = inputs[i];
    const ValueId in = v.valid() ? local(v) : kNoValue;
    n.inputs.push_back(in);
    if (!v.valid()) {
      ctx.inputs.push_back(nullptr);
      ctx.input_values.push_back(nullptr);
      continue;
    }
    types[i] = m.values[in].type;
    if (v.value() != nullptr) known[i] = known_of(*v.value());
    const auto& sym = m.values[in].symbolic;
    ctx.inputs.push_back(&types[i]);
    ctx.input_values.push_back(known[i] ? &*known[i] : sym ? &*sym : nullptr);
  }
  for (size_t k = 0; k < outputs; ++k)
    n.outputs.push_back(static_cast<ValueId>(m.values.size() + k));

  const SubgraphTypes subgraph_types(attrs);
  if (subgraph_types.any()) ctx.subgraphs = &subgraph_types;
  InferResult r;
  r.outputs.resize(outputs);
  r.values.resize(outputs);
  if (schema->infer != nullptr) schema->infer(ctx, r);
  std::vector<SharedValue> values = m.propagate(n, id, inputs, r);

  std::vector<Var> result;
  for (size_t k = 0; k < outputs; ++k) {
    const ValueId out = m.add_value(n.name + ":" + std::to_string(k), r.outputs[k]);
    if (r.values[k] && !r.values[k]->is_concrete()) m.values[out].symbolic = std::move(r.values[k]);
    result.push_back(Var(this, out, k < values.size() ? values[k] : nullptr));
  }
  m.nodes.push_back(std::move(n));
  return result;
}

Var GraphBuilder::gemm(const Var& a, const Var& b, const Var& c, bool trans_b) {
  return op1("Gemm", {a, b, c}, {Attr::of("transB", int64_t{trans_b ? 1 : 0})});
}

Var GraphBuilder::conv(const Var& x, const Var& w, const Var& bias, std::vector<int64_t> strides,
                       std::vector<int64_t> pads, int64_t group) {
  return op1("Conv", {x, w, bias},
             {Attr::of("strides", std::move(strides)), Attr::of("pads", std::move(pads)),
              Attr::of("group", group)});
}

Var GraphBuilder::constant_of_shape(const Var& shape, SharedValue fill) {
  return op1("ConstantOfShape", {shape}, {Attr::of("value", std::move(fill))});
}

std::vector<Var> GraphBuilder::if_else(const Var& cond, const GraphBuilder& then_branch,
                                       const GraphBuilder& else_branch) {
  return op("If", {cond},
            {Attr::of("then_branch", then_branch), Attr::of("else_branch", else_branch)},
            then_branch.impl_->outputs.size());
}

std::vector<Var> GraphBuilder::loop(const Var& max_trip, const Var& cond,
                                    const std::vector<Var>& carried, const GraphBuilder& body) {
  std::vector<Var> inputs = {max_trip, cond};
  inputs.insert(inputs.end(), carried.begin(), carried.end());
  const size_t body_outputs = body.impl_->outputs.size();
  if (body_outputs < 1) throw Error("loop: the body has no outputs (cond first)");
  return op("Loop", inputs, {Attr::of("body", body)}, body_outputs - 1);
}

void GraphBuilder::output(const Var& v, std::string name) {
  if (!v.valid()) throw Error("output: not a value");
  const ValueId id = local(v);
  // A captured value (a branch returning an outer value) is passed through an Identity, since a
  // graph output must be produced by the graph itself.
  const ValueId out = v.builder_ != this ? op1("Identity", {v}).id() : id;
  if (!name.empty()) impl_->values[out].name = std::move(name);
  impl_->outputs.push_back(out);
}

const onnx::GraphProto* GraphBuilder::export_graph(BumpArena& arena) const {
  const Impl& m = *impl_;
  auto names = [&](const std::vector<ValueId>& ids) {
    auto out = arena.make_array<std::string_view>(ids.size());
    for (size_t i = 0; i < ids.size(); ++i)
      out[i] = ids[i] == kNoValue ? std::string_view() : arena.copy(m.values[ids[i]].name);
    return onnx::array_of(out);
  };
  auto infos = [&](const std::vector<ValueId>& ids) {
    auto out = arena.make_array<onnx::ValueInfoProto>(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      out[i].name = arena.copy(m.values[ids[i]].name);
      out[i].type =
          tensor_type_proto(arena, m.values[ids[i]].type.dtype, m.values[ids[i]].type.shape);
    }
    return onnx::array_of(out);
  };
  auto* g = arena.make<onnx::GraphProto>();
  g->name = arena.copy(m.prefix.empty() ? m.options.graph_name : m.prefix + "graph");
  auto nodes = arena.make_array<onnx::NodeProto>(m.nodes.size());
  std::vector<char> is_output(m.values.size(), 0);
  for (ValueId v : m.outputs) is_output[v] = 1;
  std::vector<ValueId> typed;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = m.nodes[i];
    nodes[i].name = arena.copy(n.name);
    nodes[i].op_type = arena.copy(n.op_type);
    nodes[i].domain = arena.copy(n.domain);
    nodes[i].inputs = names(n.inputs);
    nodes[i].outputs = names(n.outputs);
    nodes[i].attributes = n.attributes;
    for (ValueId o : n.outputs) {
      if (!is_output[o] && m.values[o].type.dtype != DType::undefined) typed.push_back(o);
    }
  }
  g->nodes = onnx::array_of(nodes);
  auto inits = arena.make_array<onnx::TensorProto>(m.constants.size());
  for (size_t i = 0; i < inits.size(); ++i) {
    const auto& [id, value] = m.constants[i];
    inits[i] = tensor_proto(arena, *value, m.values[id].name);
  }
  g->initializers = onnx::array_of(inits);
  g->inputs = infos(m.inputs);
  g->outputs = infos(m.outputs);
  g->value_info = infos(typed);

  return g;
}

ExportedModel GraphBuilder::export_onnx() const {
  ExportedModel result(std::pmr::get_default_resource());
  BumpArena& arena = result.arena();
  const onnx::GraphProto* g = export_graph(arena);
  auto* model = arena.make<onnx::ModelProto>();
  model->ir_version = 8;
  model->producer_name = "footprint";
  model->producer_version = kVersion;
  auto opsets = arena.make_array<onnx::OperatorSetId>(1);
  opsets[0].version = impl_->options.opset;
  model->opset_import = onnx::array_of(opsets);
  model->graph = g;
  result.set_proto(model);
  return result;
}

void GraphBuilder::write_onnx(const std::filesystem::path& path) const {
  const ExportedModel exported = export_onnx();
  onnx::write_model_file(exported.proto(), path);
}

BuiltGraph GraphBuilder::to_graph() const {
  std::vector<std::byte> bytes;
  {
    const ExportedModel exported = export_onnx();
    bytes = onnx::serialize_model(exported.proto());
  }
  BuiltGraph built;
  built.model = std::make_unique<Model>(
      load_model(onnx::ModelSource::adopt(std::move(bytes), impl_->options.graph_name)));
  built.graph = built.model->graph(impl_->registry);
  infer_shapes(built.graph);
  return built;
}

}  // namespace footprint::graph
