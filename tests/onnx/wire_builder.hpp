#pragma once
// Hand-assembles protobuf wire bytes, so tests can state exactly which bytes a file holds.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "footprint/onnx/wire_writer.hpp"

namespace footprint::testing {

// Chainable, copyable bytes over the library's encoder (onnx/wire_writer.hpp).
class Wire {
 public:
  Wire& varint(uint64_t v) {
    w().varint(v);
    return *this;
  }
  Wire& tag(uint32_t field, uint32_t wire) {
    w().tag(field, wire);
    return *this;
  }
  Wire& int_field(uint32_t field, int64_t v) {
    w().int_field(field, v);
    return *this;
  }
  Wire& bytes_field(uint32_t field, std::span<const std::byte> b) {
    w().bytes_field(field, b);
    return *this;
  }
  Wire& str(uint32_t field, std::string_view s) {
    w().string_field(field, s);
    return *this;
  }
  Wire& msg(uint32_t field, const Wire& inner) { return bytes_field(field, inner.bytes()); }
  Wire& fixed32(uint32_t field, uint32_t v) {
    w().fixed32_field(field, v);
    return *this;
  }
  Wire& raw(std::initializer_list<uint8_t> b) {
    for (uint8_t x : b) bytes_.push_back(static_cast<std::byte>(x));
    return *this;
  }
  Wire& append(std::span<const std::byte> b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  onnx::WireWriter<onnx::VectorSink> w() { return onnx::WireWriter(onnx::VectorSink{&bytes_}); }

  std::vector<std::byte> bytes_;
};

// A float32 TensorProto with raw_data.
inline Wire float_tensor(std::string_view name, std::vector<int64_t> dims,
                         const std::vector<float>& values) {
  Wire t;
  for (int64_t d : dims) t.int_field(1, d);
  t.int_field(2, 1);
  t.str(8, name);
  t.bytes_field(9, std::as_bytes(std::span<const float>(values)));
  return t;
}

inline Wire float_value_info(std::string_view name, std::vector<int64_t> dims) {
  Wire shape;
  for (int64_t d : dims) shape.msg(1, Wire().int_field(1, d));
  Wire tensor_type;
  tensor_type.int_field(1, 1).msg(2, shape);
  Wire type;
  type.msg(1, tensor_type);
  Wire vi;
  vi.str(1, name).msg(2, type);
  return vi;
}

inline Wire node(std::string_view op, std::vector<std::string_view> inputs,
                 std::vector<std::string_view> outputs, std::string_view name = {}) {
  Wire n;
  for (auto i : inputs) n.str(1, i);
  for (auto o : outputs) n.str(2, o);
  if (!name.empty()) n.str(3, name);
  n.str(4, op);
  return n;
}

// ModelProto{ir_version 8, opset 13, graph}
inline Wire model(const Wire& graph) {
  Wire m;
  m.int_field(1, 8);
  m.msg(7, graph);
  m.msg(8, Wire().int_field(2, 13));
  return m;
}

}  // namespace footprint::testing
