#include "footprint/graph/kernel.hpp"

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::graph {

size_t TensorRef::numel() const {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

size_t TensorRef::bytes() const {
  return dtype_storage_bytes(dtype, numel()).value_or(0);
}

const TensorRef& KernelContext::input(size_t i) const {
  const TensorRef* t = input_or_null(i);
  if (t == nullptr) fail("input " + std::to_string(i) + " is required");
  return *t;
}

TensorRef& KernelContext::output(size_t i) {
  TensorRef* t = output_or_null(i);
  if (t == nullptr) fail("output " + std::to_string(i) + " is required");
  return *t;
}

const onnx::AttributeProto* KernelContext::attribute(std::string_view name) const {
  return node().attribute(name);
}

int64_t KernelContext::attr_int(std::string_view name, int64_t fallback) const {
  return graph::attr_int(node(), name, fallback);
}

float KernelContext::attr_float(std::string_view name, float fallback) const {
  return graph::attr_float(node(), name, fallback);
}

std::string_view KernelContext::attr_string(std::string_view name,
                                            std::string_view fallback) const {
  return graph::attr_string(node(), name, fallback);
}

std::optional<std::vector<int64_t>> KernelContext::attr_ints(std::string_view name) const {
  return graph::attr_ints(node(), name);
}

std::optional<std::vector<float>> KernelContext::attr_floats(std::string_view name) const {
  return graph::attr_floats(node(), name);
}

const onnx::TensorProto* KernelContext::attr_tensor(std::string_view name) const {
  return graph::attr_tensor(node(), name);
}

void KernelContext::fail(const std::string& what) const {
  throw Error("node " + node().label(node_id()) + ": " + what);
}

}  // namespace footprint::graph
