// `.pb` tensor files, and decoding every way ONNX stores a tensor payload.
#include "footprint/onnx/tensor_file.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "footprint/core/counting_resource.hpp"
#include "footprint/core/error.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/writer.hpp"
#include "test_support.hpp"
#include "wire_builder.hpp"

namespace footprint {
namespace {

using testing::Wire;

onnx::TensorFile load_tensor(const std::vector<std::byte>& bytes) {
  return onnx::TensorFile::load(onnx::ModelSource::borrow(bytes, "t.pb"));
}

template <class T>
std::vector<T> as_values(const onnx::TensorBytes& b) {
  std::vector<T> out(b.size() / sizeof(T));
  std::memcpy(out.data(), b.bytes().data(), b.size());
  return out;
}

TEST(TensorFile, WriteThenReadKeepsNameTypeShapeAndBytes) {
  testing::TempDir dir;
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  const std::array<int64_t, 2> dims = {2, 3};
  BumpArena arena;
  const auto t = onnx::make_tensor_view(arena, "x", DType::float32, dims,
                                        std::as_bytes(std::span<const float>(values)));
  onnx::write_tensor_file(dir.path() / "x.pb", t);
  const auto back = onnx::TensorFile::load_file(dir.path() / "x.pb");
  EXPECT_EQ(back.tensor().name, "x");
  EXPECT_EQ(back.tensor().data_type, 1);
  ASSERT_EQ(back.tensor().dims.size(), 2u);
  EXPECT_EQ(back.tensor().dims[1], 3);
  EXPECT_EQ(as_values<float>(onnx::tensor_bytes(back.tensor())), values);
}

TEST(TensorFile, ViewRejectsMismatchedBytes) {
  BumpArena arena;
  const std::array<int64_t, 1> dims = {3};
  const std::vector<float> two = {1, 2};
  EXPECT_THROW(onnx::make_tensor_view(arena, "x", DType::float32, dims,
                                      std::as_bytes(std::span<const float>(two))),
               Error);
}

TEST(TensorData, PackedFloatDataIsAView) {
  const std::vector<float> values = {1, 2, 3};
  Wire t;
  t.int_field(1, 3).int_field(2, 1);
  t.bytes_field(4, std::as_bytes(std::span<const float>(values)));
  const auto bytes = t.bytes();
  const auto f = load_tensor(bytes);
  const auto b = onnx::tensor_bytes(f.tensor());
  EXPECT_TRUE(b.is_view());
  EXPECT_EQ(as_values<float>(b), values);
}

TEST(TensorData, UnpackedFloatDataIsDecodedAndCounted) {
  Wire t;
  t.int_field(1, 2).int_field(2, 1);
  float one = 1.0f, two = 2.0f;
  uint32_t bits1 = 0, bits2 = 0;
  std::memcpy(&bits1, &one, 4);
  std::memcpy(&bits2, &two, 4);
  t.fixed32(4, bits1).fixed32(4, bits2);
  const auto bytes = t.bytes();
  const auto f = load_tensor(bytes);
  CountingResource counter;
  const auto b = onnx::tensor_bytes(f.tensor(), 1, &counter);
  EXPECT_FALSE(b.is_view());
  EXPECT_EQ(counter.current_bytes(), 8u) << "the decoded copy is counted";
  EXPECT_EQ(as_values<float>(b), (std::vector<float>{1.0f, 2.0f}));
}

TEST(TensorData, Int64DataDecodesNegativeVarints) {
  Wire packed;
  packed.varint(5).varint(static_cast<uint64_t>(-3)).varint(1ULL << 40);
  Wire t;
  t.int_field(1, 3).int_field(2, 7).bytes_field(7, packed.bytes());
  const auto bytes = t.bytes();
  const auto f = load_tensor(bytes);
  EXPECT_EQ(as_values<int64_t>(onnx::tensor_bytes(f.tensor())),
            (std::vector<int64_t>{5, -3, int64_t{1} << 40}));
}

TEST(TensorData, Int32DataNarrowsToTheElementType) {
  Wire packed;
  packed.varint(1).varint(0).varint(1).varint(1);
  Wire t;
  t.int_field(1, 4).int_field(2, 9).bytes_field(5, packed.bytes());  // bool[4]
  const auto bytes = t.bytes();
  const auto f = load_tensor(bytes);
  EXPECT_EQ(as_values<uint8_t>(onnx::tensor_bytes(f.tensor())), (std::vector<uint8_t>{1, 0, 1, 1}));
  Wire h;
  h.int_field(1, 1).int_field(2, 10).bytes_field(5, Wire().varint(0x3c00).bytes());  // fp16 1.0
  const auto hb = h.bytes();
  const auto hf = load_tensor(hb);
  EXPECT_EQ(as_values<uint16_t>(onnx::tensor_bytes(hf.tensor())), (std::vector<uint16_t>{0x3c00}));
}

TEST(TensorData, AlignmentIsProvidedByCopyingWhenNeeded) {
  // raw_data at an odd offset: asking for 64-byte alignment copies (and counts) it.
  const std::vector<float> values(16, 1.0f);
  Wire t;
  t.int_field(1, 16).int_field(2, 1).str(8, "odd");
  t.bytes_field(9, std::as_bytes(std::span<const float>(values)));
  const auto bytes = t.bytes();
  const auto f = load_tensor(bytes);
  CountingResource counter;
  const auto b = onnx::tensor_bytes(f.tensor(), 64, &counter);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.bytes().data()) % 64, 0u);
  if (!b.is_view()) {
    EXPECT_EQ(counter.current_bytes(), 64u);
  }
  EXPECT_EQ(as_values<float>(b), values);
}

TEST(TensorData, StringTensorsKeepTheirStrings) {
  Wire t;
  t.int_field(1, 2).int_field(2, 8).str(6, "hello").str(6, "world");
  const auto bytes = t.bytes();
  const auto f = load_tensor(bytes);
  ASSERT_EQ(f.tensor().string_data.size(), 2u);
  EXPECT_EQ(f.tensor().string_data[1], "world");
  const auto again = onnx::serialize_tensor(f.tensor());
  EXPECT_EQ(load_tensor(again).tensor().string_data[0], "hello");
}

TEST(TensorFile, ReadsTheSharedTestInputs) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto f =
      onnx::TensorFile::load_file(testing::shared_dir() / "models/light/squeezenet/input_0.pb");
  EXPECT_EQ(onnx::tensor_storage_bytes(f.tensor()), 1u * 3 * 224 * 224 * 4);
  const auto b = onnx::tensor_bytes(f.tensor());
  EXPECT_TRUE(b.is_view());
  // The backend-test input is arange(n)/n: element 1 is 1/n.
  const auto v = as_values<float>(b);
  EXPECT_FLOAT_EQ(v[0], 0.0f);
  EXPECT_NEAR(v[1], 1.0f / (3 * 224 * 224), 1e-9);
}

}  // namespace
}  // namespace footprint
