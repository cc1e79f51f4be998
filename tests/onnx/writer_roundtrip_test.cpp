// read -> write -> read gives back the same model, field by field, and the same graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/graph_export.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/writer.hpp"
#include "test_support.hpp"
#include "tiny_cnn.hpp"
#include "wire_builder.hpp"

namespace footprint {
namespace {

std::vector<uint64_t> values_of(const onnx::RepeatedScalar& r) {
  std::vector<uint64_t> out;
  r.for_each([&](uint64_t v) { out.push_back(v); });
  return out;
}

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

void expect_same_tensor(const onnx::TensorProto& a, const onnx::TensorProto& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.data_type, b.data_type);
  EXPECT_TRUE(std::equal(a.dims.begin(), a.dims.end(), b.dims.begin(), b.dims.end())) << a.name;
  EXPECT_TRUE(same_bytes(onnx::tensor_bytes(a).bytes(), onnx::tensor_bytes(b).bytes())) << a.name;
  ASSERT_EQ(a.string_data.size(), b.string_data.size());
  for (size_t i = 0; i < a.string_data.size(); ++i) EXPECT_EQ(a.string_data[i], b.string_data[i]);
  EXPECT_EQ(a.doc_string, b.doc_string);
}

void expect_same_graph(const onnx::GraphProto& a, const onnx::GraphProto& b);

void expect_same_attribute(const onnx::AttributeProto& a, const onnx::AttributeProto& b) {
  SCOPED_TRACE(std::string(a.name));
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.i, b.i);
  EXPECT_EQ(a.f, b.f);
  EXPECT_EQ(a.s, b.s);
  EXPECT_EQ(values_of(a.ints), values_of(b.ints));
  EXPECT_EQ(values_of(a.floats), values_of(b.floats));
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (size_t i = 0; i < a.strings.size(); ++i) EXPECT_EQ(a.strings[i], b.strings[i]);
  ASSERT_EQ(a.t == nullptr, b.t == nullptr);
  if (a.t != nullptr) expect_same_tensor(*a.t, *b.t);
  ASSERT_EQ(a.g == nullptr, b.g == nullptr);
  if (a.g != nullptr) expect_same_graph(*a.g, *b.g);
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (size_t i = 0; i < a.tensors().size(); ++i)
    expect_same_tensor(a.tensors()[i], b.tensors()[i]);
  ASSERT_EQ(a.graphs().size(), b.graphs().size());
  for (size_t i = 0; i < a.graphs().size(); ++i) expect_same_graph(a.graphs()[i], b.graphs()[i]);
}

void expect_same_value_infos(const onnx::Array<onnx::ValueInfoProto>& a,
                             const onnx::Array<onnx::ValueInfoProto>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    ASSERT_EQ(a[i].type == nullptr, b[i].type == nullptr);
    if (a[i].type == nullptr) continue;
    EXPECT_EQ(a[i].type->kind, b[i].type->kind);
    EXPECT_EQ(a[i].type->elem_type, b[i].type->elem_type);
    ASSERT_EQ(a[i].type->shape.size(), b[i].type->shape.size()) << a[i].name;
    for (size_t d = 0; d < a[i].type->shape.size(); ++d) {
      EXPECT_EQ(a[i].type->shape[d].value, b[i].type->shape[d].value);
      EXPECT_EQ(a[i].type->shape[d].param, b[i].type->shape[d].param);
    }
  }
}

void expect_same_graph(const onnx::GraphProto& a, const onnx::GraphProto& b) {
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const auto& na = a.nodes[i];
    const auto& nb = b.nodes[i];
    SCOPED_TRACE("node " + std::to_string(i) + " " + std::string(na.name));
    EXPECT_EQ(na.op_type, nb.op_type);
    EXPECT_EQ(na.name, nb.name);
    EXPECT_EQ(na.domain, nb.domain);
    ASSERT_EQ(na.inputs.size(), nb.inputs.size());
    for (size_t k = 0; k < na.inputs.size(); ++k) EXPECT_EQ(na.inputs[k], nb.inputs[k]);
    ASSERT_EQ(na.outputs.size(), nb.outputs.size());
    for (size_t k = 0; k < na.outputs.size(); ++k) EXPECT_EQ(na.outputs[k], nb.outputs[k]);
    ASSERT_EQ(na.attributes.size(), nb.attributes.size());
    for (size_t k = 0; k < na.attributes.size(); ++k) {
      expect_same_attribute(na.attributes[k], nb.attributes[k]);
    }
  }
  ASSERT_EQ(a.initializers.size(), b.initializers.size());
  for (size_t i = 0; i < a.initializers.size(); ++i) {
    expect_same_tensor(a.initializers[i], b.initializers[i]);
  }
  expect_same_value_infos(a.inputs, b.inputs);
  expect_same_value_infos(a.outputs, b.outputs);
  expect_same_value_infos(a.value_info, b.value_info);
}

void expect_round_trip(const onnx::Model& original) {
  const auto written = onnx::serialize_model(original.proto());
  EXPECT_EQ(written.size(), onnx::serialized_size(original.proto()));
  auto reread = onnx::load(onnx::ModelSource::borrow(written, "written"));
  EXPECT_EQ(reread.proto().ir_version, original.proto().ir_version);
  EXPECT_EQ(reread.proto().producer_name, original.proto().producer_name);
  ASSERT_EQ(reread.proto().opset_import.size(), original.proto().opset_import.size());
  expect_same_graph(original.graph(), reread.graph());
  // The writer is canonical: writing what it wrote changes nothing.
  EXPECT_TRUE(same_bytes(onnx::serialize_model(reread.proto()), written));
}

