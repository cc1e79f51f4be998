#include "tiny_cnn.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "footprint/core/bump_arena.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/onnx/tensor_file.hpp"
#include "footprint/onnx/writer.hpp"
#include "footprint/version.hpp"

namespace footprint::examples {
namespace {

// Deterministic weights in [-scale, scale): a 32-bit LCG, so no platform RNG is involved.
std::span<const std::byte> weights(BumpArena& arena, size_t count, float scale, uint32_t seed) {
  auto values = arena.make_array<float>(count);
  uint32_t state = seed;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = (static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
  }
  return std::as_bytes(std::span<const float>(values));
}

onnx::AttributeProto ints_attr(BumpArena& arena, std::string_view name,
                               std::initializer_list<int64_t> values) {
  // Packed varints of small non-negative ints are one byte each.
  auto bytes = arena.make_array<std::byte>(values.size());
  size_t i = 0;
  for (int64_t v : values) bytes[i++] = static_cast<std::byte>(v);
  onnx::AttributeProto a;
  a.name = name;
  a.type = onnx::AttributeProto::Type::ints;
  // A RepeatedScalar reads its values from an encoded message: build `ints` (field 8) as one.
  auto msg = arena.make_array<std::byte>(2 + bytes.size());
  msg[0] = static_cast<std::byte>((8 << 3) | 2);
  msg[1] = static_cast<std::byte>(bytes.size());
  std::memcpy(msg.data() + 2, bytes.data(), bytes.size());
  a.ints.message = msg;
  a.ints.field = 8;
  a.ints.count = static_cast<uint32_t>(values.size());
  a.ints.kind = onnx::ScalarKind::varint;
  return a;
}

onnx::AttributeProto int_attr(std::string_view name, int64_t v) {
  onnx::AttributeProto a;
  a.name = name;
  a.type = onnx::AttributeProto::Type::int_;
  a.i = v;
  return a;
}

onnx::NodeProto node(BumpArena& arena, std::string_view op, std::string_view name,
                     std::initializer_list<std::string_view> inputs,
                     std::initializer_list<std::string_view> outputs,
                     std::initializer_list<onnx::AttributeProto> attrs = {}) {
  onnx::NodeProto n;
  n.op_type = op;
  n.name = name;
  auto in = arena.make_array<std::string_view>(inputs.size());
  std::copy(inputs.begin(), inputs.end(), in.begin());
  auto out = arena.make_array<std::string_view>(outputs.size());
  std::copy(outputs.begin(), outputs.end(), out.begin());
  auto at = arena.make_array<onnx::AttributeProto>(attrs.size());
  std::copy(attrs.begin(), attrs.end(), at.begin());
  n.inputs = onnx::array_of(in);
  n.outputs = onnx::array_of(out);
  n.attributes = onnx::array_of(at);
  return n;
}

const onnx::TypeProto* float_type(BumpArena& arena, std::initializer_list<std::string_view> dims) {
  auto* t = arena.make<onnx::TypeProto>();
  t->kind = onnx::TypeProto::Kind::tensor;
  t->elem_type = static_cast<int32_t>(DType::float32);
  t->has_shape = true;
  auto d = arena.make_array<onnx::DimensionProto>(dims.size());
  size_t i = 0;
  for (std::string_view s : dims) {
    if (s.front() >= '0' && s.front() <= '9') {
      d[i].has_value = true;
      d[i].value = std::stoll(std::string(s));
    } else {
      d[i].has_param = true;
      d[i].param = s;
    }
    ++i;
  }
  t->shape = onnx::array_of(d);
  return t;
}

}  // namespace

std::vector<std::byte> make_tiny_cnn() {
  BumpArena arena;
  auto inits = arena.make_array<onnx::TensorProto>(4);
  const std::array<int64_t, 4> conv_w{4, 1, 3, 3};
  const std::array<int64_t, 1> conv_b{4};
  const std::array<int64_t, 2> fc_w{10, 64};
  const std::array<int64_t, 1> fc_b{10};
  inits[0] = onnx::make_tensor_view(arena, "conv.weight", DType::float32, conv_w,
                                    weights(arena, 36, 0.5f, 1));
  inits[1] = onnx::make_tensor_view(arena, "conv.bias", DType::float32, conv_b,
                                    weights(arena, 4, 0.1f, 2));
  inits[2] = onnx::make_tensor_view(arena, "fc.weight", DType::float32, fc_w,
                                    weights(arena, 640, 0.2f, 3));
  inits[3] =
      onnx::make_tensor_view(arena, "fc.bias", DType::float32, fc_b, weights(arena, 10, 0.1f, 4));

  auto nodes = arena.make_array<onnx::NodeProto>(6);
  nodes[0] =
      node(arena, "Conv", "conv", {"x", "conv.weight", "conv.bias"}, {"conv_out"},
           {ints_attr(arena, "kernel_shape", {3, 3}), ints_attr(arena, "pads", {1, 1, 1, 1})});
  nodes[1] = node(arena, "Relu", "relu", {"conv_out"}, {"relu_out"});
  nodes[2] = node(arena, "MaxPool", "pool", {"relu_out"}, {"pool_out"},
                  {ints_attr(arena, "kernel_shape", {2, 2}), ints_attr(arena, "strides", {2, 2})});
  nodes[3] = node(arena, "Flatten", "flatten", {"pool_out"}, {"flat"}, {int_attr("axis", 1)});
  nodes[4] = node(arena, "Gemm", "fc", {"flat", "fc.weight", "fc.bias"}, {"logits"},
                  {int_attr("transB", 1)});
  nodes[5] = node(arena, "Softmax", "softmax", {"logits"}, {"y"}, {int_attr("axis", 1)});

  auto inputs = arena.make_array<onnx::ValueInfoProto>(1);
  inputs[0].name = "x";
  inputs[0].type = float_type(arena, {"N", "1", "8", "8"});
  auto outputs = arena.make_array<onnx::ValueInfoProto>(1);
  outputs[0].name = "y";
  outputs[0].type = float_type(arena, {"N", "10"});

  onnx::GraphProto graph;
  graph.name = "tiny_cnn";
  graph.nodes = onnx::array_of(nodes);
  graph.initializers = onnx::array_of(inits);
  graph.inputs = onnx::array_of(inputs);
  graph.outputs = onnx::array_of(outputs);

  auto opsets = arena.make_array<onnx::OperatorSetId>(1);
  opsets[0].version = 13;
  onnx::ModelProto model;
  model.ir_version = 8;
  model.producer_name = "footprint";
  model.producer_version = kVersion;
  model.opset_import = onnx::array_of(opsets);
  model.graph = &graph;
  return onnx::serialize_model(model);
}

}  // namespace footprint::examples
