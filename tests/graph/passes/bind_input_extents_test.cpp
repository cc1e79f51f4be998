// Binding the inputs' extents before inference (graph::bind_input_extents): the exporter idioms
// that symbolic inference leaves unknown become concrete, as they are when the runtime prepares.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/bind_inputs.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "graph/infer_builder.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::attr_graph;
using testing::infer;
using testing::int64_tensor;
using testing::node;
using testing::node_with;
using testing::OneNode;
using testing::Wire;

TEST(BindInputExtents, SliceBoundsFromShapeBecomeConcrete) {
  // pos = position_ids[:, :seq], seq = Shape(x)[1]: BERT's position ids.
  OneNode g;
  g.input("x", DType::int64, {"batch", "seq"});
  g.initializer(int64_tensor("position_ids", {1, 16}, std::vector<int64_t>(16, 0)));
  g.initializer(int64_tensor("one", {1}, {1})).initializer(int64_tensor("zero", {1}, {0}));
  g.node(node("Shape", {"x"}, {"shape"}));
  g.node(node("Gather", {"shape", "one"}, {"seq"}));
  g.node(node("Slice", {"position_ids", "zero", "seq", "one"}, {"pos"}));
  g.output("pos");
  auto symbolic = infer(g.graph);
  EXPECT_EQ(symbolic->shape_of("pos"), "[1,<=16]")
      << "symbolically, the ends come from the data: at most the 16 positions";

  const DimBindings dims{{"batch", 2}, {"seq", 5}};
  auto bound = infer(g.graph, 18, &dims);
  EXPECT_EQ(bound->shape_of("x"), "[2,5]");
  EXPECT_EQ(bound->shape_of("pos"), "[1,5]");
}

TEST(BindInputExtents, ConcatenatedLengthsAndOutputOnlyNamesFollowTheInputs) {
  // present = Concat(past, new) along the sequence; the model names its length "total_seq",
  // which no input carries: it must come from the graph, never be defaulted.
  OneNode g;
  g.input("past", DType::float32, {"batch", 4, "past_len", 8});
  g.input("cur", DType::float32, {"batch", 4, "seq", 8});
  g.node(node_with("Concat", {"past", "cur"}, {"present"}, {attr("axis", 2)}));
  g.graph.msg(12, testing::tensor_info("present", DType::float32, {"batch", 4, "total_seq", 8}));
  const DimBindings dims{{"batch", 1}, {"past_len", 7}, {"seq", 3}};
  auto r = infer(g.graph, 18, &dims);
  EXPECT_EQ(r->shape_of("present"), "[1,4,10,8]");
}

// A graph loaded from wire bytes and not inferred yet (the model and its bytes kept alive).
struct Loaded {
  std::vector<std::byte> bytes;
  onnx::Model model;
  graph::Graph graph;
};

std::unique_ptr<Loaded> load(const Wire& g) {
  Wire m;
  m.int_field(1, 8).msg(7, g).msg(8, Wire().int_field(2, 18));
  auto bytes = m.bytes();
  auto model = onnx::load(onnx::ModelSource::borrow(bytes, "test.onnx"));
  auto l = std::unique_ptr<Loaded>(new Loaded{std::move(bytes), std::move(model), {}});
  l->graph = graph::Graph::from_onnx(l->model, graph::OpRegistry::builtin());
  return l;
}

TEST(BindInputExtents, UnboundNamesTakeOneAndAreReported) {
  OneNode g;
  g.input("x", DType::float32, {"N", "C"}).node(node("Relu", {"x"}, {"y"})).output("y");
  auto l = load(g.graph);
  graph::Graph& graph = l->graph;
  std::vector<std::string> defaulted;
  ASSERT_TRUE(graph::bind_input_extents(graph, {{"C", 3}}, defaulted));
  EXPECT_EQ(defaulted, std::vector<std::string>{"N"});
  EXPECT_EQ(graph.value(graph.inputs()[0]).shape.to_string(), "[1,3]");
}

TEST(BindInputExtents, AnUnnamedDynamicDimLeavesTheGraphAsItWas) {
  Wire shape;
  shape.msg(1, Wire().int_field(1, 2)).msg(1, Wire());  // [2, ?]: a dim with neither value nor name
  Wire tensor_type;
  tensor_type.int_field(1, static_cast<int64_t>(DType::float32)).msg(2, shape);
  Wire g;
  g.msg(11, Wire().str(1, "x").msg(2, Wire().msg(1, tensor_type)));
  g.msg(1, node("Relu", {"x"}, {"y"})).msg(12, testing::output("y"));
  auto l = load(g);
  graph::Graph& graph = l->graph;
  std::vector<std::string> defaulted;
  EXPECT_FALSE(graph::bind_input_extents(graph, {}, defaulted));
  EXPECT_EQ(graph.value(graph.inputs()[0]).shape.to_string(), "[2,?]");
}