TEST(WriterRoundTrip, ExampleModel) {
  const auto bytes = examples::make_tiny_cnn();
  expect_round_trip(onnx::load(onnx::ModelSource::borrow(bytes)));
}

TEST(WriterRoundTrip, EverySharedModel) {
  FOOTPRINT_REQUIRE_SHARED();
  for (const auto& path : testing::shared_models()) {
    SCOPED_TRACE(path.string());
    expect_round_trip(onnx::load_file(path));
  }
}

void expect_same_ir(const graph::Graph& a, const graph::Graph& b) {
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  ASSERT_EQ(a.values().size(), b.values().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const auto& na = a.node(static_cast<graph::NodeId>(i));
    const auto& nb = b.node(static_cast<graph::NodeId>(i));
    EXPECT_EQ(na.op_type, nb.op_type);
    EXPECT_EQ(na.inputs, nb.inputs);
    EXPECT_EQ(na.outputs, nb.outputs);
    EXPECT_EQ(na.implicit_inputs, nb.implicit_inputs);
    ASSERT_EQ(na.subgraphs.size(), nb.subgraphs.size());
    for (size_t k = 0; k < na.subgraphs.size(); ++k) {
      expect_same_ir(*na.subgraphs[k].graph, *nb.subgraphs[k].graph);
    }
  }
  for (size_t i = 0; i < a.values().size(); ++i) {
    const auto& va = a.value(static_cast<graph::ValueId>(i));
    const auto& vb = b.value(static_cast<graph::ValueId>(i));
    EXPECT_EQ(va.name, vb.name);
    EXPECT_EQ(va.kind, vb.kind);
    EXPECT_EQ(va.dtype, vb.dtype) << va.name;
    EXPECT_EQ(va.shape, vb.shape) << va.name;
    EXPECT_EQ(va.consumers, vb.consumers) << va.name;
    EXPECT_EQ(va.is_graph_output, vb.is_graph_output);
  }
  EXPECT_EQ(a.inputs(), b.inputs());
  EXPECT_EQ(a.outputs(), b.outputs());
}

TEST(WriterRoundTrip, GraphExportGivesTheSameGraph) {
  std::vector<std::filesystem::path> paths = testing::shared_models();
  const auto example = examples::make_tiny_cnn();
  auto check = [](const onnx::Model& m) {
    const auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
    const auto exported = graph::export_onnx(g);
    const auto bytes = onnx::serialize_model(exported.proto());
    const auto reread = onnx::load(onnx::ModelSource::borrow(bytes));
    expect_same_ir(g, graph::Graph::from_onnx(reread, graph::OpRegistry::builtin()));
  };
  check(onnx::load(onnx::ModelSource::borrow(example)));
  for (const auto& path : paths) {
    SCOPED_TRACE(path.string());
    check(onnx::load_file(path));
  }
}

TEST(WriterRoundTrip, FileWriteIsAtomic) {
  testing::TempDir dir;
  const auto path = dir.path() / "out.onnx";
  const auto bytes = examples::make_tiny_cnn();
  const auto m = onnx::load(onnx::ModelSource::borrow(bytes));
  onnx::write_model_file(m.proto(), path);
  EXPECT_TRUE(same_bytes(testing::read_file(path), onnx::serialize_model(m.proto())));
  // A write that fails midway leaves the existing file as it was and no temporary behind.
  EXPECT_THROW(onnx::write_file_atomically(path,
                                           [](std::ostream& out) {
                                             out << "partial";
                                             throw Error("boom");
                                           }),
               Error);
  EXPECT_TRUE(same_bytes(testing::read_file(path), onnx::serialize_model(m.proto())));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace footprint

namespace footprint {
namespace {

// Before IR version 4 initializers had to be graph inputs too; runtimes reject an IR 3 model
// whose initializers are not (onnxruntime: "Graph ctor should have created NodeArg").
TEST(WriterRoundTrip, IrThreeExportListsInitializersAsInputs) {
  testing::Wire g;
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(5, testing::float_tensor("w", {2}, {1, 2}));
  g.msg(5, testing::float_tensor("unused", {1}, {3}));
  g.msg(1, testing::node("Add", {"x", "w"}, {"y"}));
  g.msg(12, testing::float_value_info("y", {2}));
  testing::Wire m;
  m.int_field(1, 3).msg(7, g).msg(8, testing::Wire().int_field(2, 9));
  const auto bytes = m.bytes();
  const auto model = onnx::load(onnx::ModelSource::borrow(bytes));
  const auto exported =
      graph::export_onnx(graph::Graph::from_onnx(model, graph::OpRegistry::builtin()));
  const auto& inputs = exported.proto().graph->inputs;
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[0].name, "x");
  EXPECT_EQ(inputs[1].name, "w");
  EXPECT_EQ(inputs[2].name, "unused");
  // From IR version 4 on they are not.
  testing::Wire m8 = testing::model(g);
  const auto bytes8 = m8.bytes();
  const auto model8 = onnx::load(onnx::ModelSource::borrow(bytes8));
  EXPECT_EQ(graph::export_onnx(graph::Graph::from_onnx(model8, graph::OpRegistry::builtin()))
                .proto()
                .graph->inputs.size(),
            1u);
}

}  // namespace
}  // namespace footprint
