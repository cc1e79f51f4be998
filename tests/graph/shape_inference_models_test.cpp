// Shape inference on every model in ../shared/models: every value (subgraphs that can run
// included) ends with a known dtype and a ranked shape, no op is left without inference, the
// light models' ConstantOfShape weights are static constants, and the dynamic models keep their
// symbols.
#include <gtest/gtest.h>

#include <functional>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

// Calls f(graph, value) for every value of g and of the subgraphs that can run (the untaken
// branch of an If whose condition is known is never inferred: graph::subgraph_runs).
void for_each_value(const graph::Graph& g,
                    const std::function<void(const graph::Graph&, const graph::Value&)>& f) {
  for (const graph::Value& v : g.values()) f(g, v);
  for (const graph::Node& n : g.nodes()) {
    for (size_t i = 0; i < n.subgraphs.size(); ++i) {
      if (graph::subgraph_runs(g, n, i)) for_each_value(*n.subgraphs[i].graph, f);
    }
  }
}

const graph::Value& named(const graph::Graph& g, std::string_view name) {
  const auto id = g.find(name);
  if (!id) throw std::runtime_error("no value " + std::string(name));
  return g.value(*id);
}

const graph::Node& first_node(const graph::Graph& g, std::string_view op) {
  for (const graph::Node& n : g.nodes()) {
    if (n.op_type == op) return n;
  }
  throw std::runtime_error("no " + std::string(op) + " node");
}

TEST(ShapeInferenceModels, EveryValueOfEveryModelHasADtypeAndARank) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto models = testing::shared_models();
  ASSERT_GE(models.size(), 15u);
  for (const auto& path : models) {
    SCOPED_TRACE(path.string());
    const auto m = onnx::load_file(path);
    auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
    const graph::ShapeInferenceReport report = graph::infer_shapes(g);
    EXPECT_TRUE(report.ops_without_inference.empty()) << report.ops_without_inference.front();
    EXPECT_TRUE(report.warnings.empty()) << report.warnings.front();
    size_t values = 0;
    for_each_value(g, [&](const graph::Graph& owner, const graph::Value& v) {
      ++values;
      EXPECT_NE(v.dtype, DType::undefined) << owner.name() << ": " << v.name;
      EXPECT_TRUE(v.shape.ranked) << owner.name() << ": " << v.name;
    });
    EXPECT_GT(values, g.nodes().size());
  }
}

TEST(ShapeInferenceModels, LightModelWeightsAreStaticConstants) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto path = testing::shared_dir() / "models/light/vgg19/model.onnx";
  const auto m = onnx::load_file(path);
  auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
  graph::infer_shapes(g);
  size_t weights = 0;
  for (const graph::Node& n : g.nodes()) {
    if (n.op_type != "ConstantOfShape") continue;
    const graph::Value& w = g.value(n.outputs[0]);
    ++weights;
    EXPECT_TRUE(w.constant) << w.name;
    EXPECT_TRUE(w.shape.is_static()) << w.name << " " << w.shape.to_string();
    EXPECT_EQ(w.dtype, DType::float32) << w.name;
  }
  EXPECT_EQ(weights, 36u);
  // The first fully connected layer's weight: 4096 x 25088 floats, never materialised.
  const graph::Value& fc6 = g.value(first_node(g, "Gemm").inputs[1]);
  EXPECT_EQ(fc6.shape.to_string(), "[4096,25088]");
  EXPECT_TRUE(fc6.constant);
  EXPECT_FALSE(fc6.known.has_value()) << "a 392 MiB weight is never held as a value";
  // Activations are not constants.
  const graph::Value& out = g.value(g.outputs()[0]);
  EXPECT_FALSE(out.constant);
  EXPECT_EQ(out.shape.to_string(), "[1,1000]");
}

TEST(ShapeInferenceModels, PpocrKeepsTheDynamicBatch) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto path = testing::shared_dir() / "models/real/ppocr_mobile_v2_cls/model.onnx";
  const auto m = onnx::load_file(path);
  auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
  graph::infer_shapes(g);
  const graph::Value& x = g.value(g.inputs()[0]);
  const std::string n = x.shape.dims[0].to_string();
  EXPECT_EQ(x.shape.to_string(), "[" + n + ",3," + x.shape.dims[2].to_string() + "," +
                                     x.shape.dims[3].to_string() + "]");
  const graph::Value& y = g.value(g.outputs()[0]);
  ASSERT_EQ(y.shape.rank(), 2u);
  EXPECT_EQ(y.shape.dims[0].to_string(), n);
  EXPECT_EQ(y.shape.dims[1].value(), 2);
  EXPECT_EQ(y.dtype, DType::float32);
  // Binding the dims gives concrete sizes everywhere.
  const DimBindings bound{
      {n, 4}, {x.shape.dims[2].to_string(), 48}, {x.shape.dims[3].to_string(), 192}};
  for (const graph::Value& v : g.values()) {
    EXPECT_TRUE(v.shape.numel(bound).has_value()) << v.name << " " << v.shape.to_string();
  }
}

TEST(ShapeInferenceModels, SileroInfersItsBranchesAndLstm) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto path = testing::shared_dir() / "models/real/silero_vad_legacy/model.onnx";
  const auto m = onnx::load_file(path);
  auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
  const auto report = graph::infer_shapes(g);
  EXPECT_GT(report.nodes_inferred, 200u) << "the If branches were inferred";
  EXPECT_EQ(named(g, "output").shape.to_string(), "[batch,1]");
  EXPECT_EQ(named(g, "hn").shape.to_string(), "[2,batch,64]");
  size_t lstms = 0;
  for_each_value(g, [&](const graph::Graph& owner, const graph::Value& v) {
    if (v.producer < 0 || owner.node(v.producer).op_type != "LSTM") return;
    ++lstms;
    EXPECT_TRUE(v.shape.ranked) << v.name;
  });
  EXPECT_GT(lstms, 0u);
}

}  // namespace
}  // namespace footprint
