#include "footprint/graph/inference.hpp"

#include <algorithm>
#include <vector>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/onnx/tensor_data.hpp"

namespace footprint::graph {

std::optional<std::vector<int64_t>> KnownValue::int_values() const {
  if (!is_integer()) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(ints.size());
  for (const Dim& d : ints) {
    const auto v = d.value();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

bool KnownValue::is_concrete() const {
  for (const Dim& d : ints) {
    if (!d.is_known()) return false;
  }
  return true;
}

std::optional<double> KnownValue::real(size_t i) const {
  if (!is_integer()) return reals[i];
  const auto v = ints[i].value();
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::string KnownValue::to_string() const {
  std::string out = Shape::of(dims).to_string() + "{";
  const size_t n = numel();
  for (size_t i = 0; i < n && i < 16; ++i) {
    if (i != 0) out += ',';
    if (is_integer()) {
      out += ints[i].to_string();
    } else {
      std::string r = std::to_string(reals[i]);
      out += r;
    }
  }
  if (n > 16) out += ",...";
  return out + "}";
}

std::optional<KnownValue> known_value_of(const onnx::TensorProto& t, size_t max_elements,
                                         size_t max_real_elements) {
  // A value worth holding has a handful of dims; the tensor's bytes are read only past the limit.
  const std::vector<int64_t> dims(t.dims.begin(), t.dims.end());
  const auto numel = onnx::dims_numel(t.dims);
  if (!numel || *numel > std::max(max_elements, max_real_elements)) return std::nullopt;
  const onnx::TensorBytes bytes = onnx::tensor_bytes(t);
  return known_value_of(static_cast<DType>(t.data_type), dims, bytes.bytes(), max_elements,
                        max_real_elements);
}

std::optional<KnownValue> known_value_of(DType dtype, std::span<const int64_t> dims,
                                         std::span<const std::byte> bytes, size_t max_elements,
                                         size_t max_real_elements) {
  std::optional<uint64_t> numel = 1;
  for (const int64_t d : dims) {
    numel = d < 0 ? std::nullopt : checked_mul(*numel, static_cast<uint64_t>(d));
    if (!numel) break;
  }
  const DTypeTraits& traits = dtype_traits(dtype);
  const bool integer = traits.read_int != nullptr;
  // The float8 and packed types have no reader: not needed for shapes.
  if (!numel || *numel > (integer ? max_elements : max_real_elements) ||
      (!integer && traits.read_real == nullptr)) {
    return std::nullopt;
  }
  const size_t width = static_cast<size_t>(traits.bits) / 8;
  if (bytes.size() < *numel * width) return std::nullopt;
  KnownValue v;
  v.dtype = dtype;
  v.dims.assign(dims.begin(), dims.end());
  for (size_t i = 0; i < *numel; ++i) {
    const std::byte* p = bytes.data() + i * width;
    if (integer) {
      v.ints.push_back(Dim::known(traits.read_int(p)));
    } else {
      v.reals.push_back(traits.read_real(p));
    }
  }
  return v;
}

bool depends_on_values(const std::exception& e) {
  return std::string_view(e.what()).find("known only when running") != std::string_view::npos;
}

size_t InferContext::output_count() const {
  return node.outputs.size();
}

const TensorType& InferContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required");
  return *inputs[i];
}

std::optional<std::vector<int64_t>> InferContext::input_ints(size_t i) const {
  const KnownValue* v = value(i);
  if (v == nullptr) return std::nullopt;
  return v->int_values();
}

const onnx::AttributeProto* InferContext::attribute(std::string_view name) const {
  return node.attribute(name);
}

int64_t InferContext::attr_int(std::string_view name, int64_t fallback) const {
  return graph::attr_int(node, name, fallback);
}

float InferContext::attr_float(std::string_view name, float fallback) const {
  return graph::attr_float(node, name, fallback);
}

std::string_view InferContext::attr_string(std::string_view name, std::string_view fallback) const {
  return graph::attr_string(node, name, fallback);
}

std::optional<std::vector<int64_t>> InferContext::attr_ints(std::string_view name) const {
  return graph::attr_ints(node, name);
}

std::optional<std::vector<float>> InferContext::attr_floats(std::string_view name) const {
  return graph::attr_floats(node, name);
}

const onnx::TensorProto* InferContext::attr_tensor(std::string_view name) const {
  return graph::attr_tensor(node, name);
}

SubgraphResult InferContext::infer_subgraph(std::string_view attr,
                                            const std::vector<TensorType>& formal_inputs) const {
  if (subgraphs == nullptr) fail("subgraph " + in_quotes(attr) + " cannot be inferred here");
  return subgraphs->infer(attr, formal_inputs);
}

void InferContext::fail(const std::string& what) const {
  throw Error("node " + node.label(node_id) + ": " + what);
}

}  // namespace footprint::graph
