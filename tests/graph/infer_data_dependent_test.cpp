// Data-dependent extents (issue 15): ops whose output extents depend on values declare an upper
// bound, shape arithmetic carries it, and the exporter's idioms around them stay known.
#include <gtest/gtest.h>

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

TEST(InferDataDependent, NonZeroIsBoundedByItsInputsElements) {
  OneNode g;
  g.input("x", DType::float32, {"N", 8});
  g.node(node("NonZero", {"x"}, {"nz"}, "find"));
  g.node(node_with("Transpose", {"nz"}, {"t"}, {attr("perm", std::vector<int64_t>{1, 0})}));
  g.output("t");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("nz"), "int64[2,<=N*8]");
  EXPECT_EQ(r->type_of("t"), "int64[<=N*8,2]") << "the bounded extent moves with the axis";
  std::vector<std::string> origins;
  r->value("t").shape.dims[0].collect_bound_origins(origins);
  EXPECT_EQ(origins, std::vector<std::string>{"'find' (NonZero)"});
}

TEST(InferDataDependent, TopKWithARuntimeKIsAtMostTheAxis) {
  OneNode g;
  g.input("x", DType::float32, {4, 100}).input("k", DType::int64, {1});
  g.node(node("TopK", {"x", "k"}, {"v", "i"}, "top"));
  g.output("v").output("i");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("v"), "float[4,<=100]");
  EXPECT_EQ(r->type_of("i"), "int64[4,<=100]");
  EXPECT_TRUE(r->value("v").shape.dims[1] == r->value("i").shape.dims[1])
      << "values and indices share one count";
}

TEST(InferDataDependent, NonMaxSuppressionIsBoundedByItsPerClassLimit) {
  OneNode g;
  g.input("boxes", DType::float32, {1, 500, 4}).input("scores", DType::float32, {1, 3, 500});
  g.initializer(int64_tensor("limit", {1}, {100}));
  g.node(node("NonMaxSuppression", {"boxes", "scores", "limit"}, {"sel"}, "nms"));
  g.node(node("NonMaxSuppression", {"boxes", "scores"}, {"none"}, "nms0"));
  g.output("sel").output("none");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("sel"), "int64[<=300,3]") << "1 batch x 3 classes x min(100, 500)";
  EXPECT_EQ(r->type_of("none"), "int64[0,3]") << "no max_output_boxes_per_class selects nothing";
}

TEST(InferDataDependent, CompressAndUniqueAreBounded) {
  OneNode g;
  g.input("x", DType::float32, {6, 5}).input("c", DType::boolean, {6});
  g.node(node_with("Compress", {"x", "c"}, {"y"}, {attr("axis", int64_t{0})}, "keep"));
  g.node(node("Unique", {"x"}, {"u", "idx", "inv", "cnt"}, "uniq"));
  g.output("y").output("u").output("idx").output("inv").output("cnt");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float[<=6,5]");
  EXPECT_EQ(r->type_of("u"), "float[<=30]");
  EXPECT_EQ(r->type_of("inv"), "int64[30]") << "one inverse index per element: exact";
  EXPECT_TRUE(r->value("u").shape.dims[0] == r->value("cnt").shape.dims[0]);
}

TEST(InferDataDependent, SliceWithRuntimeEndsKeepsAtMostTheAxis) {
  OneNode g;
  g.input("x", DType::float32, {10, 7}).input("end", DType::int64, {1});
  g.initializer(int64_tensor("start", {1}, {0}));
  g.initializer(int64_tensor("axis", {1}, {1}));
  g.initializer(int64_tensor("step", {1}, {2}));
  g.node(node("Slice", {"x", "start", "end", "axis", "step"}, {"y"}, "cut"));
  g.output("y");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float[10,<=4]") << "every 2nd of 7 columns at most";
}

// A branch taken by a runtime condition: a dim the branches disagree on is at most the larger.
TEST(InferDataDependent, IfWithARuntimeConditionIsTheLargerBranch) {
  auto branch = [](const char* name, int64_t n) {
    testing::Wire b;
    b.str(2, name);
    b.msg(5, int64_tensor(std::string(name) + "_v", {n}, std::vector<int64_t>(n, 1)));
    b.msg(1, node("Identity", {std::string(name) + "_v"}, {std::string(name) + "_o"}));
    b.msg(12, testing::output(std::string(name) + "_o"));
    return b;
  };
  OneNode g;
  g.input("cond", DType::boolean, {});
  g.node(node_with(
      "If", {"cond"}, {"y"},
      {attr_graph("then_branch", branch("then", 3)), attr_graph("else_branch", branch("else", 5))},
      "choose"));
  g.output("y");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "int64[<=5]");
}

// The exporter's Expand idiom: shape = Where(Equal(s, -1), ones, s) with s from Shape of a
// bounded tensor. An extent is never -1, so the shape is s itself.
TEST(InferDataDependent, ExpandShapeIdiomOverABoundedShape) {
  OneNode g;
  g.input("x", DType::float32, {12});
  g.initializer(int64_tensor("minus1", {}, {-1}));
  g.node(node("NonZero", {"x"}, {"nz"}, "find"));
  g.node(node("Shape", {"nz"}, {"s"}));
  g.node(node("Equal", {"s", "minus1"}, {"eq"}));
  g.node(node("Shape", {"s"}, {"ss"}));
  g.node(node_with("ConstantOfShape", {"ss"}, {"ones"},
                   {testing::attr_tensor("value", int64_tensor("one", {1}, {1}))}));
  g.node(node("Where", {"eq", "ones", "s"}, {"shape"}));
  g.node(node("Expand", {"nz", "shape"}, {"y"}));
  g.output("y");
  auto r = infer(g.graph);
  EXPECT_EQ(r->known_of("eq"), "0,0");
  EXPECT_EQ(r->type_of("y"), "int64[1,<=12]");
}

}  // namespace
}  // namespace footprint
