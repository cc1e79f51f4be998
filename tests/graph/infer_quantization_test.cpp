// Inference for QuantizeLinear and DequantizeLinear (ONNX and com.microsoft domains): the output
// dtype from the zero point, `output_dtype` or the scale, the shape kept (symbolic dims too), and
// the operands graph::ops::LinearQuantization refuses, each error naming the node and the input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "graph/infer_builder.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::infer;
using testing::infer_error;
using testing::node;
using testing::node_with;
using testing::OneNode;
using testing::raw_tensor;
using testing::Wire;

// x: float [N, 3, 4] (QuantizeLinear) or int8 (DequantizeLinear); scale and zero point as given.
struct QdqGraph {
  OneNode g;
  explicit QdqGraph(DType x, const std::vector<testing::DimSpec>& dims = {"N", 3, 4}) {
    g.input("x", x, dims);
  }
  QdqGraph& scale(DType t, const std::vector<testing::DimSpec>& dims) {
    g.input("s", t, dims);
    return *this;
  }
  QdqGraph& zero_point(DType t, const std::vector<testing::DimSpec>& dims) {
    g.input("zp", t, dims);
    return *this;
  }
  QdqGraph& initializer(const Wire& w) {
    g.initializer(w);
    return *this;
  }
  // The node, named "q", reading x, s and (when `with_zp`) zp, written to "y".
  QdqGraph& op(std::string_view op_type, bool with_zp, const std::vector<Wire>& attrs = {},
               std::string_view domain = {}) {
    std::vector<std::string_view> in{"x", "s"};
    if (with_zp) in.push_back("zp");
    Wire n = node_with(op_type, in, {"y"}, attrs, "q");
    if (!domain.empty()) n.str(7, domain);
    g.node(n).output("y");
    return *this;
  }
  std::string type() const { return infer(g.graph)->type_of("y"); }
  std::string error() const { return infer_error(g.graph); }
};

