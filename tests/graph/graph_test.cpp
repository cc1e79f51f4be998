// Building the IR from a model: values, producers and consumers, subgraph captures, errors.
#include "footprint/graph/graph.hpp"

#include <gtest/gtest.h>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "graph/built_graph.hpp"
#include "tiny_cnn.hpp"

namespace footprint {
namespace {

using testing::Wire;

testing::BuiltGraph build(const Wire& g) {
  return testing::build_graph(g);
}

std::string build_error(const Wire& g) {
  try {
    build(g);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Graph, ExampleModelHasTheExpectedStructure) {
  const auto bytes = examples::make_tiny_cnn();
  auto m = onnx::load(onnx::ModelSource::borrow(bytes));
  auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
  ASSERT_EQ(g.nodes().size(), 6u);
  ASSERT_EQ(g.inputs().size(), 1u);
  ASSERT_EQ(g.initializers().size(), 4u);
  const graph::Value& x = g.value(g.inputs()[0]);
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.kind, graph::ValueKind::input);
  EXPECT_EQ(x.shape.to_string(), "[N,1,8,8]");
  EXPECT_EQ(x.consumers, (std::vector<graph::NodeId>{0}));
  const graph::Value& y = g.value(g.outputs()[0]);
  EXPECT_TRUE(y.is_graph_output);
  EXPECT_EQ(y.producer, 5);
  const graph::Node& conv = g.node(0);
  EXPECT_EQ(conv.op_type, "Conv");
  ASSERT_NE(conv.schema, nullptr);
  ASSERT_NE(conv.attribute("kernel_shape"), nullptr);
  EXPECT_EQ(conv.attribute("kernel_shape")->ints.count, 2u);
  EXPECT_EQ(g.node(3).schema->output_view_of, 0) << "Flatten is a view";
}

TEST(Graph, InitializersListedAsInputsStayWeights) {
  Wire g;
  g.msg(1, testing::node("Relu", {"w"}, {"y"}));
  g.msg(5, testing::float_tensor("w", {2}, {1, 2}));
  g.msg(11, testing::float_value_info("w", {2}));  // IR < 4 style
  g.msg(12, testing::float_value_info("y", {2}));
  auto l = build(g);
  EXPECT_TRUE(l.graph.inputs().empty());
  EXPECT_EQ(l.graph.value(*l.graph.find("w")).kind, graph::ValueKind::initializer);
}

TEST(Graph, UndefinedInputNamesTheNode) {
  Wire g;
  g.msg(1, testing::node("Relu", {"nowhere"}, {"y"}, "the_relu"));
  g.msg(12, testing::float_value_info("y", {2}));
  const std::string err = build_error(g);
  EXPECT_NE(err.find("node 'the_relu' (Relu) reads 'nowhere'"), std::string::npos) << err;
}

TEST(Graph, ValueWrittenTwiceNamesBothWriters) {
  Wire g;
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(1, testing::node("Relu", {"x"}, {"y"}, "first"));
  g.msg(1, testing::node("Neg", {"x"}, {"y"}, "second"));
  g.msg(12, testing::float_value_info("y", {2}));
  const std::string err = build_error(g);
  EXPECT_NE(err.find("node 'second' (Neg) writes 'y', which node 'first' (Relu) already defines"),
            std::string::npos)
      << err;
}

TEST(Graph, SubgraphsCaptureOuterValues) {
  Wire then_branch;
  then_branch.str(2, "then").msg(1, testing::node("Relu", {"outer"}, {"t"}));
  then_branch.msg(12, testing::float_value_info("t", {2}));
  Wire else_branch;
  else_branch.str(2, "else").msg(1, testing::node("Neg", {"outer"}, {"e"}));
  else_branch.msg(12, testing::float_value_info("e", {2}));
  Wire if_node = testing::node("If", {"cond"}, {"y"}, "branch");
  if_node.msg(5, Wire().str(1, "then_branch").msg(6, then_branch).int_field(20, 5));
  if_node.msg(5, Wire().str(1, "else_branch").msg(6, else_branch).int_field(20, 5));
  Wire g;
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(11, testing::float_value_info("cond", {}));
  g.msg(1, testing::node("Abs", {"x"}, {"outer"}, "abs"));
  g.msg(1, if_node);
  g.msg(12, testing::float_value_info("y", {2}));
  auto l = build(g);
  const graph::Graph& main = l.graph;
  const graph::Node& n = main.node(1);
  ASSERT_EQ(n.subgraphs.size(), 2u);
  const graph::ValueId outer = *main.find("outer");
  EXPECT_EQ(n.implicit_inputs, (std::vector<graph::ValueId>{outer}));
  EXPECT_EQ(main.value(outer).consumers, (std::vector<graph::NodeId>{1}));
  const graph::Graph& then_g = *n.subgraphs[0].graph;
  EXPECT_EQ(n.subgraphs[0].attribute, "then_branch");
  const graph::Value& captured = then_g.value(*then_g.find("outer"));
  EXPECT_EQ(captured.kind, graph::ValueKind::outer);
  EXPECT_EQ(captured.outer_value, outer);
  EXPECT_EQ(then_g.parent(), &main);
  // Moving the graph keeps the subgraphs pointing at it.
  graph::Graph moved = std::move(l.graph);
  EXPECT_EQ(moved.node(1).subgraphs[0].graph->parent(), &moved);
}

TEST(OpRegistry, KnowsViewsAndSubgraphOps) {
  const auto& r = graph::OpRegistry::builtin();
  for (const char* v : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    ASSERT_NE(r.find("", v), nullptr) << v;
    EXPECT_EQ(r.find("", v)->output_view_of, 0) << v;
  }
  EXPECT_TRUE(r.find("ai.onnx", "If")->has_subgraphs);
  // in_place is a kernel's promise: the graph layer's rows, which have no kernels, make none
  // (runtime::op_registry() declares it beside each kernel).
  EXPECT_FALSE(r.find("", "Relu")->in_place);
  EXPECT_EQ(r.find("", "Conv")->output_view_of, -1);
  EXPECT_EQ(r.find("com.example", "Relu"), nullptr) << "domains are distinct";
  EXPECT_EQ(r.find("", "NoSuchOp"), nullptr);
}

}  // namespace
}  // namespace footprint
