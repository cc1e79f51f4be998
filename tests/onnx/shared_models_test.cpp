// Every model in ../shared/models loads, builds a graph with a valid order, and its test
// inputs and outputs read as tensors that match the graph's interface.
#include <gtest/gtest.h>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/topo_order.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/tensor_file.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

TEST(SharedModels, EveryModelLoadsWithAValidOrder) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto models = testing::shared_models();
  ASSERT_GE(models.size(), 15u);
  for (const auto& path : models) {
    SCOPED_TRACE(path.string());
    auto m = onnx::load_file(path);
    auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
    EXPECT_GT(g.nodes().size(), 0u);
    EXPECT_GT(g.inputs().size(), 0u);
    EXPECT_GT(g.outputs().size(), 0u);
    const auto order = graph::topo_order(g);
    EXPECT_TRUE(graph::is_topological(g, order));
    for (graph::ValueId id : g.initializers()) {
      const auto& t = *g.value(id).initializer;
      EXPECT_EQ(onnx::tensor_bytes(t).size(), onnx::tensor_storage_bytes(t)) << t.name;
    }
  }
}

TEST(SharedModels, TestDataMatchesTheGraphInterface) {
  FOOTPRINT_REQUIRE_SHARED();
  for (const auto& path : testing::shared_models()) {
    SCOPED_TRACE(path.string());
    auto m = onnx::load_file(path);
    auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
    size_t inputs = 0;
    for (;
         std::filesystem::exists(path.parent_path() / ("input_" + std::to_string(inputs) + ".pb"));
         ++inputs) {
      auto t = onnx::TensorFile::load_file(path.parent_path() /
                                           ("input_" + std::to_string(inputs) + ".pb"));
      ASSERT_LT(inputs, g.inputs().size());
      const graph::Value& in = g.value(g.inputs()[inputs]);
      EXPECT_EQ(t.tensor().name, in.name);
      EXPECT_EQ(t.tensor().data_type, static_cast<int32_t>(in.dtype));
      EXPECT_EQ(t.tensor().dims.size(), in.shape.dims.size());
      EXPECT_EQ(onnx::tensor_bytes(t.tensor()).size(), onnx::tensor_storage_bytes(t.tensor()));
    }
    EXPECT_EQ(inputs, g.inputs().size());
    auto out0 = onnx::TensorFile::load_file(path.parent_path() / "output_0.pb");
    EXPECT_EQ(out0.tensor().data_type, static_cast<int32_t>(g.value(g.outputs()[0]).dtype));
  }
}

TEST(SharedModels, SubgraphsOfSileroAreRead) {
  FOOTPRINT_REQUIRE_SHARED();
  auto m = onnx::load_file(testing::shared_dir() / "models/real/silero_vad_legacy/model.onnx");
  auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
  size_t ifs = 0;
  for (const graph::Node& n : g.nodes()) {
    if (n.op_type != "If") continue;
    ++ifs;
    ASSERT_EQ(n.subgraphs.size(), 2u);
    for (const auto& s : n.subgraphs) {
      EXPECT_EQ(s.graph->parent(), &g);
      EXPECT_GT(s.graph->nodes().size(), 0u);
    }
  }
  EXPECT_GT(ifs, 0u);
  EXPECT_GT(g.subgraph_count(), 0u);
}

}  // namespace
}  // namespace footprint
