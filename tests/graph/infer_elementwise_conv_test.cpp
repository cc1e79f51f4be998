// Inference for elementwise ops (broadcasting, comparisons, Where, Cast, computed known values)
// and sliding-window ops (Conv, ConvTranspose, pools with auto_pad, dilations, strides,
// ceil_mode), concrete and symbolic.
#include <gtest/gtest.h>

#include "footprint/graph/ops/conv_window.hpp"
#include "graph/infer_builder.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::infer;
using testing::infer_error;
using testing::int64_tensor;
using testing::node;
using testing::node_with;
using testing::OneNode;
using testing::Wire;
using Ints = std::vector<int64_t>;

std::string binary(std::string_view op, const std::vector<testing::DimSpec>& a,
                   const std::vector<testing::DimSpec>& b) {
  OneNode g;
  g.input("a", DType::float32, a).input("b", DType::float32, b);
  g.node(node(op, {"a", "b"}, {"c"})).output("c");
  return infer(g.graph)->type_of("c");
}

TEST(InferElementwise, BinaryOpsBroadcastNumpyStyle) {
  EXPECT_EQ(binary("Add", {2, 3, 4}, {4}), "float[2,3,4]");
  EXPECT_EQ(binary("Mul", {2, 1, 4}, {3, 1}), "float[2,3,4]");
  EXPECT_EQ(binary("Sub", {"N", 1}, {1, 8}), "float[N,8]");
  EXPECT_EQ(binary("Div", {"N", 8}, {"N", 1}), "float[N,8]");
  EXPECT_EQ(binary("Add", {"N", 8}, {8}), "float[N,8]");
  EXPECT_EQ(binary("Pow", {}, {5}), "float[5]") << "a scalar broadcasts";
}

TEST(InferElementwise, TwoDifferentSymbolsBroadcastToTheLarger) {
  EXPECT_EQ(binary("Add", {"N"}, {"M"}), "float[max(N,M)]");
}

TEST(InferElementwise, ComparisonsAndLogicGiveBool) {
  EXPECT_EQ(binary("Equal", {2, 3}, {3}), "bool[2,3]");
  EXPECT_EQ(binary("Less", {"N"}, {1}), "bool[N]");
}

TEST(InferElementwise, IncompatibleExtentsAreAnError) {
  OneNode g;
  g.input("a", DType::float32, {2, 3}).input("b", DType::float32, {4});
  g.node(node("Add", {"a", "b"}, {"c"}, "bad")).output("c");
  EXPECT_NE(infer_error(g.graph).find("dims 3 and 4 do not broadcast"), std::string::npos);
}

TEST(InferElementwise, UnaryVariadicClipWhereCastKeepTheirShapes) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3}).input("y", DType::float32, {3});
  g.input("c", DType::boolean, {"N", 1});
  g.node(node("Sigmoid", {"x"}, {"s"})).node(node("Sum", {"x", "y", "x"}, {"sum"}));
  g.node(node("Clip", {"x"}, {"clipped"})).node(node("Where", {"c", "x", "y"}, {"w"}));
  g.node(node_with("Cast", {"x"}, {"h"}, {attr("to", int64_t{10})}));
  g.node(node("CastLike", {"c", "x"}, {"like"})).node(node("PRelu", {"x", "y"}, {"p"}));
  g.node(node("IsNaN", {"x"}, {"nan"}));
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("s"), "float[N,3]");
  EXPECT_EQ(r->type_of("sum"), "float[N,3]");
  EXPECT_EQ(r->type_of("clipped"), "float[N,3]");
  EXPECT_EQ(r->type_of("w"), "float[N,3]");
  EXPECT_EQ(r->type_of("h"), "float16[N,3]");
  EXPECT_EQ(r->type_of("like"), "float[N,1]");
  EXPECT_EQ(r->type_of("p"), "float[N,3]");
  EXPECT_EQ(r->type_of("nan"), "bool[N,3]");
}

TEST(InferElementwise, ShapeArithmeticIsComputedSymbolically) {
  // n = Shape(x)[0] * 2 + 1, with a truncating integer Div and a Cast on the way.
  OneNode g;
  g.input("x", DType::float32, {"N", 6});
  g.initializer(int64_tensor("two", {}, {2})).initializer(int64_tensor("zero", {}, {0}));
  g.node(node("Shape", {"x"}, {"shape"})).node(node("Gather", {"shape", "zero"}, {"n"}));
  g.node(node("Mul", {"n", "two"}, {"n2"})).node(node("Div", {"shape", "two"}, {"half"}));
  g.node(node("Equal", {"n", "n"}, {"same"}));
  g.node(node_with("Cast", {"half"}, {"half32"}, {attr("to", int64_t{6})}));
  g.output("n2").output("half32").output("same");
  auto r = infer(g.graph);
  EXPECT_EQ(r->known_of("n2"), "N*2");
  EXPECT_EQ(r->known_of("half32"), "floor(N/2),3");
  EXPECT_EQ(r->type_of("half32"), "int32[2]");
  EXPECT_EQ(r->known_of("same"), "1");
}

