// External data: mapped in place, bounds-checked, and never read from outside the model folder.
#include <gtest/gtest.h>

#include <cstring>

#include "footprint/core/error.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/writer.hpp"
#include "test_support.hpp"
#include "wire_builder.hpp"

namespace footprint {
namespace {

using testing::Wire;

Wire external_tensor(std::string_view location, int64_t offset, int64_t length, int64_t numel) {
  Wire t;
  t.int_field(1, numel).int_field(2, 1).str(8, "w");
  t.msg(13, Wire().str(1, "location").str(2, location));
  if (offset >= 0) t.msg(13, Wire().str(1, "offset").str(2, std::to_string(offset)));
  if (length >= 0) t.msg(13, Wire().str(1, "length").str(2, std::to_string(length)));
  t.int_field(14, 1);
  return t;
}

std::vector<std::byte> model_with(const Wire& tensor) {
  Wire g;
  g.msg(1, testing::node("Relu", {"w"}, {"y"})).str(2, "g").msg(5, tensor);
  g.msg(12, testing::float_value_info("y", {4}));
  return testing::model(g).bytes();
}

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<float> data(8);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
    testing::write_file(dir_.path() / "weights.bin", std::as_bytes(std::span<const float>(data)));
  }
  std::string load_error(const Wire& tensor) {
    testing::write_file(dir_.path() / "m.onnx", model_with(tensor));
    try {
      onnx::load_file(dir_.path() / "m.onnx");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  testing::TempDir dir_;
};

TEST_F(ExternalData, IsAViewOfTheMappedFile) {
  testing::write_file(dir_.path() / "m.onnx",
                      model_with(external_tensor("weights.bin", 16, 16, 4)));
  auto m = onnx::load_file(dir_.path() / "m.onnx");
  const auto& t = m.graph().initializers[0];
  const auto b = onnx::tensor_bytes(t);
  EXPECT_TRUE(b.is_view());
  std::vector<float> v(4);
  std::memcpy(v.data(), b.bytes().data(), 16);
  EXPECT_EQ(v, (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(m.external_files().size(), 1u);
}

TEST_F(ExternalData, WriterInlinesItByDefault) {
  testing::write_file(dir_.path() / "m.onnx", model_with(external_tensor("weights.bin", 0, -1, 8)));
  auto m = onnx::load_file(dir_.path() / "m.onnx");
  const auto bytes = onnx::serialize_model(m.proto());
  auto back = onnx::load(onnx::ModelSource::borrow(bytes));  // no folder: must be self-contained
  EXPECT_TRUE(back.graph().initializers[0].has_raw_data);
  EXPECT_EQ(onnx::tensor_bytes(back.graph().initializers[0]).size(), 32u);
}

TEST_F(ExternalData, PathsCannotLeaveTheFolder) {
  EXPECT_NE(load_error(external_tensor("../weights.bin", 0, 16, 4)).find("relative path inside"),
            std::string::npos);
  EXPECT_NE(load_error(external_tensor("/etc/passwd", 0, 16, 4)).find("relative path inside"),
            std::string::npos);
  const auto outside = std::filesystem::temp_directory_path() / "footprint-outside.bin";
  testing::write_file(outside, std::vector<std::byte>(64));
  std::filesystem::create_symlink(outside, dir_.path() / "link.bin");
  EXPECT_NE(load_error(external_tensor("link.bin", 0, 16, 4)).find("resolves outside"),
            std::string::npos);
  std::filesystem::remove(outside);
}

TEST_F(ExternalData, OffsetAndLengthAreBoundsChecked) {
  EXPECT_NE(load_error(external_tensor("weights.bin", 40, 16, 4)).find("past the end"),
            std::string::npos);
  EXPECT_NE(load_error(external_tensor("weights.bin", 24, 16, 4)).find("runs past the end"),
            std::string::npos);
  EXPECT_NE(load_error(external_tensor("weights.bin", 0, 12, 4)).find("needs 16"),
            std::string::npos);
  EXPECT_NE(load_error(external_tensor("missing.bin", 0, 16, 4)).find("cannot open"),
            std::string::npos);
  Wire bad_offset = external_tensor("weights.bin", -1, 16, 4);
  bad_offset.msg(13, Wire().str(1, "offset").str(2, "12abc"));
  EXPECT_NE(load_error(bad_offset).find("not a non-negative integer"), std::string::npos);
}

TEST_F(ExternalData, BorrowedBytesWithoutAFolderCannotUseIt) {
  const auto bytes = model_with(external_tensor("weights.bin", 0, 16, 4));
  try {
    onnx::load(onnx::ModelSource::borrow(bytes, "mem"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not loaded from a folder"), std::string::npos);
  }
  auto m = onnx::load(onnx::ModelSource::borrow(bytes, "mem", dir_.path()));
  EXPECT_EQ(onnx::tensor_bytes(m.graph().initializers[0]).size(), 16u);
}

}  // namespace
}  // namespace footprint
