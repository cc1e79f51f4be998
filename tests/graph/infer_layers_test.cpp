// Inference for layer ops: Gemm / MatMul / Einsum, normalisations and the Softmax family,
// Dropout's mask by opset, reductions (axes as attribute or input), ArgMax, TopK, recurrent
// layers with both layouts, quantization and data-dependent outputs (NonZero).
#include <gtest/gtest.h>

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
using testing::raw_tensor;
using testing::Wire;
using Ints = std::vector<int64_t>;

std::string matmul(const std::vector<testing::DimSpec>& a, const std::vector<testing::DimSpec>& b) {
  OneNode g;
  g.input("a", DType::float32, a).input("b", DType::float32, b);
  g.node(node("MatMul", {"a", "b"}, {"c"})).output("c");
  return infer(g.graph)->type_of("c");
}

TEST(InferMatMul, NumpySemantics) {
  EXPECT_EQ(matmul({2, 3}, {3, 4}), "float[2,4]");
  EXPECT_EQ(matmul({"N", "S", 64}, {64, 10}), "float[N,S,10]");
  EXPECT_EQ(matmul({5, 1, 2, 3}, {4, 3, 6}), "float[5,4,2,6]");
  EXPECT_EQ(matmul({3}, {3, 4}), "float[4]") << "1-D on the left drops its row";
  EXPECT_EQ(matmul({2, 3}, {3}), "float[2]") << "1-D on the right drops its column";
}

TEST(InferMatMul, InnerDimsMustAgree) {
  OneNode g;
  g.input("a", DType::float32, {2, 3}).input("b", DType::float32, {4, 5});
  g.node(node("MatMul", {"a", "b"}, {"c"}, "mm")).output("c");
  EXPECT_NE(infer_error(g.graph).find("inner dims 3 and 4 differ"), std::string::npos);
}

TEST(InferMatMul, GemmTransposesAndEinsum) {
  OneNode g;
  g.input("a", DType::float32, {"K", "M"}).input("b", DType::float32, {10, "K"});
  g.node(node_with("Gemm", {"a", "b"}, {"c"},
                   {attr("transA", int64_t{1}), attr("transB", int64_t{1})}));
  g.input("x", DType::float32, {"B", 3, 5}).input("y", DType::float32, {"B", 5, 7});
  g.node(node_with("Einsum", {"x", "y"}, {"bik"},
                   {attr("equation", std::string_view("bij,bjk->bik"))}));
  g.node(node_with("Einsum", {"x"}, {"implicit"}, {attr("equation", std::string_view("...ij"))}));
  g.node(node_with("Einsum", {"x"}, {"trace"}, {attr("equation", std::string_view("bij->b"))}));
  g.output("c").output("bik").output("implicit").output("trace");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("c"), "float[M,10]");
  EXPECT_EQ(r->type_of("bik"), "float[B,3,7]");
  EXPECT_EQ(r->type_of("implicit"), "float[B,3,5]");
  EXPECT_EQ(r->type_of("trace"), "float[B]");
}

TEST(InferNormalization, StatisticsOutputs) {
  OneNode g;
  g.input("x", DType::float32, {"N", 16, "H", "W"}).input("c", DType::float32, {16});
  g.node(node("BatchNormalization", {"x", "c", "c", "c", "c"}, {"y", "mean", "var"}));
  g.node(node_with("LayerNormalization", {"x", "c"}, {"ln", "ln_mean", "ln_inv"},
                   {attr("axis", int64_t{2})}));
  g.node(node("InstanceNormalization", {"x", "c", "c"}, {"in"}));
  g.node(node("LRN", {"x"}, {"lrn"}));
  g.node(node_with("Softmax", {"x"}, {"sm"}, {attr("axis", int64_t{1})}));
  g.node(node("LogSoftmax", {"x"}, {"lsm"}));
  for (const char* o : {"y", "mean", "ln", "ln_mean", "in", "lrn", "sm", "lsm"}) g.output(o);
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float[N,16,H,W]");
  EXPECT_EQ(r->type_of("mean"), "float[16]");
  EXPECT_EQ(r->type_of("ln"), "float[N,16,H,W]");
  EXPECT_EQ(r->type_of("ln_mean"), "float[N,16,1,1]");
  EXPECT_EQ(r->type_of("in"), "float[N,16,H,W]");
  EXPECT_EQ(r->type_of("lrn"), "float[N,16,H,W]");
  EXPECT_EQ(r->type_of("sm"), "float[N,16,H,W]");
  EXPECT_EQ(r->type_of("lsm"), "float[N,16,H,W]");
}