TEST(InferElementwise, ModFollowsTheSignRuleItsAttributeNames) {
  OneNode g;
  g.initializer(int64_tensor("a", {2}, {-7, 7})).initializer(int64_tensor("b", {2}, {3, -3}));
  g.node(node("Mod", {"a", "b"}, {"python"}));
  g.node(node_with("Mod", {"a", "b"}, {"c"}, {attr("fmod", int64_t{1})}));
  g.output("python").output("c");
  auto r = infer(g.graph);
  EXPECT_EQ(r->known_of("python"), "2,-2");
  EXPECT_EQ(r->known_of("c"), "-1,1");
}

// ---- Conv and pools

std::string conv(const std::vector<testing::DimSpec>& x, const std::vector<int64_t>& w,
                 const std::vector<Wire>& attrs) {
  OneNode g;
  g.input("x", DType::float32, x);
  std::vector<testing::DimSpec> wd(w.begin(), w.end());
  g.input("w", DType::float32, wd);
  g.node(node_with("Conv", {"x", "w"}, {"y"}, attrs)).output("y");
  return infer(g.graph)->type_of("y");
}

TEST(InferConv, SymbolicExtentsGiveTheFloorFormula) {
  EXPECT_EQ(conv({"N", 3, "H", "W"}, {16, 3, 3, 3},
                 {attr("pads", Ints{1, 1, 1, 1}), attr("strides", Ints{2, 2})}),
            "float[N,16,floor((H-1)/2)+1,floor((W-1)/2)+1]");
  EXPECT_EQ(conv({"N", 3, "H", "W"}, {8, 3, 3, 3}, {attr("pads", Ints{1, 1, 1, 1})}),
            "float[N,8,H,W]");
}

TEST(InferConv, ConcretePaddingStridesAndDilations) {
  EXPECT_EQ(conv({1, 3, 224, 224}, {64, 3, 7, 7},
                 {attr("pads", Ints{3, 3, 3, 3}), attr("strides", Ints{2, 2})}),
            "float[1,64,112,112]");
  EXPECT_EQ(conv({1, 1, 7, 7}, {1, 1, 3, 3}, {attr("dilations", Ints{2, 2})}), "float[1,1,3,3]");
  EXPECT_EQ(conv({1, 1, 7, 5}, {1, 1, 3, 3},
                 {attr("pads", Ints{1, 0, 1, 0}), attr("strides", Ints{2, 2})}),
            "float[1,1,4,2]");
}

TEST(InferConv, AutoPad) {
  for (const char* same : {"SAME_UPPER", "SAME_LOWER"}) {
    EXPECT_EQ(conv({1, 1, 5, 5}, {1, 1, 3, 3},
                   {attr("auto_pad", std::string_view(same)), attr("strides", Ints{2, 2})}),
              "float[1,1,3,3]")
        << same;
    EXPECT_EQ(conv({"N", 1, "H", 9}, {1, 1, 3, 3},
                   {attr("auto_pad", std::string_view(same)), attr("strides", Ints{2, 2})}),
              "float[N,1,ceil(H/2),5]")
        << same;
  }
  EXPECT_EQ(conv({1, 1, 5, 5}, {1, 1, 3, 3}, {attr("auto_pad", std::string_view("VALID"))}),
            "float[1,1,3,3]");
  EXPECT_EQ(conv({1, 1, 5, 5}, {1, 1, 3, 3},
                 {attr("auto_pad", std::string_view("NOTSET")), attr("pads", Ints{1, 1, 1, 1})}),
            "float[1,1,5,5]");
}

std::string pool(std::string_view op, const std::vector<testing::DimSpec>& x,
                 const std::vector<Wire>& attrs, std::string_view out = "y") {
  OneNode g;
  g.input("x", DType::float32, x);
  g.node(node_with(op, {"x"}, {"y", "indices"}, attrs)).output("y");
  return infer(g.graph)->type_of(out);
}

