#include "footprint/graph/node_attributes.hpp"

#include <bit>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

int64_t attr_int(const Node& n, std::string_view name, int64_t fallback) {
  const auto* a = n.attribute(name);
  return a == nullptr ? fallback : a->i;
}

float attr_float(const Node& n, std::string_view name, float fallback) {
  const auto* a = n.attribute(name);
  return a == nullptr ? fallback : a->f;
}

std::string_view attr_string(const Node& n, std::string_view name, std::string_view fallback) {
  const auto* a = n.attribute(name);
  return a == nullptr ? fallback : std::string_view(a->s);
}

std::optional<std::vector<int64_t>> attr_ints(const Node& n, std::string_view name) {
  const auto* a = n.attribute(name);
  if (a == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(a->ints.count);
  a->ints.for_each([&](uint64_t raw) { out.push_back(static_cast<int64_t>(raw)); });
  return out;
}

std::optional<std::vector<float>> attr_floats(const Node& n, std::string_view name) {
  const auto* a = n.attribute(name);
  if (a == nullptr) return std::nullopt;
  std::vector<float> out;
  out.reserve(a->floats.count);
  a->floats.for_each(
      [&](uint64_t raw) { out.push_back(std::bit_cast<float>(static_cast<uint32_t>(raw))); });
  return out;
}

const onnx::TensorProto* attr_tensor(const Node& n, std::string_view name) {
  const auto* a = n.attribute(name);
  return a == nullptr ? nullptr : a->t;
}

onnx::AttributeProto int_attribute(std::string_view name, int64_t v) {
  onnx::AttributeProto a;
  a.name = name;
  a.type = onnx::AttributeProto::Type::int_;
  a.i = v;
  return a;
}

onnx::AttributeProto float_attribute(std::string_view name, float v) {
  onnx::AttributeProto a;
  a.name = name;
  a.type = onnx::AttributeProto::Type::float_;
  a.f = v;
  return a;
}

onnx::AttributeProto string_attribute(std::string_view name, std::string_view v) {
  onnx::AttributeProto a;
  a.name = name;
  a.type = onnx::AttributeProto::Type::string;
  a.s = v;
  return a;
}

}  // namespace footprint::graph