// `--shape x=2x5` binds an input whose dims have no name, and its named dims elsewhere.
TEST(BindInputExtents, GivenShapesBindUnnamedDimsAndTheirNamesEverywhere) {
  Wire shape;
  shape.msg(1, Wire().str(2, "B")).msg(1, Wire());  // [B, ?]
  Wire tensor_type;
  tensor_type.int_field(1, static_cast<int64_t>(DType::float32)).msg(2, shape);
  Wire g;
  g.msg(11, Wire().str(1, "x").msg(2, Wire().msg(1, tensor_type)));
  g.msg(11, testing::tensor_info("m", DType::float32, {"B", 3}));
  g.msg(1, node("Relu", {"x"}, {"y"})).msg(12, testing::output("y"));
  auto l = load(g);
  graph::Graph& graph = l->graph;
  std::vector<std::string> defaulted;
  ASSERT_TRUE(graph::bind_input_extents(graph, {}, defaulted, {{"x", {2, 5}}}));
  EXPECT_TRUE(defaulted.empty());
  EXPECT_EQ(graph.value(graph.inputs()[0]).shape.to_string(), "[2,5]");
  EXPECT_EQ(graph.value(graph.inputs()[1]).shape.to_string(), "[2,3]") << "B from x's shape";
}

TEST(BindInputExtents, GivenShapesThatDisagreeAreUsageErrors) {
  OneNode g;
  g.input("x", DType::float32, {"N", 4}).node(node("Relu", {"x"}, {"y"})).output("y");
  auto message = [&](const DimBindings& dims, const graph::InputShapes& shapes) -> std::string {
    auto l = load(g.graph);
    std::vector<std::string> defaulted;
    try {
      graph::bind_input_extents(l->graph, dims, defaulted, shapes);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message({}, {{"z", {1, 4}}}), "--shape z: the graph has no input of that name");
  EXPECT_EQ(message({}, {{"x", {1}}}), "--shape x: the input has rank 2 ([N,4]), the shape 1");
  EXPECT_EQ(message({}, {{"x", {1, 5}}}), "--shape x: dim 1 is declared 4, not 5");
  EXPECT_EQ(message({{"N", 3}}, {{"x", {2, 4}}}), "--shape x: dim N is 2 here and 3 elsewhere");
  EXPECT_EQ(message({{"N", 2}}, {{"x", {2, 4}}}), "");
}

// The exporter's `If(dim(x, 0) == 1) then Squeeze(x, 0) else Identity(x)`: at batch 2 the then
// branch cannot type-check (axis 0 has extent 2), and it is not the branch that runs.
Wire squeeze_if_graph() {
  Wire then_branch;
  then_branch.str(2, "then");
  then_branch.msg(1, node("Squeeze", {"x", "axes0"}, {"t"})).msg(12, testing::output("t"));
  Wire else_branch;
  else_branch.str(2, "else");
  else_branch.msg(1, node("Identity", {"x"}, {"e"})).msg(12, testing::output("e"));
  OneNode g;
  g.input("x", DType::float32, {"batch", 6});
  g.initializer(int64_tensor("zero", {1}, {0})).initializer(int64_tensor("axes0", {1}, {0}));
  g.initializer(int64_tensor("one_s", {}, {1}));
  g.node(node("Shape", {"x"}, {"shape"}));
  g.node(node("Gather", {"shape", "zero"}, {"b"}));
  g.node(node("Squeeze", {"b"}, {"b_s"}));
  g.node(node("Equal", {"b_s", "one_s"}, {"cond"}));
  g.node(
      node_with("If", {"cond"}, {"y"},
                {attr_graph("then_branch", then_branch), attr_graph("else_branch", else_branch)}));
  g.output("y");
  return g.graph;
}

TEST(BindInputExtents, AnIfOnABoundDimTakesItsBranchAndSkipsTheOther) {
  const DimBindings two{{"batch", 2}};
  auto r2 = infer(squeeze_if_graph(), 18, &two);
  EXPECT_EQ(r2->shape_of("y"), "[2,6]");
  const DimBindings one{{"batch", 1}};
  auto r1 = infer(squeeze_if_graph(), 18, &one);
  EXPECT_EQ(r1->shape_of("y"), "[6]");
}

}  // namespace
}  // namespace footprint
