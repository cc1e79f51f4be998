// The shape inference pass: how inferred types merge with declared ones, what counts as a
// compile-time constant, what is reported, and how subgraphs see their enclosing graph.
#include "footprint/graph/shape_inference.hpp"

#include <gtest/gtest.h>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "graph/infer_builder.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::attr_graph;
using testing::attr_tensor;
using testing::infer;
using testing::infer_error;
using testing::int64_tensor;
using testing::node;
using testing::node_with;
using testing::OneNode;
using testing::tensor_info;
using testing::Wire;

TEST(ShapeInference, GraphInputsKeepTheirDeclaredSymbols) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, "H", "W"}).node(node("Relu", {"x"}, {"y"})).output("y");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("x"), "float[N,3,H,W]");
  EXPECT_EQ(r->type_of("y"), "float[N,3,H,W]");
  EXPECT_EQ(r->report.nodes_inferred, 1u);
  EXPECT_TRUE(r->report.warnings.empty());
}

TEST(ShapeInference, ADeclaredConcreteDimWinsOverAnInferredSymbol) {
  OneNode g;
  g.input("x", DType::float32, {"N", 8}).node(node("Relu", {"x"}, {"y"}));
  g.graph.msg(12, tensor_info("y", DType::float32, {1, 8}));
  EXPECT_EQ(infer(g.graph)->type_of("y"), "float[1,8]");
}

TEST(ShapeInference, AnInferredExpressionWinsOverADeclaredNameOrUnknown) {
  OneNode g;
  g.input("x", DType::float32, {"N", 8}).node(node("Flatten", {"x"}, {"y"}));
  g.node(node("Relu", {"y"}, {"z"}));
  g.graph.msg(13, tensor_info("y", DType::float32, {"M", "K"}));  // value_info
  g.output("z");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float[N,8]");
  EXPECT_EQ(r->type_of("z"), "float[N,8]");
}

TEST(ShapeInference, ContradictingConcreteDimsAreAnErrorNamingTheNode) {
  OneNode g;
  g.input("x", DType::float32, {2, 8}).node(node("Relu", {"x"}, {"y"}, "act"));
  g.graph.msg(12, tensor_info("y", DType::float32, {2, 9}));
  const std::string err = infer_error(g.graph);
  EXPECT_NE(err.find("node 'act' (Relu)"), std::string::npos) << err;
  EXPECT_NE(err.find("declared [2,9] but inferred [2,8]"), std::string::npos) << err;
}

TEST(ShapeInference, ContradictingDtypesAreAnError) {
  OneNode g;
  g.input("x", DType::float32, {2}).node(node("Relu", {"x"}, {"y"}, "act"));
  g.graph.msg(12, tensor_info("y", DType::int64, {2}));
  const std::string err = infer_error(g.graph);
  EXPECT_NE(err.find("declared int64 but inferred float"), std::string::npos) << err;
}

TEST(ShapeInference, AHookFailureNamesTheNode) {
  OneNode g;
  g.input("a", DType::float32, {2, 3}).input("b", DType::float32, {4, 3});
  g.node(node("Add", {"a", "b"}, {"c"}, "sum")).output("c");
  const std::string err = infer_error(g.graph);
  EXPECT_EQ(err.rfind("test.onnx: offset ", 0), 0u) << err;
  EXPECT_NE(err.find("graph '': node 'sum' (Add): dims 2 and 4 do not broadcast"),
            std::string::npos)
      << err;
}

