#pragma once
// Hand-assembles protobuf wire bytes, so tests can state exactly which bytes a file holds.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace footprint::testing {

class Wire {
 public:
  Wire& varint(uint64_t v) {
    while (v >= 0x80) {
      bytes_.push_back(static_cast<std::byte>(v | 0x80));
      v >>= 7;
    }
    bytes_.push_back(static_cast<std::byte>(v));
    return *this;
  }
  Wire& tag(uint32_t field, uint32_t wire) { return varint((uint64_t{field} << 3) | wire); }
  Wire& int_field(uint32_t field, int64_t v) {
    return tag(field, 0).varint(static_cast<uint64_t>(v));
  }
  Wire& bytes_field(uint32_t field, std::span<const std::byte> b) {
    tag(field, 2).varint(b.size());
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return *this;
  }
  Wire& str(uint32_t field, std::string_view s) {
    return bytes_field(field, std::as_bytes(std::span<const char>(s.data(), s.size())));
  }
  Wire& msg(uint32_t field, const Wire& inner) { return bytes_field(field, inner.bytes()); }
  Wire& fixed32(uint32_t field, uint32_t v) {
    tag(field, 5);
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::byte>(v >> (8 * i)));
    return *this;
  }
  Wire& raw(std::initializer_list<uint8_t> b) {
    for (uint8_t x : b) bytes_.push_back(static_cast<std::byte>(x));
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
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
