// Inference for the integer products: MatMulInteger and ConvInteger give int32, QLinearMatMul
// and QLinearConv the output zero point's dtype, with MatMul's and Conv's extents (symbolic
// ones included); operands, scales and zero points of the wrong dtype or length fail naming the
// node and the input.
#include <gtest/gtest.h>

#include "graph/infer_builder.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::infer;
using testing::infer_error;
using testing::node;
using testing::node_with;
using testing::OneNode;
using Ints = std::vector<int64_t>;
using Dims = std::vector<testing::DimSpec>;

TEST(InferIntegerProducts, MatMulIntegerIsInt32WithMatMulsExtents) {
  OneNode g;
  g.input("a", DType::uint8, {"N", "S", 64}).input("b", DType::int8, {64, 10});
  g.input("za", DType::uint8, {}).input("zb", DType::int8, {10});
  g.node(node("MatMulInteger", {"a", "b", "za", "zb"}, {"y"})).output("y");
  EXPECT_EQ(infer(g.graph)->type_of("y"), "int32[N,S,10]");
}

TEST(InferIntegerProducts, QLinearMatMulHasTheOutputZeroPointsDtype) {
  OneNode g;
  g.input("a", DType::uint8, {2, 3}).input("sa", DType::float32, {}).input("za", DType::uint8, {});
  g.input("b", DType::int8, {5, 3, 4}).input("sb", DType::float32, {4});
  g.input("zb", DType::int8, {4}).input("sy", DType::float32, {}).input("zy", DType::int8, {});
  g.node(node("QLinearMatMul", {"a", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}));
  g.output("y");
  EXPECT_EQ(infer(g.graph)->type_of("y"), "int8[5,2,4]");
}

TEST(InferIntegerProducts, ConvIntegerAndQLinearConvHaveConvsExtents) {
  OneNode g;
  g.input("x", DType::uint8, {"N", 4, "H", 9}).input("w", DType::int8, {8, 2, 3, 3});
  g.input("zx", DType::uint8, {}).input("zw", DType::int8, {8});
  g.node(node_with(
      "ConvInteger", {"x", "w", "zx", "zw"}, {"y"},
      {attr("group", int64_t{2}), attr("pads", Ints{1, 1, 1, 1}), attr("strides", Ints{2, 2})}));
  g.input("sx", DType::float32, {}).input("sw", DType::float32, {8});
  g.input("sy", DType::float32, {}).input("zy", DType::uint8, {}).input("bias", DType::int32, {8});
  g.node(node_with("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"}, {"q"},
                   {attr("group", int64_t{2}), attr("auto_pad", "SAME_UPPER")}));
  g.output("y").output("q");
  const auto r = infer(g.graph);
  EXPECT_EQ(r->type_of("y"), "int32[N,8,floor((H-1)/2)+1,5]");
  EXPECT_EQ(r->type_of("q"), "uint8[N,8,H,9]");
}

std::string matmul_integer_error(DType a, DType b, const Dims& za, DType za_type, const Dims& zb,
                                 DType zb_type) {
  OneNode g;
  g.input("a", a, {2, 3}).input("b", b, {3, 4});
  g.input("za", za_type, za).input("zb", zb_type, zb);
  g.node(node("MatMulInteger", {"a", "b", "za", "zb"}, {"y"}, "mmi")).output("y");
  return infer_error(g.graph);
}

void expect_names(const std::string& e, const std::vector<std::string>& parts) {
  EXPECT_NE(e.find("'mmi'"), std::string::npos) << e;
  for (const auto& p : parts) EXPECT_NE(e.find(p), std::string::npos) << e;
}

TEST(InferIntegerProducts, ZeroPointDtypeMustBeItsTensors) {
  expect_names(matmul_integer_error(DType::uint8, DType::int8, {}, DType::int8, {}, DType::int8),
               {"'a_zero_point' is int8", "not the dtype of 'a'"});
  expect_names(matmul_integer_error(DType::uint8, DType::int8, {}, DType::uint8, {}, DType::uint8),
               {"'b_zero_point' is uint8"});
}

TEST(InferIntegerProducts, ZeroPointLengthMustFitRowsOrColumns) {
  // Per row of A [2, 3]: [2]; per column of B [3, 4]: [4].
  OneNode ok;
  ok.input("a", DType::uint8, {2, 3}).input("b", DType::uint8, {3, 4});
  ok.input("za", DType::uint8, {2}).input("zb", DType::uint8, {1, 4});
  ok.node(node("MatMulInteger", {"a", "b", "za", "zb"}, {"y"})).output("y");
  EXPECT_EQ(infer(ok.graph)->type_of("y"), "int32[2,4]");
  expect_names(
      matmul_integer_error(DType::uint8, DType::uint8, {3}, DType::uint8, {}, DType::uint8),
      {"'a_zero_point' [3]", "per row", "of [2,3]"});
  expect_names(
      matmul_integer_error(DType::uint8, DType::uint8, {}, DType::uint8, {3}, DType::uint8),
      {"'b_zero_point' [3]", "per column", "of [3,4]"});
}

// QLinearConv over x [1, 1, 4, 4] and w [2, 1, 3, 3] with x_scale of `x_scale` and w_zero_point
// of `w_zero_points` values.
std::string qlinear_conv_error(DType x_scale, int w_zero_points) {
  OneNode g;
  g.input("x", DType::uint8, {1, 1, 4, 4}).input("sx", x_scale, {});
  g.input("zx", DType::uint8, {}).input("w", DType::uint8, {2, 1, 3, 3});
  g.input("sw", DType::float32, {2}).input("zw", DType::uint8, {w_zero_points});
  g.input("sy", DType::float32, {}).input("zy", DType::uint8, {});
  g.node(node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"}, {"y"}, "qc"));
  g.output("y");
  return infer_error(g.graph);
}

TEST(InferIntegerProducts, OperandsAndScalesOfOtherDtypesFail) {
  expect_names(
      matmul_integer_error(DType::float32, DType::uint8, {}, DType::float32, {}, DType::uint8),
      {"'a' is float", "not uint8 or int8"});
  const std::string e = qlinear_conv_error(DType::float16, 2);
  EXPECT_NE(e.find("'qc'"), std::string::npos) << e;
  EXPECT_NE(e.find("'x_scale' is float16, not float32"), std::string::npos) << e;
  // The per-channel zero point of the wrong length, once the scale is right.
  const std::string f = qlinear_conv_error(DType::float32, 3);
  EXPECT_NE(f.find("'w_zero_point' [3] is not a scalar or one value per output channel"),
            std::string::npos)
      << f;
}

}  // namespace
}  // namespace footprint
