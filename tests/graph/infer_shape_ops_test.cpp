// Inference for shape manipulation: Reshape (0, -1, allowzero, a target computed from Shape),
// Flatten, Squeeze / Unsqueeze and Slice across opsets (attributes before, inputs after),
// Transpose, Concat, Split, Gather, Pad, Tile, Expand, Resize / Upsample, Shape (start/end),
// Size, Constant (every value_* attribute), ConstantOfShape, Range.
#include <gtest/gtest.h>

#include "graph/infer_builder.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::attr_floats;
using testing::attr_tensor;
using testing::infer;
using testing::infer_error;
using testing::int64_tensor;
using testing::node;
using testing::node_with;
using testing::OneNode;
using testing::raw_tensor;
using testing::Wire;
using Ints = std::vector<int64_t>;

std::string reshape(const std::vector<testing::DimSpec>& x, const Ints& target,
                    int64_t allowzero = 0) {
  OneNode g;
  g.input("x", DType::float32, x);
  g.initializer(int64_tensor("shape", {static_cast<int64_t>(target.size())}, target));
  g.node(node_with("Reshape", {"x", "shape"}, {"y"}, {attr("allowzero", allowzero)}));
  g.output("y");
  return infer(g.graph)->type_of("y");
}

TEST(InferReshape, ZeroCopiesAndMinusOneInfers) {
  EXPECT_EQ(reshape({2, 3, 4}, {0, -1}), "float[2,12]");
  EXPECT_EQ(reshape({2, 3, 4}, {-1}), "float[24]");
  EXPECT_EQ(reshape({2, 3, 4}, {4, 0, 2}), "float[4,3,2]");
  EXPECT_EQ(reshape({"N", 3, 4}, {0, -1}), "float[N,12]");
  EXPECT_EQ(reshape({"N", 3, 4}, {-1, 6}), "float[N*2,6]");
  EXPECT_EQ(reshape({0, 3}, {3, 0}, /*allowzero=*/1), "float[3,0]");
}

TEST(InferReshape, AWrongElementCountIsAnError) {
  OneNode g;
  g.input("x", DType::float32, {2, 3});
  g.initializer(int64_tensor("shape", {2}, {4, 2}));
  g.node(node("Reshape", {"x", "shape"}, {"y"}, "r")).output("y");
  EXPECT_NE(infer_error(g.graph).find("cannot reshape [2,3] into [4,2]"), std::string::npos);
}

TEST(InferReshape, TargetFromConcatOfShapeAndMinusOne) {
  // y = Reshape(x, Concat(Unsqueeze(Shape(x)[0]), [-1])): the flatten exporters write.
  OneNode g;
  g.input("x", DType::float32, {"N", 64, 4, 8});
  g.initializer(int64_tensor("zero", {}, {0})).initializer(int64_tensor("minus_one", {1}, {-1}));
  g.initializer(int64_tensor("axes", {1}, {0}));
  g.node(node("Shape", {"x"}, {"shape"})).node(node("Gather", {"shape", "zero"}, {"n"}));
  g.node(node("Unsqueeze", {"n", "axes"}, {"n1"}));
  g.node(node_with("Concat", {"n1", "minus_one"}, {"target"}, {attr("axis", int64_t{0})}));
  g.node(node("Reshape", {"x", "target"}, {"y"})).output("y");
  auto r = infer(g.graph);
  EXPECT_EQ(r->known_of("target"), "N,-1");
  EXPECT_EQ(r->type_of("y"), "float[N,2048]");
}

TEST(InferReshape, UnknownTargetKeepsItsLengthAsRank) {
  OneNode g;
  g.input("x", DType::float32, {2, 3}).input("shape", DType::int64, {3});
  g.node(node("Reshape", {"x", "shape"}, {"y"})).output("y");
  EXPECT_EQ(infer(g.graph)->type_of("y"), "float[?,?,?]");
}

