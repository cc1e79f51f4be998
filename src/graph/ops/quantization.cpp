// Quantization: the shape is the input's; the dtype is the zero point's (QuantizeLinear) or the
// scale's (DequantizeLinear).
#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

void infer_quantize(const InferContext& ctx, InferResult& r) {
  const DType dtype = ctx.has_input(2) ? ctx.input(2).dtype : DType::uint8;
  set_output(r, 0, dtype, ctx.input(0).shape);
}

void infer_dequantize(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, ctx.input(1).dtype, ctx.input(0).shape);
}

// y (uint8, the input's shape), y_scale (float scalar), y_zero_point (uint8 scalar).
void infer_dynamic_quantize(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, DType::uint8, ctx.input(0).shape);
  set_output(r, 1, DType::float32, ranked({}));
  set_output(r, 2, DType::uint8, ranked({}));
}

}  // namespace

void register_quantization(OpRegistry& r) {
  r.add(op("QuantizeLinear", 2, 3, infer_quantize));
  r.add(op("DequantizeLinear", 2, 3, infer_dequantize));
  r.add(op("DynamicQuantizeLinear", 1, 1, infer_dynamic_quantize, 3, 3));
}

}  // namespace footprint::graph::ops