TEST(InferNormalization, DropoutMaskIsBoolFromOpset10) {
  for (const int64_t opset : {9, 13}) {
    OneNode g;
    g.input("x", DType::float32, {"N", 4});
    g.node(node("Dropout", {"x"}, {"y", "mask"})).output("y").output("mask");
    auto r = infer(g.graph, opset);
    EXPECT_EQ(r->type_of("y"), "float[N,4]");
    EXPECT_EQ(r->type_of("mask"), opset >= 10 ? "bool[N,4]" : "float[N,4]") << opset;
  }
}

TEST(InferReduce, AxesFromAttributeOrInputAndKeepdims) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, 4});
  g.node(node_with("ReduceMean", {"x"}, {"mean"}, {attr("axes", Ints{-1})}));
  g.node(node_with("ReduceMax", {"x"}, {"max"},
                   {attr("axes", Ints{1, 2}), attr("keepdims", int64_t{0})}));
  g.node(node_with("ReduceL2", {"x"}, {"all"}, {attr("keepdims", int64_t{0})}));
  g.initializer(int64_tensor("axes", {1}, {0}));
  g.node(node("ReduceSum", {"x", "axes"}, {"sum"}));
  g.node(node_with("ArgMax", {"x"}, {"arg"},
                   {attr("axis", int64_t{1}), attr("keepdims", int64_t{0})}));
  for (const char* o : {"mean", "max", "all", "sum", "arg"}) g.output(o);
  auto r = infer(g.graph, /*opset=*/13);
  EXPECT_EQ(r->type_of("mean"), "float[N,3,1]");
  EXPECT_EQ(r->type_of("max"), "float[N]");
  EXPECT_EQ(r->type_of("all"), "float[]");
  EXPECT_EQ(r->type_of("sum"), "float[1,3,4]");
  EXPECT_EQ(r->type_of("arg"), "int64[N,4]");
}

TEST(InferReduce, ReduceProdOfAShapeIsAKnownElementCount) {
  OneNode g;
  g.input("x", DType::float32, {"N", 3, 4});
  g.node(node("Shape", {"x"}, {"shape"}));
  g.node(node_with("ReduceProd", {"shape"}, {"count"}, {attr("keepdims", int64_t{0})}));
  g.output("count");
  EXPECT_EQ(infer(g.graph, 13)->known_of("count"), "N*12");
}

TEST(InferReduce, TopKTakesKFromItsInput) {
  OneNode g;
  g.input("x", DType::float32, {"N", 100});
  g.initializer(int64_tensor("k", {1}, {5}));
  g.node(node("TopK", {"x", "k"}, {"values", "indices"})).output("values").output("indices");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("values"), "float[N,5]");
  EXPECT_EQ(r->type_of("indices"), "int64[N,5]");
}

TEST(InferRecurrent, LstmOutputsInBothLayouts) {
  OneNode g;
  g.input("x", DType::float32, {"S", "B", 32}).input("w", DType::float32, {2, 256, 32});
  g.input("r", DType::float32, {2, 256, 64});
  g.node(node_with(
      "LSTM", {"x", "w", "r"}, {"y", "y_h", "y_c"},
      {attr("hidden_size", int64_t{64}), attr("direction", std::string_view("bidirectional"))}));
  g.input("xb", DType::float32, {"B", "S", 32});
  g.node(node_with("GRU", {"xb", "w", "r"}, {"gy", "gy_h"}, {attr("layout", int64_t{1})}));
  for (const char* o : {"y", "y_h", "y_c", "gy", "gy_h"}) g.output(o);
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "float[S,2,B,64]");
  EXPECT_EQ(r->type_of("y_h"), "float[2,B,64]");
  EXPECT_EQ(r->type_of("y_c"), "float[2,B,64]");
  EXPECT_EQ(r->type_of("gy"), "float[B,S,1,64]") << "hidden size read from R";
  EXPECT_EQ(r->type_of("gy_h"), "float[B,1,64]");
}

TEST(InferMisc, QuantizationAndDataDependentCounts) {
  OneNode g;
  g.input("x", DType::float32, {"N", 8}).input("scale", DType::float32, {});
  g.initializer(raw_tensor<int8_t>("zp", DType::int8, {}, {0}));
  g.node(node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}));
  g.node(node("DequantizeLinear", {"q", "scale", "zp"}, {"dq"}));
  g.node(node("NonZero", {"x"}, {"nz"}));
  g.initializer(int64_tensor("mask", {5}, {0, 3, 0, 1, 1}));
  g.node(node("NonZero", {"mask"}, {"nz_known"}));
  g.output("q").output("dq").output("nz").output("nz_known");
  auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("q"), "int8[N,8]");
  EXPECT_EQ(r->type_of("dq"), "float[N,8]");
  EXPECT_EQ(r->type_of("nz"), "int64[2,<=N*8]");
  EXPECT_EQ(r->type_of("nz_known"), "int64[1,3]");
}

}  // namespace
}  // namespace footprint