TEST(InferReshapeFamily, FlattenSqueezeUnsqueezeTranspose) {
  OneNode g;
  g.input("x", DType::float32, {"N", 1, 3, 1});
  g.node(node_with("Flatten", {"x"}, {"flat"}, {attr("axis", int64_t{2})}));
  g.node(node("Squeeze", {"x"}, {"all"}));
  g.initializer(int64_tensor("axes", {1}, {-1}));
  g.node(node("Squeeze", {"x", "axes"}, {"last"}));
  g.initializer(int64_tensor("new_axes", {2}, {0, -1}));
  g.node(node("Unsqueeze", {"x", "new_axes"}, {"more"}));
  g.node(node_with("Transpose", {"x"}, {"t"}, {attr("perm", Ints{2, 0, 3, 1})}));
  g.node(node("Transpose", {"x"}, {"reversed"}));
  for (const char* o : {"flat", "all", "last", "more", "t", "reversed"}) g.output(o);
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("flat"), "float[N,3]");
  EXPECT_EQ(r->type_of("all"), "float[N,3]") << "a symbolic extent is assumed not 1";
  EXPECT_EQ(r->type_of("last"), "float[N,1,3]");
  EXPECT_EQ(r->type_of("more"), "float[1,N,1,3,1,1]");
  EXPECT_EQ(r->type_of("t"), "float[3,N,1,1]");
  EXPECT_EQ(r->type_of("reversed"), "float[1,3,1,N]");
}

TEST(InferReshapeFamily, SqueezeAndUnsqueezeTakeAttributeAxesBeforeOpset13) {
  OneNode g;
  g.input("x", DType::float32, {1, 3});
  g.node(node_with("Squeeze", {"x"}, {"s"}, {attr("axes", Ints{0})}));
  g.node(node_with("Unsqueeze", {"x"}, {"u"}, {attr("axes", Ints{1})}));
  g.output("s").output("u");
  auto r = infer(g.graph, /*opset=*/11);
  EXPECT_EQ(r->type_of("s"), "float[3]");
  EXPECT_EQ(r->type_of("u"), "float[1,1,3]");
}

TEST(InferIndexing, ConcatSplitGather) {
  OneNode g;
  g.input("a", DType::float32, {"N", 2}).input("b", DType::float32, {"N", 5});
  g.node(node_with("Concat", {"a", "b", "a"}, {"c"}, {attr("axis", int64_t{-1})}));
  g.node(node_with("Split", {"c"}, {"p", "q", "r"}, {attr("axis", int64_t{1})}));
  g.initializer(int64_tensor("sizes", {2}, {1, 8}));
  g.node(node_with("Split", {"c", "sizes"}, {"u", "v"}, {attr("axis", int64_t{1})}));
  g.input("idx", DType::int64, {4, 2});
  g.node(node_with("Gather", {"c", "idx"}, {"gathered"}, {attr("axis", int64_t{1})}));
  for (const char* o : {"c", "p", "u", "v", "gathered"}) g.output(o);
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("c"), "float[N,9]");
  EXPECT_EQ(r->type_of("p"), "float[N,3]");
  EXPECT_EQ(r->type_of("u"), "float[N,1]");
  EXPECT_EQ(r->type_of("v"), "float[N,8]");
  EXPECT_EQ(r->type_of("gathered"), "float[N,4,2]");
}

TEST(InferIndexing, SliceFromInputsAndSymbolicExtents) {
  OneNode g;
  g.input("x", DType::float32, {"N", 10, 6});
  g.initializer(int64_tensor("starts", {2}, {1, -4}))
      .initializer(int64_tensor("ends", {2}, {9, 1000}));
  g.initializer(int64_tensor("axes", {2}, {1, 2})).initializer(int64_tensor("steps", {2}, {3, 1}));
  g.node(node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}));
  g.initializer(int64_tensor("s0", {1}, {0})).initializer(int64_tensor("e0", {1}, {INT64_MAX}));
  g.initializer(int64_tensor("a0", {1}, {0}));
  g.node(node("Slice", {"x", "s0", "e0", "a0"}, {"all"}));
  g.initializer(int64_tensor("s1", {1}, {1}));
  g.node(node("Slice", {"x", "s1", "e0", "a0"}, {"tail"}));
  g.initializer(int64_tensor("back", {1}, {-1})).initializer(int64_tensor("low", {1}, {INT64_MIN}));
  g.node(node("Slice", {"x", "back", "low", "s1", "back"}, {"reversed"}));
  g.output("y").output("all").output("tail").output("reversed");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float[N,3,4]");
  EXPECT_EQ(r->type_of("all"), "float[N,10,6]");
  EXPECT_EQ(r->type_of("tail"), "float[max(N-1,0),10,6]");
  EXPECT_EQ(r->type_of("reversed"), "float[N,10,6]");
}