TEST(ShapeInference, AHookFailureCanBeAWarningInstead) {
  OneNode g;
  g.input("a", DType::float32, {2, 3}).input("b", DType::float32, {4, 3});
  g.node(node("Add", {"a", "b"}, {"c"}, "sum")).output("c");
  Wire m;
  m.int_field(1, 8).msg(7, g.graph).msg(8, Wire().int_field(2, 18));
  const auto bytes = m.bytes();
  const auto model = onnx::load(onnx::ModelSource::borrow(bytes));
  auto graph = graph::Graph::from_onnx(model, graph::OpRegistry::builtin());
  graph::ShapeInferenceOptions options;
  options.errors_as_warnings = true;
  const auto report = graph::infer_shapes(graph, options);
  ASSERT_EQ(report.node_warnings.size(), 1u);
  EXPECT_EQ(report.node_warnings[0].op, "Add");
  EXPECT_EQ(report.node_warnings[0].message, "dims 2 and 4 do not broadcast");
  EXPECT_EQ(report.warnings[0], "graph '': node 'sum' (Add): dims 2 and 4 do not broadcast");
  EXPECT_FALSE(graph.value(*graph.find("c")).shape.ranked);
}

TEST(ShapeInference, UnknownOpsKeepDeclaredTypesAndAreReported) {
  OneNode g;
  g.input("x", DType::float32, {2, 3});
  Wire custom = node("Frobnicate", {"x"}, {"y"}, "f");
  custom.str(7, "com.example");
  g.node(custom).node(node("Relu", {"y"}, {"z"})).output("z");
  g.graph.msg(13, tensor_info("y", DType::float16, {5}));
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float16[5]") << "declared type kept";
  EXPECT_EQ(r->type_of("z"), "float16[5]") << "and inference goes on from it";
  EXPECT_EQ(r->report.ops_without_inference, std::vector<std::string>{"com.example::Frobnicate"});
  ASSERT_EQ(r->report.warnings.size(), 1u);
  EXPECT_NE(r->report.warnings[0].find("node 'f' (Frobnicate)"), std::string::npos)
      << r->report.warnings[0];
}

TEST(ShapeInference, ConstantOfShapeOfAConstantIsAConstantHeldOnlyWhenSmall) {
  OneNode g;
  g.input("x", DType::float32, {"N", 4096});
  g.node(node_with("Constant", {}, {"big_shape"},
                   {attr_tensor("value", int64_tensor("", {2}, {4096, 4096}))}));
  g.node(node("ConstantOfShape", {"big_shape"}, {"w"}));
  g.node(
      node_with("Constant", {}, {"small_shape"}, {attr("value_ints", std::vector<int64_t>{2, 2})}));
  g.node(node("ConstantOfShape", {"small_shape"}, {"b"}));
  g.node(node("MatMul", {"x", "w"}, {"y"})).output("y").output("b");
  auto r = infer(g.graph);
  const graph::Value& w = r->value("w");
  EXPECT_EQ(r->type_of("w"), "float[4096,4096]");
  EXPECT_TRUE(w.constant);
  EXPECT_FALSE(w.known.has_value()) << "64 MiB of zeros are never materialised";
  EXPECT_TRUE(r->value("b").constant);
  EXPECT_EQ(r->known_of("b"), "0,0,0,0");
  EXPECT_TRUE(r->value("big_shape").constant);
  EXPECT_EQ(r->known_of("big_shape"), "4096,4096");
  EXPECT_FALSE(r->value("y").constant);
  EXPECT_EQ(r->type_of("y"), "float[N,4096]");
}

TEST(ShapeInference, ShapeOfAStaticTensorIsConstantAndOfADynamicOneIsKnownSymbolically) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3}).input("s", DType::float32, {2, 3});
  g.node(node("Shape", {"x"}, {"dyn"})).node(node("Shape", {"s"}, {"fixed"}));
  g.output("dyn").output("fixed");
  auto r = infer(g.graph);
  EXPECT_EQ(r->known_of("dyn"), "N,3");
  EXPECT_FALSE(r->value("dyn").constant) << "N is only known when running";
  EXPECT_EQ(r->known_of("fixed"), "2,3");
  EXPECT_TRUE(r->value("fixed").constant);
}

TEST(ShapeInference, SmallIntegerInitializersAreKnownConstants) {
  OneNode g;
  g.input("x", DType::float32, {2, 3, 4}).initializer(int64_tensor("shape", {2}, {6, -1}));
  g.node(node("Reshape", {"x", "shape"}, {"y"})).output("y");
  auto r = infer(g.graph);
  EXPECT_TRUE(r->value("shape").constant);
  EXPECT_EQ(r->known_of("shape"), "6,-1");
  EXPECT_EQ(r->type_of("y"), "float[6,4]");
}

