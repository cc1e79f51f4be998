#pragma once
// The protobuf wire format's encoding side, in one place: the model writer, the graph builder and
// the tests that hand-assemble bytes all go through it, so a fix to the encoding reaches all of
// them. (The decoder, with its bounds checks, is src/onnx/proto_parser.)
//
//   std::vector<std::byte> bytes;
//   onnx::WireWriter w{onnx::VectorSink{&bytes}};
//   w.int_field(1, 8);                       // ModelProto.ir_version = 8
//   w.string_field(2, "footprint");          // ModelProto.producer_name
//   const int64_t dims[] = {1, 3, 224, 224};
//   w.packed_varints(1, dims);               // a packed repeated int64
//
// A sink is any type with `void put(const void* p, size_t n)`. To write a nested message, learn
// its length first by encoding it into a CountingSink, then write `len_header` and the payload:
// no intermediate buffer.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace footprint::onnx {

// Wire types (the low three bits of a tag).
inline constexpr uint32_t kWireVarint = 0;
inline constexpr uint32_t kWireFixed64 = 1;
inline constexpr uint32_t kWireLen = 2;
inline constexpr uint32_t kWireFixed32 = 5;

constexpr size_t varint_size(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

// Counts what would be written: how a nested message's length prefix is learnt.
struct CountingSink {
  uint64_t written = 0;
  void put(const void*, size_t n) { written += n; }
};

// Appends to a vector the caller owns (held by pointer so the sink stays copyable).
struct VectorSink {
  std::vector<std::byte>* out;
  void put(const void* p, size_t n) {
    // resize + memcpy rather than a range insert: GCC 12 at -O3 reports a false -Warray-bounds
    // for insert() of a small stack buffer once the writer is inlined into a caller.
    if (n == 0) return;
    const size_t at = out->size();
    out->resize(at + n);
    std::memcpy(out->data() + at, p, n);
  }
};

template <class Sink>
class WireWriter {
 public:
  explicit WireWriter(Sink sink) : sink_(std::move(sink)) {}

  Sink& sink() { return sink_; }

  WireWriter& raw(const void* p, size_t n) {
    sink_.put(p, n);
    return *this;
  }
  WireWriter& raw(std::span<const std::byte> b) { return raw(b.data(), b.size()); }

  WireWriter& varint(uint64_t v) {
    uint8_t buf[10];
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) buf[n++] = static_cast<uint8_t>(v | 0x80);
    buf[n++] = static_cast<uint8_t>(v);
    return raw(buf, n);
  }
  WireWriter& tag(uint32_t field, uint32_t wire_type) {
    return varint((uint64_t{field} << 3) | wire_type);
  }
  // Little-endian whatever the host, as the format requires; no tag (an element of a packed run).
  WireWriter& fixed32(uint32_t v) {
    const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                          static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    return raw(b, sizeof b);
  }
  WireWriter& fixed64(uint64_t v) {
    fixed32(static_cast<uint32_t>(v));
    return fixed32(static_cast<uint32_t>(v >> 32));
  }

  // int32, int64, bool and enum fields: a negative value takes ten bytes (sign-extended), as
  // protobuf writes it, not zigzag (that is sint*, which ONNX does not use).
  WireWriter& int_field(uint32_t field, int64_t v) {
    return tag(field, kWireVarint).varint(static_cast<uint64_t>(v));
  }
  WireWriter& fixed32_field(uint32_t field, uint32_t v) {
    return tag(field, kWireFixed32).fixed32(v);
  }
  WireWriter& fixed64_field(uint32_t field, uint64_t v) {
    return tag(field, kWireFixed64).fixed64(v);
  }
  WireWriter& float_field(uint32_t field, float v) {
    return fixed32_field(field, std::bit_cast<uint32_t>(v));
  }

  // The tag and length of a length-delimited field whose `length` payload bytes follow.
  WireWriter& len_header(uint32_t field, uint64_t length) {
    return tag(field, kWireLen).varint(length);
  }
  WireWriter& bytes_field(uint32_t field, const void* p, size_t n) {
    return len_header(field, n).raw(p, n);
  }
  WireWriter& bytes_field(uint32_t field, std::span<const std::byte> b) {
    return bytes_field(field, b.data(), b.size());
  }
  WireWriter& string_field(uint32_t field, std::string_view s) {
    return bytes_field(field, s.data(), s.size());
  }

  // Packed repeated scalars: one length-delimited field holding the elements back to back.
  WireWriter& packed_varints(uint32_t field, std::span<const int64_t> values) {
    uint64_t length = 0;
    for (int64_t v : values) length += varint_size(static_cast<uint64_t>(v));
    len_header(field, length);
    for (int64_t v : values) varint(static_cast<uint64_t>(v));
    return *this;
  }
  WireWriter& packed_fixed32(uint32_t field, std::span<const uint32_t> values) {
    len_header(field, uint64_t{values.size()} * 4);
    for (uint32_t v : values) fixed32(v);
    return *this;
  }
  WireWriter& packed_floats(uint32_t field, std::span<const float> values) {
    len_header(field, uint64_t{values.size()} * 4);
    for (float v : values) fixed32(std::bit_cast<uint32_t>(v));
    return *this;
  }

 private:
  Sink sink_;
};

}  // namespace footprint::onnx