TEST(InferIndexing, SliceTakesAttributesBeforeOpset10AndComputesKnownValues) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, "H", "W"});
  g.node(node("Shape", {"x"}, {"shape"}));
  g.node(node_with("Slice", {"shape"}, {"hw"}, {attr("starts", Ints{2}), attr("ends", Ints{4})}));
  g.output("hw");
  auto r = infer(g.graph, /*opset=*/9);
  EXPECT_EQ(r->type_of("hw"), "int64[2]");
  EXPECT_EQ(r->known_of("hw"), "H,W");
}

TEST(InferIndexing, PadTileExpand) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, 1});
  g.initializer(int64_tensor("pads", {6}, {0, 1, 2, 0, 1, 3}));
  g.node(node("Pad", {"x", "pads"}, {"padded"}));
  g.initializer(int64_tensor("repeats", {3}, {2, 1, 4}));
  g.node(node("Tile", {"x", "repeats"}, {"tiled"}));
  g.initializer(int64_tensor("target", {4}, {2, 1, 3, 5}));
  g.node(node("Expand", {"x", "target"}, {"expanded"}));
  g.output("padded").output("tiled").output("expanded");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("padded"), "float[N,5,6]");
  EXPECT_EQ(r->type_of("tiled"), "float[N*2,3,4]");
  EXPECT_EQ(r->type_of("expanded"), "float[2,N,3,5]");
}

TEST(InferIndexing, PadTakesAttributePadsBeforeOpset11) {
  OneNode g;
  g.input("x", DType::float32, {2, 3});
  g.node(node_with("Pad", {"x"}, {"y"}, {attr("pads", Ints{1, 0, 1, 2})})).output("y");
  EXPECT_EQ(infer(g.graph, /*opset=*/10)->type_of("y"), "float[4,5]");
}

TEST(InferResize, ScalesOrSizesAcrossOpsets) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, "H", 10});
  g.initializer(raw_tensor<float>("scales", DType::float32, {4}, {1, 1, 2, 0.5f}));
  g.initializer(raw_tensor<float>("empty", DType::float32, {0}, {}));
  g.initializer(int64_tensor("sizes", {4}, {1, 3, 32, 32}));
  g.node(node("Resize", {"x", "", "scales"}, {"by_scales"}));
  g.node(node("Resize", {"x", "", "empty", "sizes"}, {"by_sizes"}));
  g.output("by_scales").output("by_sizes");
  auto r = infer(g.graph, /*opset=*/13);
  EXPECT_EQ(r->type_of("by_scales"), "float[N,3,H*2,5]");
  EXPECT_EQ(r->type_of("by_sizes"), "float[1,3,32,32]");

  OneNode old;
  old.input("x", DType::float32, {1, 3, 4, 4});
  old.node(node_with("Upsample", {"x"}, {"up"}, {attr_floats("scales", {1, 1, 2, 3})}))
      .output("up");
  EXPECT_EQ(infer(old.graph, /*opset=*/7)->type_of("up"), "float[1,3,8,12]");
}

// Sizes under a kept aspect ratio are not the output's extents: one scale (the smallest or the
// largest of sizes / extent over the resized axes) applies to every resized axis, rounded.
TEST(InferResize, KeepAspectRatioPolicyScalesEveryResizedAxisAlike) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, 20, 40});
  g.initializer(int64_tensor("sizes", {2}, {30, 30}));
  for (const char* policy : {"stretch", "not_larger", "not_smaller"}) {
    g.node(node_with("Resize", {"x", "", "", "sizes"}, {policy},
                     {attr("axes", Ints{2, 3}), attr("keep_aspect_ratio_policy", policy)}));
    g.output(policy);
  }
  auto r = infer(g.graph, /*opset=*/18);
  EXPECT_EQ(r->type_of("stretch"), "float[N,3,30,30]");
  EXPECT_EQ(r->type_of("not_larger"), "float[N,3,15,30]");   // 0.75 = min(30/20, 30/40)
  EXPECT_EQ(r->type_of("not_smaller"), "float[N,3,30,60]");  // 1.5 = max(30/20, 30/40)
}

TEST(InferResize, UnknownPolicyIsNamed) {
  OneNode g;
  g.input("x", DType::float32, {1, 1, 2, 2});
  g.initializer(int64_tensor("sizes", {4}, {1, 1, 4, 4}));
  g.node(node_with("Resize", {"x", "", "", "sizes"}, {"y"},
                   {attr("keep_aspect_ratio_policy", "sideways")}, "r0"))
      .output("y");
  EXPECT_NE(infer_error(g.graph, /*opset=*/18)
                .find("node 'r0' (Resize): keep_aspect_ratio_policy 'sideways' is not supported"),
            std::string::npos)
      << infer_error(g.graph, /*opset=*/18);
}

