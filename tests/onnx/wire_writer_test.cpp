#include "footprint/onnx/wire_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace footprint::onnx {
namespace {

std::vector<uint8_t> as_u8(const std::vector<std::byte>& b) {
  std::vector<uint8_t> out;
  out.reserve(b.size());
  for (std::byte x : b) out.push_back(static_cast<uint8_t>(x));
  return out;
}

// Expected bytes are protobuf's documented encodings (developers.google.com/protocol-buffers,
// "Encoding"), so the writer is checked against the format, not against itself.
TEST(WireWriter, VarintsAndTags) {
  std::vector<std::byte> b;
  WireWriter w{VectorSink{&b}};
  w.int_field(1, 150);
  EXPECT_EQ(as_u8(b), (std::vector<uint8_t>{0x08, 0x96, 0x01}));
  b.clear();
  w.int_field(2, -1);  // sign-extended to ten bytes
  EXPECT_EQ(as_u8(b), (std::vector<uint8_t>{0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0x01}));
  b.clear();
  w.varint(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(b.size(), 10u);
  EXPECT_EQ(varint_size(0), 1u);
  EXPECT_EQ(varint_size(127), 1u);
  EXPECT_EQ(varint_size(128), 2u);
  EXPECT_EQ(varint_size(std::numeric_limits<uint64_t>::max()), 10u);
}

TEST(WireWriter, LengthDelimitedAndFixed) {
  std::vector<std::byte> b;
  WireWriter w{VectorSink{&b}};
  w.string_field(2, "testing");
  EXPECT_EQ(as_u8(b), (std::vector<uint8_t>{0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}));
  b.clear();
  w.fixed32_field(5, 0x01020304).fixed64_field(1, 0x0102030405060708);
  EXPECT_EQ(as_u8(b), (std::vector<uint8_t>{0x2d, 4, 3, 2, 1, 0x09, 8, 7, 6, 5, 4, 3, 2, 1}));
  b.clear();
  w.float_field(2, 1.0f);
  EXPECT_EQ(as_u8(b), (std::vector<uint8_t>{0x15, 0x00, 0x00, 0x80, 0x3f}));
}

TEST(WireWriter, PackedRunsAndCounting) {
  std::vector<std::byte> b;
  WireWriter w{VectorSink{&b}};
  const int64_t ints[] = {3, 270, 86942};
  w.packed_varints(4, ints);
  EXPECT_EQ(as_u8(b), (std::vector<uint8_t>{0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}));
  b.clear();
  const float floats[] = {1.0f, -2.0f};
  w.packed_floats(7, floats);
  EXPECT_EQ(as_u8(b), (std::vector<uint8_t>{0x3a, 8, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}));
  const uint32_t words[] = {1, 2};
  WireWriter counter{CountingSink{}};
  counter.packed_fixed32(1, words).packed_varints(4, ints);
  EXPECT_EQ(counter.sink().written, 2u + 8u + 8u);
}

}  // namespace
}  // namespace footprint::onnx