bool has(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

TEST(InferQuantization, OutputDtypeFromZeroPointAttributeOrScale) {
  // No zero point, no output_dtype: uint8.
  EXPECT_EQ(QdqGraph(DType::float32).scale(DType::float32, {}).op("QuantizeLinear", false).type(),
            "uint8[N,3,4]");
  EXPECT_EQ(QdqGraph(DType::float32)
                .scale(DType::float32, {})
                .zero_point(DType::int4, {})
                .op("QuantizeLinear", true)
                .type(),
            "int4[N,3,4]");
  const int64_t int16 = static_cast<int64_t>(DType::int16);
  EXPECT_EQ(QdqGraph(DType::float16)
                .scale(DType::float16, {})
                .op("QuantizeLinear", false, {attr("output_dtype", int16)})
                .type(),
            "int16[N,3,4]");
  // DequantizeLinear: the scale's type, or output_dtype (opset 23).
  EXPECT_EQ(QdqGraph(DType::uint4).scale(DType::float16, {}).op("DequantizeLinear", false).type(),
            "float16[N,3,4]");
  const int64_t bf16 = static_cast<int64_t>(DType::bfloat16);
  EXPECT_EQ(QdqGraph(DType::int8)
                .scale(DType::float32, {})
                .op("DequantizeLinear", false, {attr("output_dtype", bf16)})
                .type(),
            "bfloat16[N,3,4]");
}

TEST(InferQuantization, MicrosoftDomainReadsTheSameWay) {
  EXPECT_EQ(QdqGraph(DType::float32)
                .scale(DType::float32, {4})
                .zero_point(DType::int8, {4})
                .op("QuantizeLinear", true, {attr("axis", int64_t{-1})}, "com.microsoft")
                .type(),
            "int8[N,3,4]");
  EXPECT_EQ(QdqGraph(DType::uint8)
                .scale(DType::float32, {3})
                .op("DequantizeLinear", false, {}, "com.microsoft")
                .type(),
            "float[N,3,4]");
  // And refuses the same: a 4-element scale on axis 1 (extent 3).
  EXPECT_TRUE(has(QdqGraph(DType::uint8)
                      .scale(DType::float32, {4})
                      .op("DequantizeLinear", false, {}, "com.microsoft")
                      .error(),
                  "x_scale (input 1) has 4 elements but x has 3 along axis 1"));
}

TEST(InferQuantization, PerAxisScaleMustHaveTheAxisExtent) {
  EXPECT_EQ(QdqGraph(DType::int8).scale(DType::float32, {3}).op("DequantizeLinear", false).type(),
            "float[N,3,4]")
      << "axis 1 by default";
  EXPECT_EQ(QdqGraph(DType::int8)
                .scale(DType::float32, {"N"})
                .op("DequantizeLinear", false, {attr("axis", int64_t{0})})
                .type(),
            "float[N,3,4]")
      << "a symbolic extent is not refused";
  const std::string e = QdqGraph(DType::int8)
                            .scale(DType::float32, {4})
                            .op("DequantizeLinear", false, {attr("axis", int64_t{1})})
                            .error();
  EXPECT_TRUE(has(e,
                  "node 'q' (DequantizeLinear): x_scale (input 1) has 4 elements but x has 3 "
                  "along axis 1"))
      << e;
  EXPECT_TRUE(has(QdqGraph(DType::float32)
                      .scale(DType::float32, {3})
                      .op("QuantizeLinear", false, {attr("axis", int64_t{3})})
                      .error(),
                  "node 'q' (QuantizeLinear): axis 3 is out of range for x of rank 3"));
  EXPECT_TRUE(has(QdqGraph(DType::float32)
                      .scale(DType::float32, {3})
                      .op("QuantizeLinear", false, {attr("axis", int64_t{-4})})
                      .error(),
                  "axis -4 is out of range"));
  EXPECT_TRUE(
      has(QdqGraph(DType::int8).scale(DType::float32, {3, 4}).op("DequantizeLinear", false).error(),
          "x_scale (input 1) has shape [3,4]: without block_size a scale is a scalar or a "
          "1-D tensor"));
}

TEST(InferQuantization, BlockedScaleHasCeilOfExtentOverBlockOnTheAxis) {
  const auto blocked = [](const std::vector<testing::DimSpec>& scale, int64_t block, int64_t axis) {
    return QdqGraph(DType::int4, {4, 6})
        .scale(DType::float32, scale)
        .op("DequantizeLinear", false, {attr("block_size", block), attr("axis", axis)});
  };
  EXPECT_EQ(blocked({4, 2}, 3, 1).type(), "float[4,6]");
  EXPECT_EQ(blocked({4, 2}, 4, 1).type(), "float[4,6]") << "a last block of 2 (ceil(6/4) = 2)";
  EXPECT_EQ(blocked({1, 6}, 4, 0).type(), "float[4,6]");
  const std::string e = blocked({4, 2}, 2, 1).error();
  EXPECT_TRUE(has(e,
                  "node 'q' (DequantizeLinear): block_size 2 splits x's extent 6 along axis 1 "
                  "into 3 blocks but x_scale (input 1) has 2"))
      << e;
  EXPECT_TRUE(has(blocked({3, 2}, 3, 1).error(),
                  "x_scale (input 1) has shape [3,2] but x has [4,6]: they differ off the blocked "
                  "axis 1"));
  EXPECT_TRUE(has(blocked({2}, 3, 1).error(), "a blocked scale has x's rank"));
  EXPECT_TRUE(has(blocked({4, 2}, -3, 1).error(), "block_size -3 is negative"));
}

TEST(InferQuantization, ZeroPointOfTheQuantizedTypeAndTheScaleShape) {
  EXPECT_TRUE(has(QdqGraph(DType::int8)
                      .scale(DType::float32, {})
                      .zero_point(DType::uint8, {})
                      .op("DequantizeLinear", true)
                      .error(),
                  "node 'q' (DequantizeLinear): x_zero_point (input 2) is uint8 but x is int8: "
                  "they must be one type"));
  EXPECT_TRUE(has(QdqGraph(DType::float32)
                      .scale(DType::float32, {})
                      .zero_point(DType::float32, {})
                      .op("QuantizeLinear", true)
                      .error(),
                  "y_zero_point (input 2) is float, not a quantized type"));
  const int64_t uint8 = static_cast<int64_t>(DType::uint8);
  EXPECT_TRUE(has(QdqGraph(DType::float32)
                      .scale(DType::float32, {})
                      .zero_point(DType::int8, {})
                      .op("QuantizeLinear", true, {attr("output_dtype", uint8)})
                      .error(),
                  "y_zero_point (input 2) is int8 but output_dtype is uint8"));
  EXPECT_TRUE(has(QdqGraph(DType::float32)
                      .scale(DType::float32, {})
                      .op("QuantizeLinear", false, {attr("output_dtype", int64_t{1})})
                      .error(),
                  "output_dtype 1 is not a quantized type"));
  EXPECT_TRUE(has(QdqGraph(DType::uint8)
                      .scale(DType::float32, {3})
                      .zero_point(DType::uint8, {2})
                      .op("DequantizeLinear", true)
                      .error(),
                  "x_zero_point (input 2) has shape [2] but x_scale (input 1) has [3]"));
  EXPECT_TRUE(
      has(QdqGraph(DType::uint8).scale(DType::int32, {}).op("DequantizeLinear", false).error(),
          "x_scale (input 1) is int32: a scale is float, float16 or bfloat16"));
  EXPECT_TRUE(
      has(QdqGraph(DType::float64).scale(DType::float32, {}).op("QuantizeLinear", false).error(),
          "x (input 0) is double"));
  // A one-element scale and zero point apply per tensor whatever their rank.
  EXPECT_EQ(QdqGraph(DType::uint8)
                .scale(DType::float32, {1})
                .zero_point(DType::uint8, {})
                .op("DequantizeLinear", true)
                .type(),
            "float[N,3,4]");
}

// A scale known while inferring (an initializer) that is zero, negative, NaN or infinite.
std::string known_scale_error(const std::vector<float>& scale) {
  QdqGraph g(DType::int8, {2, 3});
  const int64_t n = static_cast<int64_t>(scale.size());
  g.initializer(raw_tensor<float>(
      "s", DType::float32, scale.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{n},
      scale));
  return g.op("DequantizeLinear", false).error();
}

TEST(InferQuantization, KnownScalesMustBePositiveAndFinite) {
  EXPECT_EQ(known_scale_error({0.5F}), "");
  EXPECT_TRUE(has(known_scale_error({0.0F}),
                  "node 'q' (DequantizeLinear): x_scale (input 1) element 0 is 0: a scale "
                  "must be positive and finite"));
  EXPECT_TRUE(has(known_scale_error({1, -1, 2}), "x_scale (input 1) element 1 is -1"));
  EXPECT_TRUE(
      has(known_scale_error({1, 1, std::numeric_limits<float>::quiet_NaN()}), "element 2 is nan"));
  EXPECT_TRUE(has(known_scale_error({std::numeric_limits<float>::infinity()}), "element 0 is inf"));
}

}  // namespace
}  // namespace footprint