TEST(InferGenerators, ShapeWithStartEndAndSize) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, "H", "W"});
  g.node(node_with("Shape", {"x"}, {"tail"}, {attr("start", int64_t{-2})}));
  g.node(node_with("Shape", {"x"}, {"mid"}, {attr("start", int64_t{1}), attr("end", int64_t{3})}));
  g.node(node("Size", {"x"}, {"n"}));
  g.output("tail").output("mid").output("n");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("tail"), "int64[2]");
  EXPECT_EQ(r->known_of("tail"), "H,W");
  EXPECT_EQ(r->known_of("mid"), "3,H");
  EXPECT_EQ(r->type_of("n"), "int64[]");
  EXPECT_EQ(r->known_of("n"), "N*H*W*3");
}

TEST(InferGenerators, ConstantFromEveryValueAttribute) {
  OneNode g;
  g.node(node_with("Constant", {}, {"t"},
                   {attr_tensor("value", raw_tensor<float>("", DType::float32, {2}, {1.5f, 2}))}));
  g.node(node_with("Constant", {}, {"i"}, {attr("value_int", int64_t{7})}));
  g.node(node_with("Constant", {}, {"is"}, {attr("value_ints", Ints{1, 2, 3})}));
  g.node(node_with("Constant", {}, {"f"}, {testing::attr_float("value_float", 0.25f)}));
  g.node(node_with("Constant", {}, {"fs"}, {attr_floats("value_floats", {1, 2})}));
  g.node(node_with("Constant", {}, {"s"}, {attr("value_string", std::string_view("hi"))}));
  for (const char* o : {"t", "i", "is", "f", "fs", "s"}) g.output(o);
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("t"), "float[2]");
  EXPECT_EQ(r->known_of("t"), "1.5,2");
  EXPECT_EQ(r->type_of("i"), "int64[]");
  EXPECT_EQ(r->known_of("i"), "7");
  EXPECT_EQ(r->type_of("is"), "int64[3]");
  EXPECT_EQ(r->type_of("f"), "float[]");
  EXPECT_EQ(r->known_of("f"), "0.25");
  EXPECT_EQ(r->type_of("fs"), "float[2]");
  EXPECT_EQ(r->type_of("s"), "string[]");
  for (const char* o : {"t", "i", "is", "f", "fs", "s"}) EXPECT_TRUE(r->value(o).constant) << o;
}

TEST(InferGenerators, ConstantOfShapeAndRange) {
  OneNode g;
  g.input("x", DType::float32, {"N", 4});
  g.node(node("Shape", {"x"}, {"shape"}));
  g.node(node_with("ConstantOfShape", {"shape"}, {"ones"},
                   {attr_tensor("value", int64_tensor("", {1}, {1}))}));
  g.initializer(int64_tensor("zero", {}, {0})).initializer(int64_tensor("one", {}, {1}));
  g.node(node("Gather", {"shape", "zero"}, {"n"}));
  g.node(node("Range", {"zero", "n", "one"}, {"positions"}));
  g.initializer(raw_tensor<float>("start", DType::float32, {}, {1}));
  g.initializer(raw_tensor<float>("limit", DType::float32, {}, {2}));
  g.initializer(raw_tensor<float>("delta", DType::float32, {}, {0.25f}));
  g.node(node("Range", {"start", "limit", "delta"}, {"steps"}));
  g.output("ones").output("positions").output("steps");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("ones"), "int64[N,4]");
  EXPECT_FALSE(r->value("ones").constant) << "its shape is only known when running";
  EXPECT_EQ(r->type_of("positions"), "int64[N]");
  EXPECT_EQ(r->type_of("steps"), "float[4]");
  EXPECT_EQ(r->known_of("steps"), "1,1.25,1.5,1.75");
}

TEST(InferGenerators, ConstantOfShapeRefusesANegativeExtent) {
  OneNode g;
  g.initializer(int64_tensor("shape", {1}, {-5}));
  g.node(node("ConstantOfShape", {"shape"}, {"y"}, "fill"));
  g.output("y");
  EXPECT_NE(infer_error(g.graph).find("its shape input has the negative extent -5"),
            std::string::npos)
      << infer_error(g.graph);
}

}  // namespace
}  // namespace footprint
