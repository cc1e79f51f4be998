// One way to open a model: load_model chooses the reader by the bytes (ONNX today, a TensorFlow
// Lite FlatBuffer refused by name), and Graph::opset is the one answer to "which opset".
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "onnx/wire_builder.hpp"
#include "test_support.hpp"
#include "tiny_cnn.hpp"

namespace footprint {
namespace {

using testing::Wire;

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The first bytes of a .tflite file: the root table's offset, then the identifier.
std::vector<std::byte> tflite_header() {
  std::vector<std::byte> bytes(64, std::byte{0});
  bytes[0] = std::byte{0x1c};
  std::memcpy(bytes.data() + 4, "TFL3", 4);
  return bytes;
}

TEST(LoadModel, ReadsAnOnnxFileMapped) {
  testing::TempDir dir;
  const auto path = dir.path() / "tiny.onnx";
  testing::write_file(path, examples::make_tiny_cnn());
  const graph::Model model = graph::load_model(path);
  EXPECT_TRUE(model.source().is_mapped());
  EXPECT_EQ(model.source().name(), path.string());
  EXPECT_EQ(model.files(), std::vector<std::filesystem::path>{path});
  const graph::Graph g = model.graph(graph::OpRegistry::builtin());
  EXPECT_EQ(g.nodes().size(), 6u);
  EXPECT_EQ(g.model(), &model.onnx());
}

TEST(LoadModel, ReadsBorrowedBytesInPlace) {
  const auto bytes = examples::make_tiny_cnn();
  const graph::Model model = graph::load_model(onnx::ModelSource::borrow(bytes, "tiny"));
  EXPECT_FALSE(model.source().is_mapped());
  EXPECT_EQ(model.source().bytes().data(), bytes.data());
  EXPECT_EQ(model.graph(graph::OpRegistry::builtin()).nodes().size(), 6u);
}

TEST(LoadModel, RefusesTfliteByNameNotAsAProtobufError) {
  const auto bytes = tflite_header();
  EXPECT_EQ(
      error_of([&] { (void)graph::load_model(onnx::ModelSource::borrow(bytes, "m.tflite")); }),
      "m.tflite: a TensorFlow Lite model (FlatBuffer \"TFL3\"): not supported yet, "
      "footprint reads ONNX models");
  testing::TempDir dir;
  const auto path = dir.path() / "model.onnx";  // the bytes decide, not the name
  testing::write_file(path, bytes);
  EXPECT_EQ(error_of([&] { (void)graph::load_model(path); }),
            path.string() +
                ": a TensorFlow Lite model (FlatBuffer \"TFL3\"): not supported yet, footprint "
                "reads ONNX models");
}

TEST(LoadModel, GarbageFailsAsTheOnnxReaderSays) {
  std::vector<std::byte> garbage(64, std::byte{0xff});
  std::memcpy(garbage.data() + 4, "TFL3", 4);  // the identifier, but no FlatBuffer's root offset
  for (const auto& bytes : {garbage, std::vector<std::byte>(16, std::byte{0xff})}) {
    const std::string expected =
        error_of([&] { (void)onnx::load(onnx::ModelSource::borrow(bytes, "junk.onnx")); });
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(
        error_of([&] { (void)graph::load_model(onnx::ModelSource::borrow(bytes, "junk.onnx")); }),
        expected);
  }
}

// ModelProto{ir 8, imports, one Relu in domain `domain`}.
graph::Model model_importing(const std::vector<std::pair<std::string, int64_t>>& imports,
                             std::vector<std::byte>& bytes) {
  Wire g;
  g.msg(1, testing::node("Relu", {"x"}, {"y"}));
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(12, testing::float_value_info("y", {2}));
  Wire m;
  m.int_field(1, 8);
  m.msg(7, g);
  for (const auto& [domain, version] : imports)
    m.msg(8, Wire().str(1, domain).int_field(2, version));
  bytes = m.bytes();
  return graph::load_model(onnx::ModelSource::borrow(bytes, "opsets.onnx"));
}

TEST(GraphOpset, TheModelsImportWithOneFallback) {
  std::vector<std::byte> bytes;
  const graph::Model model = model_importing({{"", 11}, {"com.microsoft", 1}}, bytes);
  const graph::Graph g = model.graph(graph::OpRegistry::builtin());
  EXPECT_EQ(g.opset(""), 11);
  EXPECT_EQ(g.opset("ai.onnx"), 11) << "the default domain by either name";
  EXPECT_EQ(g.opset("com.microsoft"), 1);
  EXPECT_EQ(g.opset("ai.onnx.ml"), graph::kNewestOpset) << "a domain the model does not import";
}

TEST(GraphOpset, AModelWithoutADefaultImportIsReadAtTheNewest) {
  std::vector<std::byte> bytes;
  const graph::Model model = model_importing({{"com.microsoft", 1}}, bytes);
  EXPECT_EQ(model.graph(graph::OpRegistry::builtin()).opset(""), graph::kNewestOpset);
  EXPECT_EQ(graph::Graph().opset(""), graph::kNewestOpset) << "a graph built without a model";
}

}  // namespace
}  // namespace footprint
