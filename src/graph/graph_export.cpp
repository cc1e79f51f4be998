#include "footprint/graph/graph_export.hpp"

#include <algorithm>

namespace footprint::graph {
namespace {

class Exporter {
 public:
  // Before IR version 4 every initializer had to be listed as a graph input as well.
  Exporter(BumpArena& arena, bool initializers_as_inputs)
      : arena_(arena), initializers_as_inputs_(initializers_as_inputs) {}

  const onnx::GraphProto* graph(const Graph& g) {
    auto* out = arena_.make<onnx::GraphProto>();
    out->name = arena_.copy(g.name());
    if (g.proto() != nullptr) out->doc_string = g.proto()->doc_string;

    auto nodes = arena_.make_array<onnx::NodeProto>(g.nodes().size());
    for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = node(g, g.node(static_cast<NodeId>(i)));
    out->nodes = onnx::array_of(nodes);

    auto inits = arena_.make_array<onnx::TensorProto>(g.initializers().size());
    for (size_t i = 0; i < inits.size(); ++i) inits[i] = *g.value(g.initializers()[i]).initializer;
    out->initializers = onnx::array_of(inits);

    std::vector<ValueId> inputs = g.inputs();
    if (initializers_as_inputs_) {
      inputs.insert(inputs.end(), g.initializers().begin(), g.initializers().end());
    }
    out->inputs = value_infos(g, inputs);
    out->outputs = value_infos(g, g.outputs());
    std::vector<ValueId> typed;
    for (ValueId id = 0; id < static_cast<ValueId>(g.values().size()); ++id) {
      const Value& v = g.value(id);
      if (v.kind == ValueKind::intermediate && !v.is_graph_output && v.has_declared_type) {
        typed.push_back(id);
      }
    }
    out->value_info = value_infos(g, typed);
    if (g.proto() != nullptr) {
      out->sparse_initializers = g.proto()->sparse_initializers;
      out->quantization_annotation = g.proto()->quantization_annotation;
      out->metadata_props = g.proto()->metadata_props;
    }
    return out;
  }

 private:
  onnx::NodeProto node(const Graph& g, const Node& n) {
    onnx::NodeProto out;
    out.name = arena_.copy(n.name);
    out.op_type = arena_.copy(n.op_type);
    out.domain = arena_.copy(n.domain);
    out.inputs = names(g, n.inputs);
    out.outputs = names(g, n.outputs);
    auto attrs = arena_.make_array<onnx::AttributeProto>(n.attributes.size());
    std::copy(n.attributes.begin(), n.attributes.end(), attrs.begin());
    // Graph attributes are re-exported from the IR so subgraph edits travel too.
    size_t next_subgraph = 0;
    for (onnx::AttributeProto& a : attrs) {
      if (a.g != nullptr) {
        a.g = graph(*n.subgraphs[next_subgraph++].graph);
      } else if (!a.graphs().empty()) {
        auto gs = arena_.make_array<onnx::GraphProto>(a.graphs().size());
        for (auto& slot : gs) slot = *graph(*n.subgraphs[next_subgraph++].graph);
        auto* extras = arena_.make<onnx::AttributeExtras>(*a.extras);
        extras->graphs = onnx::array_of(gs);
        a.extras = extras;
      }
    }
    out.attributes = onnx::array_of(attrs);
    return out;
  }

  onnx::Array<std::string_view> names(const Graph& g, const std::vector<ValueId>& ids) {
    auto out = arena_.make_array<std::string_view>(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      out[i] = ids[i] == kNoValue ? std::string_view() : arena_.copy(g.value(ids[i]).name);
    }
    return onnx::array_of(out);
  }

  onnx::Array<onnx::ValueInfoProto> value_infos(const Graph& g, const std::vector<ValueId>& ids) {
    auto out = arena_.make_array<onnx::ValueInfoProto>(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const Value& v = g.value(ids[i]);
      out[i].name = arena_.copy(v.name);
      out[i].type = type(v);
    }
    return onnx::array_of(out);
  }

  const onnx::TypeProto* type(const Value& v) {
    if (v.declared_type != nullptr) return v.declared_type;
    if (!v.has_declared_type && v.kind != ValueKind::initializer) return nullptr;
    return tensor_type_proto(arena_, v.dtype, v.shape);
  }

  BumpArena& arena_;
  bool initializers_as_inputs_;
};

}  // namespace

const onnx::TypeProto* tensor_type_proto(BumpArena& arena, DType dtype, const Shape& shape) {
  auto* t = arena.make<onnx::TypeProto>();
  t->kind = onnx::TypeProto::Kind::tensor;
  t->elem_type = static_cast<int32_t>(dtype);
  t->has_shape = shape.ranked;
  auto dims = arena.make_array<onnx::DimensionProto>(shape.dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = shape.dims[i];
    dims[i].has_value = d.is_known();
    dims[i].value = d.value().value_or(0);
    dims[i].has_param = !d.is_known() && !d.is_unknown();
    if (dims[i].has_param) dims[i].param = arena.copy(d.to_string());
  }
  t->shape = onnx::array_of(dims);
  return t;
}

ExportedModel export_onnx(const Graph& g, const ExportOptions& options,
                          std::pmr::memory_resource* memory) {
  ExportedModel result(memory != nullptr ? memory : std::pmr::get_default_resource());
  BumpArena& arena = result.arena();
  auto* model = arena.make<onnx::ModelProto>();
  if (const onnx::Model* source = g.model()) {
    // Keep what the IR does not model (functions, metadata, training info) as it was.
    *model = source->proto();
  } else {
    model->ir_version = options.ir_version;
    model->producer_name = arena.copy(options.producer_name);
    auto opsets = arena.make_array<onnx::OperatorSetId>(options.opsets.size());
    for (size_t i = 0; i < opsets.size(); ++i) {
      opsets[i].domain = arena.copy(options.opsets[i].first);
      opsets[i].version = options.opsets[i].second;
    }
    model->opset_import = onnx::array_of(opsets);
  }
  Exporter exporter(arena, model->ir_version > 0 && model->ir_version < 4);
  model->graph = exporter.graph(g);
  result.set_proto(model);
  return result;
}

}  // namespace footprint::graph
