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
  g.input("x", DType::int8, {2, 16, 7, 9}).input("z8", DType::int8, {});
  g.node(ms_node("QLinearGlobalAveragePool", {"x", "s", "z8", "s", "z8"})).output("y");
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

// The operands as graph/ops/qlinear_operands.hpp reads them for inference and the kernels alike:
// one float32 scale, positive and finite where known; zero points of the tensors' type, one
// element, omissible; tensors int8 or uint8 of one type.
TEST(InferContribQuantized, QLinearOperandsAreRefusedNamingTheInput) {
  const auto error = [](std::string_view op, std::vector<std::string_view> in,
                        const std::vector<Wire>& attrs = {}) {
    OneNode g = with_quant_params();
    g.input("a", DType::uint8, {2, 3}).input("i8", DType::int8, {2, 3});
    g.input("z8", DType::int8, {}).input("s2", DType::float32, {2});
    g.input("d", DType::float64, {}).input("f", DType::float32, {2, 3});
    g.initializer(raw_tensor<float>("zero", DType::float32, {}, {0.0F}));
    g.initializer(raw_tensor<float>("neg", DType::float32, {1}, {-0.5F}));
    g.node(ms_node(op, std::move(in), attrs, "q")).output("y");
    return infer_error(g.graph);
  };
  const auto has = [](const std::string& e, const std::string& want) {
    EXPECT_NE(e.find(want), std::string::npos) << e;
  };
  has(error("QLinearAdd", {"a", "s", "z", "a", "s", "z8", "s", "z"}),
      "node 'q' (QLinearAdd): B_zero_point (input 5) is int8 but A (input 0) is "
      "uint8: they must be one type");
  has(error("QLinearMul", {"a", "s", "z", "i8", "s", "z", "s"}),
      "B (input 3) is int8 but A (input 0) is uint8");
  has(error("QLinearAdd", {"a", "d", "z", "a", "s", "z", "s"}),
      "A_scale (input 1) is double, not float");
  has(error("QLinearSigmoid", {"f", "s", "z", "s"}), "X (input 0) is float, not int8 or uint8");
  has(error("QLinearLeakyRelu", {"a", "s2", "z", "s"}),
      "X_scale (input 1) has 2 elements along axis 0: it must be one value");
  has(error("QLinearAveragePool", {"a", "s", "z", "zero", "z"},
            {attr("kernel_shape", std::vector<int64_t>{1})}),
      "y_scale (input 3) is 0: a scale must be positive and finite");
  has(error("QLinearConcat", {"neg", "z", "a", "s", "z"}, {attr("axis", int64_t{0})}),
      "Y_scale (input 0) is -0.5: a scale must be positive and finite");
  has(error("QLinearGlobalAveragePool", {"a", "", "z", "s"}), "x_scale (input 1) is required");
  // Softmax's opset is required (onnxruntime's kernel reads it); its axis must fit X.
  has(error("QLinearSoftmax", {"a", "s", "z", "s", "z"}), "attribute 'opset' is required");
  has(error("QLinearSoftmax", {"a", "s", "z", "s", "z"},
            {attr("opset", int64_t{13}), attr("axis", int64_t{2})}),
      "axis 2 is out of range for X of rank 2");
  // Omitted zero points are 0.
  EXPECT_EQ(error("QLinearAdd", {"a", "s", "", "a", "s", "", "s"}), "");
  EXPECT_EQ(error("QLinearSoftmax", {"a", "s", "", "s"}, {attr("opset", int64_t{12})}), "");
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
