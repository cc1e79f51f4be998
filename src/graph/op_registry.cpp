#include "footprint/graph/op_registry.hpp"

#include <algorithm>
#include <string>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "ops/families.hpp"

namespace footprint::graph {

const OpRegistry& OpRegistry::builtin() {
  // Each family (src/graph/ops/<family>.cpp) adds its rows: arity, views, in-place, inference.
  static const OpRegistry registry = [] {
    OpRegistry r;
    ops::register_elementwise(r);
    ops::register_conv_pool(r);
    ops::register_matmul(r);
    ops::register_integer_products(r);
    ops::register_normalization(r);
    ops::register_reduce(r);
    ops::register_reshape(r);
    ops::register_indexing(r);
    ops::register_generators(r);
    ops::register_resize(r);
    ops::register_quantization(r);
    ops::register_recurrent(r);
    ops::register_control_flow(r);
    ops::register_sequences(r);
    ops::register_detection(r);
    ops::register_losses(r);
    ops::register_rotary(r);
    ops::register_attention(r);
    ops::register_contrib_transformer(r);
    ops::register_signal(r);
    return r;
  }();
  return registry;
}

bool OpRegistry::runs_kernels() const {
  return std::any_of(schemas_.begin(), schemas_.end(),
                     [](const OpSchema& s) { return s.kernel != nullptr; });
}

const OpSchema* OpRegistry::find(std::string_view domain, std::string_view op_type) const {
  if (domain == "ai.onnx") domain = "";
  auto it = std::find_if(schemas_.begin(), schemas_.end(), [&](const OpSchema& s) {
    return s.op_type == op_type && s.domain == domain;
  });
  return it == schemas_.end() ? nullptr : &*it;
}

OpSchema& OpRegistry::row(std::string_view domain, std::string_view op_type) {
  const OpSchema* s = find(domain, op_type);
  if (s == nullptr) {
    throw Error("op registry: no op " + std::string(domain.empty() ? "" : domain) +
                (domain.empty() ? "" : "::") + std::string(op_type));
  }
  return schemas_[static_cast<size_t>(s - schemas_.data())];
}

void OpRegistry::add(const OpSchema& schema) {
  schemas_.push_back(schema);
}

}  // namespace footprint::graph

namespace footprint::graph {

bool subgraph_runs(const Graph& g, const Node& n, size_t index) {
  if (n.schema == nullptr || n.schema->subgraph_runs == nullptr) return true;
  return n.schema->subgraph_runs(g, n, index);
}

std::optional<DType> dtype_refused(const Graph& g, const Node& n) {
  if (n.schema == nullptr) return std::nullopt;
  return dtype_refused(g, *n.schema, n.inputs, n.outputs);
}

std::optional<DType> dtype_refused(const Graph& g, const OpSchema& row,
                                   std::span<const ValueId> inputs,
                                   std::span<const ValueId> outputs) {
  if (row.kernel_dtypes.empty()) return std::nullopt;
  const int of = row.kernel_dtype_of;
  const std::span<const ValueId> values = of >= 0 ? inputs : outputs;
  const auto i = static_cast<size_t>(of >= 0 ? of : -1 - of);
  if (i >= values.size() || values[i] == kNoValue) return std::nullopt;
  const DType t = g.value(values[i]).dtype;
  if (t == DType::undefined || row.kernel_dtypes.contains(t)) return std::nullopt;
  return t;
}

}  // namespace footprint::graph
