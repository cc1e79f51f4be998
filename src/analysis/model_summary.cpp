#include "footprint/analysis/model_summary.hpp"

#include <algorithm>

#include "footprint/onnx/tensor_data.hpp"

namespace footprint::analysis {
namespace {

std::string proto_type_text(const onnx::TypeProto* t) {
  if (t == nullptr) return "?";
  using K = onnx::TypeProto::Kind;
  auto tensor_text = [&](std::string_view prefix) {
    std::string out(prefix);
    out += is_known_dtype(t->elem_type) ? std::string(dtype_name(static_cast<DType>(t->elem_type)))
                                        : std::string("?");
    if (!t->has_shape) return out + "[?]";
    out += '[';
    for (size_t i = 0; i < t->shape.size(); ++i) {
      if (i != 0) out += ',';
      const auto& d = t->shape[i];
      out += d.has_value ? std::to_string(d.value) : d.has_param ? std::string(d.param) : "?";
    }
    return out + ']';
  };
  switch (t->kind) {
    case K::tensor:
      return tensor_text("");
    case K::sparse_tensor:
      return tensor_text("sparse ");
    case K::sequence:
      return "seq(" + proto_type_text(t->elem) + ")";
    case K::optional:
      return "optional(" + proto_type_text(t->elem) + ")";
    case K::map:
      return "map(" + std::string(dtype_name(static_cast<DType>(t->key_type))) + "," +
             proto_type_text(t->elem) + ")";
    case K::none:
      return "?";
  }
  return "?";
}

TensorSignature signature(const graph::Value& v) {
  return TensorSignature{v.name, v.dtype, v.shape, type_text(v)};
}

std::string op_key(const graph::Node& n) {
  return n.qualified_op();
}

bool within(std::span<const std::byte> inner, std::span<const std::byte> outer) {
  return !outer.empty() && inner.data() >= outer.data() &&
         inner.data() + inner.size() <= outer.data() + outer.size();
}

class Collector {
 public:
  Collector(const onnx::Model& model, ModelSummary& out) : model_(model), out_(out) {}

  void tensor(const onnx::TensorProto& t) {
    const uint64_t bytes = onnx::tensor_storage_bytes(t);
    const auto view = onnx::tensor_view(t);
    if (view.empty()) {
      out_.residence.heap += bytes;  // varint payloads are decoded into memory when used
    } else if (t.data_location == onnx::TensorProto::Location::external) {
      out_.residence.mapped += bytes;
    } else if (within(view, model_.source().bytes())) {
      if (model_.source().is_mapped()) {
        out_.residence.mapped += bytes;
      } else if (model_.source().is_owned()) {
        out_.residence.heap += bytes;
      } else {
        out_.residence.borrowed += bytes;
      }
    }
  }

  void graph(const graph::Graph& g, bool main) {
    for (graph::ValueId id : g.initializers()) {
      const onnx::TensorProto& t = *g.value(id).initializer;
      out_.initializer_bytes += onnx::tensor_storage_bytes(t);
      tensor(t);
    }
    for (const graph::Node& n : g.nodes()) {
      ++(main ? out_.ops : out_.subgraph_ops)[op_key(n)];
      if (!main) ++out_.subgraph_nodes;
      if (n.schema == nullptr) unknown_.push_back(op_key(n));
      const bool stored =
          !n.outputs.empty() && n.outputs[0] != graph::kNoValue && g.is_stored_value(n.outputs[0]);
      if (const onnx::TensorProto* t = stored ? g.constant_tensor(n.outputs[0]) : nullptr) {
        ++out_.constant_nodes;
        out_.constant_bytes += onnx::tensor_storage_bytes(*t);
        tensor(*t);
      }
      for (const graph::Subgraph& s : n.subgraphs) graph(*s.graph, false);
    }
  }

  void finish() {
    std::sort(unknown_.begin(), unknown_.end());
    unknown_.erase(std::unique(unknown_.begin(), unknown_.end()), unknown_.end());
    out_.unknown_ops = std::move(unknown_);
  }

 private:
  const onnx::Model& model_;
  ModelSummary& out_;
  std::vector<std::string> unknown_;
};

}  // namespace

std::string type_text(const graph::Value& v) {
  if (v.declared_type != nullptr) return proto_type_text(v.declared_type);
  std::string out = v.dtype == DType::undefined ? "?" : std::string(dtype_name(v.dtype));
  return out + v.shape.to_string();
}

ModelSummary summarize(const graph::Model& loaded, const graph::Graph& g) {
  // What only the stored format holds (producer, opsets, where weights live) is read from it.
  const onnx::Model& model = loaded.onnx();
  ModelSummary s;
  const onnx::ModelProto& p = model.proto();
  s.model = model.source().name();
  s.file_bytes = model.source().bytes().size();
  s.ir_version = p.ir_version;
  s.producer_name = std::string(p.producer_name);
  s.producer_version = std::string(p.producer_version);
  for (const onnx::OperatorSetId& o : p.opset_import) {
    s.opsets.emplace_back(std::string(o.domain), o.version);
  }
  for (graph::ValueId id : g.inputs()) s.inputs.push_back(signature(g.value(id)));
  for (graph::ValueId id : g.outputs()) s.outputs.push_back(signature(g.value(id)));
  s.nodes = g.nodes().size();
  s.subgraphs = g.subgraph_count();
  s.initializers = g.initializers().size();
  Collector c(model, s);
  c.graph(g, true);
  c.finish();
  s.weight_bytes = s.initializer_bytes + s.constant_bytes;
  for (const auto& f : model.external_files()) s.external_files.push_back(f.string());
  s.tree_bytes = model.tree_bytes();
  return s;
}

}  // namespace footprint::analysis