// The window decoder that inference, the workspace hooks and the kernels share: SAME's total
// padding split with the odd one at the end (SAME_UPPER) or the beginning (SAME_LOWER), and a bad
// attribute named with its node.
TEST(ConvWindow, SplitsSamePaddingAndNamesTheNode) {
  auto decode = [](std::string_view auto_pad) {
    OneNode g;
    g.input("x", DType::float32, {1, 1, 5, 5});
    g.node(node_with("MaxPool", {"x"}, {"y"},
                     {attr("kernel_shape", Ints{4, 4}), attr("strides", Ints{2, 2}),
                      attr("auto_pad", auto_pad)},
                     "pool"))
        .output("y");
    const auto r = infer(g.graph);
    return graph::ops::PoolWindow::decode(r->graph.node(0), 0, 2).window;
  };
  // 5 -> 3 windows of 4 at stride 2: (3 - 1) * 2 + 4 - 5 = 3 pads in all.
  const graph::ops::Pads upper = decode("SAME_UPPER").forward_pads(0, 4, 5, 3);
  EXPECT_EQ(upper.begin, 1);
  EXPECT_EQ(upper.end, 2);
  const graph::ops::Pads lower = decode("SAME_LOWER").forward_pads(0, 4, 5, 3);
  EXPECT_EQ(lower.begin, 2);
  EXPECT_EQ(lower.end, 1);
  EXPECT_EQ(decode("VALID").forward_pads(0, 4, 5, 1).begin, 0);

  OneNode bad;
  bad.input("x", DType::float32, {1, 1, 5, 5});
  bad.node(node_with("MaxPool", {"x"}, {"y"},
                     {attr("kernel_shape", Ints{2, 2}), attr("auto_pad", "SAME_MIDDLE")}, "pool"))
      .output("y");
  EXPECT_NE(infer_error(bad.graph).find("node 'pool' (MaxPool): auto_pad 'SAME_MIDDLE'"),
            std::string::npos)
      << infer_error(bad.graph);
}

TEST(InferPool, MaxPoolFloorAndCeilMode) {
  const std::vector<Wire> k3s2{attr("kernel_shape", Ints{3, 3}), attr("strides", Ints{2, 2})};
  EXPECT_EQ(pool("MaxPool", {1, 1, 6, 6}, k3s2), "float[1,1,2,2]");
  std::vector<Wire> ceil = k3s2;
  ceil.push_back(attr("ceil_mode", int64_t{1}));
  EXPECT_EQ(pool("MaxPool", {1, 1, 6, 6}, ceil), "float[1,1,3,3]");
  EXPECT_EQ(pool("MaxPool", {1, 1, 6, 6}, ceil, "indices"), "int64[1,1,3,3]");
  // A last window that would start in the end padding is dropped: 2 windows rather than 3.
  const std::vector<Wire> drop{attr("kernel_shape", Ints{1, 1}), attr("strides", Ints{2, 2}),
                               attr("pads", Ints{0, 0, 1, 1}), attr("ceil_mode", int64_t{1})};
  EXPECT_EQ(pool("MaxPool", {1, 1, 4, 4}, drop), "float[1,1,2,2]");
  EXPECT_EQ(pool("AveragePool", {"N", 8, "H", 4}, k3s2), "float[N,8,floor((H-3)/2)+1,1]");
}

TEST(InferPool, GlobalPoolsKeepBatchAndChannels) {
  EXPECT_EQ(pool("GlobalAveragePool", {"N", 64, "H", "W"}, {}), "float[N,64,1,1]");
  EXPECT_EQ(pool("GlobalMaxPool", {2, 8, 5}, {}), "float[2,8,1]");
}

TEST(InferConvTranspose, StridesOutputPaddingAndOutputShape) {
  OneNode g;
  g.input("x", DType::float32, {1, 1, 3, 3}).input("w", DType::float32, {1, 2, 3, 3});
  g.node(node_with("ConvTranspose", {"x", "w"}, {"y"},
                   {attr("strides", Ints{3, 2}), attr("output_padding", Ints{1, 1})}));
  g.node(node_with("ConvTranspose", {"x", "w"}, {"z"},
                   {attr("strides", Ints{3, 2}), attr("output_shape", Ints{10, 8})}));
  g.node(
      node_with("ConvTranspose", {"x", "w"}, {"s"},
                {attr("strides", Ints{2, 2}), attr("auto_pad", std::string_view("SAME_UPPER"))}));
  g.output("y").output("z").output("s");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float[1,2,10,8]");
  EXPECT_EQ(r->type_of("z"), "float[1,2,10,8]");
  EXPECT_EQ(r->type_of("s"), "float[1,2,6,6]");
}

}  // namespace
}  // namespace footprint