TEST(ShapeInference, RandomOpsAreNeverConstants) {
  OneNode g;
  g.node(node_with("RandomNormal", {}, {"r"}, {attr("shape", std::vector<int64_t>{2, 2})}));
  g.output("r");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("r"), "float[2,2]");
  EXPECT_FALSE(r->value("r").constant);
}

graph::NodeId first_node(const graph::Graph& g, std::string_view op) {
  for (graph::NodeId i = 0; i < static_cast<graph::NodeId>(g.nodes().size()); ++i) {
    if (g.node(i).op_type == op) return i;
  }
  throw std::runtime_error("no " + std::string(op) + " node");
}

// y = If(cond) { Relu(outer) } else { Transpose(outer) }, outer = Abs(x) with x [N, 4, 2];
// `cond_node` produces cond.
Wire if_graph(const Wire& cond_node) {
  Wire then_branch;
  then_branch.str(2, "then").msg(1, node("Relu", {"outer"}, {"t"})).msg(12, testing::output("t"));
  Wire else_branch;
  else_branch.str(2, "else");
  else_branch.msg(
      1, node_with("Transpose", {"outer"}, {"e"}, {attr("perm", std::vector<int64_t>{0, 2, 1})}));
  else_branch.msg(12, testing::output("e"));
  OneNode g;
  g.input("x", DType::float32, {"N", 4, 2}).input("flag", DType::boolean, {});
  g.node(cond_node).node(node("Abs", {"x"}, {"outer"}));
  g.node(
      node_with("If", {"cond"}, {"y"},
                {attr_graph("then_branch", then_branch), attr_graph("else_branch", else_branch)}));
  g.output("y");
  return g.graph;
}

TEST(ShapeInference, IfMergesItsBranchesEqualDimsStayOthersAreAtMostTheLarger) {
  auto r = infer(if_graph(node("Identity", {"flag"}, {"cond"})));
  EXPECT_EQ(r->type_of("y"), "float[N,<=4,<=4]") << "[N,4,2] or [N,2,4], by a runtime flag";
  // The branches themselves were inferred with the outer value visible.
  const graph::Node& n = r->graph.node(first_node(r->graph, "If"));
  const graph::Graph& then_g = *n.subgraphs[0].graph;
  const graph::Graph& else_g = *n.subgraphs[1].graph;
  EXPECT_EQ(then_g.value(*then_g.find("t")).shape.to_string(), "[N,4,2]");
  EXPECT_EQ(else_g.value(*else_g.find("e")).shape.to_string(), "[N,2,4]");
  EXPECT_EQ(r->report.nodes_inferred, 5u) << "Identity, Abs, If and one node per branch";
}

TEST(ShapeInference, IfWithAKnownConditionTakesThatBranch) {
  auto then_r = infer(if_graph(node_with(
      "Constant", {}, {"cond"},
      {attr_tensor("value", testing::raw_tensor<uint8_t>("", DType::boolean, {}, {1}))})));
  EXPECT_EQ(then_r->type_of("y"), "float[N,4,2]");
  auto else_r = infer(if_graph(node_with(
      "Constant", {}, {"cond"},
      {attr_tensor("value", testing::raw_tensor<uint8_t>("", DType::boolean, {}, {0}))})));
  EXPECT_EQ(else_r->type_of("y"), "float[N,2,4]");
}

