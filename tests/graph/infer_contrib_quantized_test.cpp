// onnxruntime's contrib ops that its quantizer writes (com.microsoft QLinearAdd, QLinearConcat,
// QGemm, QLinearGlobalAveragePool, MatMulNBits, ...) are known rows with inference: a QOperator or
// 4-bit model is counted in the types it stores, and `analyze` names the ops `run` refuses
// instead of failing on a size it cannot know.
#include <gtest/gtest.h>

#include <string>

#include "graph/infer_builder.hpp"

namespace footprint::testing {
namespace {

constexpr std::string_view kMs = "com.microsoft";

Wire ms_node(std::string_view op, std::vector<std::string_view> in,
             const std::vector<Wire>& attrs = {}, std::string_view name = "n") {
  return node_with(op, std::move(in), {"y"}, attrs, name).str(7, kMs);
}

// Scales and zero points of the ops below: float scalars and uint8 scalars.
OneNode with_quant_params() {
  OneNode g;
  g.input("s", DType::float32, {}).input("z", DType::uint8, {});
  return g;
}

TEST(InferContribQuantized, QLinearAddAndMulBroadcastInTheirInputsType) {
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    OneNode g = with_quant_params();
    g.input("a", DType::uint8, {"N", 8, 1}).input("b", DType::uint8, {1, 5});
    g.node(ms_node(op, {"a", "s", "z", "b", "s", "z", "s", "z"})).output("y");
    EXPECT_EQ(infer(g.graph)->type_of("y"), "uint8[N,8,5]") << op;
  }
}

TEST(InferContribQuantized, PoolsReadAsTheirOnnxCousinsInBothLayouts) {
  OneNode g = with_quant_params();
  g.input("x", DType::int8, {2, 16, 7, 9});
  g.node(ms_node("QLinearGlobalAveragePool", {"x", "s", "z", "s", "z"})).output("y");
  EXPECT_EQ(infer(g.graph)->type_of("y"), "int8[2,16,1,1]");

  OneNode nhwc = with_quant_params();
  nhwc.input("x", DType::uint8, {2, 7, 9, 16});
  nhwc.node(ms_node("QLinearGlobalAveragePool", {"x", "s", "z", "s", "z"},
                    {attr("channels_last", int64_t{1})}))
      .output("y");
  EXPECT_EQ(infer(nhwc.graph)->type_of("y"), "uint8[2,1,1,16]");

  OneNode avg = with_quant_params();
  avg.input("x", DType::uint8, {1, 4, 8, 8});
  avg.node(ms_node("QLinearAveragePool", {"x", "s", "z", "s", "z"},
                   {attr("kernel_shape", std::vector<int64_t>{2, 2}),
                    attr("strides", std::vector<int64_t>{2, 2})}))
      .output("y");
  EXPECT_EQ(infer(avg.graph)->type_of("y"), "uint8[1,4,4,4]");
}

TEST(InferContribQuantized, QLinearConcatJoinsItsTriplesInYsType) {
  OneNode g = with_quant_params();
  g.input("a", DType::uint8, {1, 3, 4}).input("b", DType::uint8, {1, 5, 4});
  g.node(ms_node("QLinearConcat", {"s", "z", "a", "s", "z", "b", "s", "z"},
                 {attr("axis", int64_t{1})}))
      .output("y");
  EXPECT_EQ(infer(g.graph)->type_of("y"), "uint8[1,8,4]");

  OneNode odd = with_quant_params();
  odd.input("a", DType::uint8, {1, 3, 4});
  odd.node(ms_node("QLinearConcat", {"s", "z", "a", "s"}, {attr("axis", int64_t{1})}, "cat"))
      .output("y");
  EXPECT_NE(infer_error(odd.graph).find("node 'cat' (QLinearConcat): inputs after Y_scale and "
                                        "Y_zero_point come in threes"),
            std::string::npos);
}

TEST(InferContribQuantized, QGemmIsQuantizedOnlyWithAnOutputScale) {
  OneNode q = with_quant_params();
  q.input("a", DType::uint8, {"M", 64}).input("b", DType::int8, {10, 64});
  q.input("zb", DType::int8, {});
  q.node(ms_node("QGemm", {"a", "s", "z", "b", "s", "zb", "", "s", "z"},
                 {attr("transB", int64_t{1})}))
      .output("y");
  EXPECT_EQ(infer(q.graph)->type_of("y"), "uint8[M,10]");

  OneNode f = with_quant_params();
  f.input("a", DType::uint8, {"M", 64}).input("b", DType::int8, {10, 64});
  f.input("zb", DType::int8, {});
  f.node(ms_node("QGemm", {"a", "s", "z", "b", "s", "zb"}, {attr("transB", int64_t{1})}))
      .output("y");
  EXPECT_EQ(infer(f.graph)->type_of("y"), "float[M,10]");
}

TEST(InferContribQuantized, IntegerProductsToFloat) {
  OneNode g = with_quant_params();
  g.input("a", DType::uint8, {"N", 7, 32}).input("b", DType::int8, {32, 16});
  g.node(ms_node("MatMulIntegerToFloat", {"a", "b", "s", "s"})).output("y");
  EXPECT_EQ(infer(g.graph)->type_of("y"), "float[N,7,16]");

  OneNode d = with_quant_params();
  d.input("a", DType::float32, {"N", 32}).input("b", DType::int8, {32, 16});
  d.node(ms_node("DynamicQuantizeMatMul", {"a", "b", "s"})).output("y");
  EXPECT_EQ(infer(d.graph)->type_of("y"), "float[N,16]");
}

TEST(InferContribQuantized, MatMulNBitsTakesNFromItsAttributesAndChecksK) {
  const auto model = [](int k_of_a, int64_t k) {
    OneNode g;
    g.input("a", DType::float32, {"B", "S", k_of_a}).input("w", DType::uint8, {96, 2, 16});
    g.input("scales", DType::float32, {192});
    g.node(ms_node("MatMulNBits", {"a", "w", "scales"},
                   {attr("K", k), attr("N", int64_t{96}), attr("bits", int64_t{4}),
                    attr("block_size", int64_t{32})},
                   "q4"))
        .output("y");
    return g;
  };
  EXPECT_EQ(infer(model(64, 64).graph)->type_of("y"), "float[B,S,96]");
  EXPECT_NE(infer_error(model(48, 64).graph)
                .find("node 'q4' (MatMulNBits): A (input 0) [?,?,48] does not end in K = 64"),
            std::string::npos);
  // B's blocks follow from K and block_size: 96 x ceil(80 / 32) x 16 bytes, not 96 x 2 x 16.
  EXPECT_NE(infer_error(model(80, 80).graph)
                .find("node 'q4' (MatMulNBits): B (input 1) [96,2,16] is not [N, ceil(K / "
                      "block_size), block_size x bits / 8] = [96,3,16]"),
            std::string::npos);
  EXPECT_NE(infer_error(model(64, 0).graph).find("attributes K and N must be positive"),
            std::string::npos);
}

TEST(InferContribQuantized, TheRowsAreOnnxruntimesDomainOnly) {
  // The same names without the domain are not these rows (ONNX has no QLinearAdd).
  OneNode g = with_quant_params();
  g.input("a", DType::uint8, {2}).input("b", DType::uint8, {2});
  g.node(node("QLinearAdd", {"a", "s", "z", "b", "s", "z", "s", "z"}, {"y"})).output("y");
  EXPECT_EQ(infer(g.graph)->graph.nodes()[0].schema, nullptr);
}

}  // namespace
}  // namespace footprint::testing
