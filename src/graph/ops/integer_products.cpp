// Integer products: MatMulInteger and ConvInteger (uint8 / int8 operands less their zero points,
// an int32 result) and QLinearMatMul and QLinearConv (the same product requantized by float32
// scales, or from opset 21 QLinearMatMul's float16 or bfloat16 ones, into the output zero point's
// dtype).
//
// The output's extents are MatMul's and Conv's (matmul_shape, conv_shape); what inference adds
// is the operands' type constraints and the forms their scales and zero points may take
// (graph/ops/integer_product_inputs.hpp), checked wherever the extents are known, so a model
// with a zero point of the wrong dtype or length fails when it is loaded, naming the input.
#include <string>

#include "families.hpp"
#include "footprint/graph/ops/integer_product_inputs.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

void check_operand_dtypes(const InferContext& ctx, const IntegerProductInputs& in) {
  const auto dtype_of = [&](int i) {
    return ctx.has_input(static_cast<size_t>(i)) ? ctx.input(static_cast<size_t>(i)).dtype
                                                 : DType::undefined;
  };
  const auto need = [&](int i, bool ok, const std::string& what) {
    const DType t = dtype_of(i);
    if (t == DType::undefined || ok) return;
    ctx.fail("input '" + in.name(i) + "' is " + std::string(dtype_name(t)) + ", " + what);
  };
  for (const int operand : {in.a, in.b}) {
    need(operand, integer_operand_dtype(dtype_of(operand)), "not uint8 or int8");
  }
  need(in.a_zero, dtype_of(in.a_zero) == dtype_of(in.a),
       "not the dtype of '" + in.name(in.a) + "'");
  need(in.b_zero, dtype_of(in.b_zero) == dtype_of(in.b),
       "not the dtype of '" + in.name(in.b) + "'");
  // QLinearMatMul's scales may be float16 or bfloat16 from opset 21 (T2 = T3 in 21); every other
  // op's are float32.
  const bool sixteen = in.op == IntegerProduct::qlinear_matmul && ctx.opset >= 21;
  const DType a_scale_dtype = dtype_of(in.a_scale);
  for (const int scale : {in.a_scale, in.b_scale, in.y_scale}) {
    if (scale < 0) continue;
    const DType t = dtype_of(scale);
    if (sixteen) {
      need(scale, t == DType::float32 || t == DType::float16 || t == DType::bfloat16,
           "not float32, float16 or bfloat16");
      need(scale, t == a_scale_dtype, "not the dtype of '" + in.name(in.a_scale) + "'");
    } else {
      need(scale, t == DType::float32, "not float32");
    }
  }
  if (in.y_zero >= 0)
    need(in.y_zero, integer_operand_dtype(dtype_of(in.y_zero)), "not uint8 or int8");
  if (in.bias >= 0) need(in.bias, dtype_of(in.bias) == DType::int32, "not int32");
}

// Each scale and zero point against its tensor's extents, where both are known.
void check_param_extents(const InferContext& ctx, const IntegerProductInputs& in, const Shape& y) {
  const auto extents = [&](int i) -> std::optional<std::vector<int64_t>> {
    if (i < 0 || !ctx.has_input(static_cast<size_t>(i))) return std::nullopt;
    return ctx.input(static_cast<size_t>(i)).shape.extents();
  };
  const auto y_extents = y.extents();
  for (const int p : {in.a_scale, in.a_zero, in.b_scale, in.b_zero, in.y_scale, in.y_zero}) {
    const auto param = extents(p);
    if (!param) continue;
    const bool of_y = p == in.y_scale || p == in.y_zero;
    const auto tensor = of_y ? y_extents : extents(p == in.a_scale || p == in.a_zero ? in.a : in.b);
    const ParamAxis axis = in.axis(p);
    // A parameter whose tensor's extents are not known can only be checked for its rank.
    if (!tensor && (axis != ParamAxis::tensor)) continue;
    if (!spread_of(*param, tensor ? *tensor : std::vector<int64_t>{}, axis)) {
      ctx.fail("input '" + in.name(p) + "' " + extents_text(*param) + " is not " +
               spread_forms(axis) + (tensor ? " of " + extents_text(*tensor) : std::string()));
    }
  }
  if (in.bias >= 0) {
    const auto bias = extents(in.bias);
    const auto w = extents(in.b);
    if (bias && w && !w->empty() && (bias->size() != 1 || (*bias)[0] != (*w)[0])) {
      ctx.fail("input 'B' " + extents_text(*bias) + " is not one value per output channel [" +
               std::to_string((*w)[0]) + "]");
    }
  }
}

template <IntegerProduct kOp>
void infer_integer_product(const InferContext& ctx, InferResult& r) {
  const IntegerProductInputs in = IntegerProductInputs::of(kOp);
  check_operand_dtypes(ctx, in);
  const bool has_y_zero = in.y_zero >= 0 && ctx.has_input(static_cast<size_t>(in.y_zero));
  // Without a y_zero_point the output is uint8, as QuantizeLinear's.
  const DType dtype = !in.quantized_output() ? DType::int32
                      : has_y_zero           ? ctx.input(static_cast<size_t>(in.y_zero)).dtype
                                             : DType::uint8;
  const auto a = static_cast<size_t>(in.a);
  const auto b = static_cast<size_t>(in.b);
  if (in.conv()) {
    conv_shape(ctx, r, a, b, dtype);
  } else {
    set_output(r, 0, dtype, matmul_shape(ctx, ctx.input(a).shape, ctx.input(b).shape));
  }
  check_param_extents(ctx, in, r.outputs[0].shape);
}

}  // namespace

void register_integer_products(OpRegistry& r) {
  r.add(op("MatMulInteger", 2, 4, infer_integer_product<IntegerProduct::matmul_integer>));
  r.add(op("ConvInteger", 2, 4, infer_integer_product<IntegerProduct::conv_integer>));
  r.add(op("QLinearMatMul", 8, 8, infer_integer_product<IntegerProduct::qlinear_matmul>));
  r.add(op("QLinearConv", 8, 9, infer_integer_product<IntegerProduct::qlinear_conv>));
  // QLinearConv on channels-last x and Y [N, H, W, C] (graph::to_channels_last), its attributes
  // and its other inputs QLinearConv's.
  OpSchema nhwc = op("NhwcQLinearConv", 8, 9, [](const InferContext& ctx, InferResult& out) {
    infer_channels_last(ctx, out, infer_integer_product<IntegerProduct::qlinear_conv>, 1);
  });
  nhwc.domain = "footprint";
  r.add(nhwc);
}

}  // namespace footprint::graph::ops