TEST(ShapeInference, AnIfBranchDeclarationInferenceContradictsIsAWarningAndInferenceWins) {
  // The then-branch declares its Relu's output [7, 7] and int64 (what an exporter might have
  // traced for other inputs); inference says float [N, 4, 2]. Outside a branch that is an error
  // (ContradictingConcreteDimsAreAnErrorNamingTheNode); in one, a warning naming both.
  for (const bool taken : {false, true}) {
    Wire then_branch;
    then_branch.str(2, "then").msg(1, node("Relu", {"outer"}, {"t"}, "act"));
    then_branch.msg(12, testing::output("t")).msg(13, tensor_info("t", DType::int64, {7, 7}));
    Wire else_branch;
    else_branch.str(2, "else").msg(1, node("Neg", {"outer"}, {"e"})).msg(12, testing::output("e"));
    OneNode g;
    g.input("x", DType::float32, {"N", 4, 2});
    g.node(node_with("Constant", {}, {"cond"},
                     {attr_tensor("value", testing::raw_tensor<uint8_t>(
                                               "", DType::boolean, {},
                                               {static_cast<uint8_t>(taken ? 1 : 0)}))}));
    g.node(node("Abs", {"x"}, {"outer"}));
    g.node(node_with(
        "If", {"cond"}, {"y"},
        {attr_graph("then_branch", then_branch), attr_graph("else_branch", else_branch)}));
    g.output("y");
    auto r = infer(g.graph);
    const graph::Node& n = r->graph.node(first_node(r->graph, "If"));
    const graph::Graph& then_g = *n.subgraphs[0].graph;
    const graph::Value& t = then_g.value(*then_g.find("t"));
    if (taken) {
      EXPECT_EQ(t.shape.to_string(), "[N,4,2]");
      EXPECT_EQ(t.dtype, DType::float32);
      EXPECT_EQ(r->type_of("y"), "float[N,4,2]");
      ASSERT_FALSE(r->report.warnings.empty());
      const std::string& w = r->report.warnings.front();
      EXPECT_NE(w.find("node 'act' (Relu)"), std::string::npos) << w;
      EXPECT_NE(w.find("value 't' is declared int64 but inferred float"), std::string::npos) << w;
      EXPECT_NE(w.find("inference's type is used (an If branch)"), std::string::npos) << w;
    } else {
      EXPECT_EQ(r->type_of("y"), "float[N,4,2]") << "the else branch, Neg";
    }
  }
}

// v_final, scan = Loop(M = 3, no condition, v0 [2]) with body (i, c, v) -> (c, op(v), Identity(v)).
Wire loop_graph(const Wire& body_node) {
  Wire body;
  body.str(2, "body");
  body.msg(11, testing::output("i")).msg(11, testing::output("c")).msg(11, testing::output("v"));
  body.msg(1, node("Identity", {"c"}, {"c_out"})).msg(1, body_node);
  body.msg(1, node("Identity", {"v"}, {"scan"}));
  body.msg(12, testing::output("c_out")).msg(12, testing::output("v_out"));
  body.msg(12, testing::output("scan"));
  OneNode g;
  g.input("v0", DType::float32, {2}).initializer(int64_tensor("M", {}, {3}));
  g.node(node_with("Loop", {"M", "", "v0"}, {"v_final", "scans"}, {attr_graph("body", body)}));
  g.output("v_final").output("scans");
  return g.graph;
}

TEST(ShapeInference, LoopCarriesTypesThroughItsBodyAndStacksScanOutputs) {
  auto r = infer(loop_graph(node("Add", {"v", "v"}, {"v_out"})));
  EXPECT_EQ(r->type_of("v_final"), "float[2]");
  EXPECT_EQ(r->type_of("scans"), "float[3,2]") << "exactly M iterations without a condition";
}

TEST(ShapeInference, LoopWidensACarriedShapeTheBodyChanges) {
  auto r =
      infer(loop_graph(node_with("Concat", {"v", "v"}, {"v_out"}, {attr("axis", int64_t{0})})));
  EXPECT_EQ(r->type_of("v_final"), "float[?]");
  EXPECT_EQ(r->type_of("scans"), "float[3,?]");
  // The body was inferred again with the widened type: its values say [?], not [2].
  const graph::Node& n = r->graph.node(first_node(r->graph, "Loop"));
  const graph::Graph& body = *n.subgraphs[0].graph;
  EXPECT_EQ(body.value(*body.find("v_out")).shape.to_string(), "[?]");
}

}  // namespace
}  // namespace footprint
