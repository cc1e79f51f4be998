#pragma once
// A node's attributes with ONNX's defaults applied: the one reader that inference hooks,
// kernels and workspace sizes share (InferContext and KernelContext forward to it).
//
//   int64_t group = graph::attr_int(node, "group", 1);
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "footprint/onnx/proto.hpp"

namespace footprint::graph {

struct Node;

int64_t attr_int(const Node& n, std::string_view name, int64_t fallback);
float attr_float(const Node& n, std::string_view name, float fallback);
std::string_view attr_string(const Node& n, std::string_view name, std::string_view fallback);
// nullopt when the attribute is absent.
std::optional<std::vector<int64_t>> attr_ints(const Node& n, std::string_view name);
std::optional<std::vector<float>> attr_floats(const Node& n, std::string_view name);
const onnx::TensorProto* attr_tensor(const Node& n, std::string_view name);

// Attributes of a node a rewrite makes (Graph::own_attributes keeps them); `name` and a string
// value must outlive the graph (literals).
onnx::AttributeProto int_attribute(std::string_view name, int64_t v);
onnx::AttributeProto float_attribute(std::string_view name, float v);
onnx::AttributeProto string_attribute(std::string_view name, std::string_view v);

}  // namespace footprint::graph
