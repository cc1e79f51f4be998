// Quantization: the shape is the input's; the dtype is the quantized type (QuantizeLinear: the
// zero point's, `output_dtype`, else uint8) or the float one (DequantizeLinear: `output_dtype`,
// else the scale's). QuantizeLinear and DequantizeLinear are decoded by LinearQuantization
// (graph/ops/quantization.hpp), which the kernels take too; the com.microsoft rows are the same
// ops with the same attributes.
#include "footprint/graph/ops/quantization.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "families.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

[[noreturn]] void fail(const Node& n, int32_t node_id, const std::string& what) {
  throw Error("node " + n.label(node_id) + ": " + what);
}

std::string type_name(DType t) {
  return std::string(dtype_name(t));
}

bool is_real_type(DType t) {
  return t == DType::float32 || t == DType::float16 || t == DType::bfloat16;
}

// A scale or zero point of one element (every extent 1; a scalar).
bool single_element(const Extents& e) {
  for (size_t d = 0; d < e.rank(); ++d) {
    if (e.at(d) != 1) return false;
  }
  return true;
}

}  // namespace

std::optional<int64_t> Extents::at(size_t d) const {
  if (d >= rank_) return std::nullopt;
  if (values_ != nullptr) return values_[d];
  return dims_[d].value();
}

std::string Extents::to_string() const {
  std::string s = "[";
  for (size_t d = 0; d < rank(); ++d) {
    if (d != 0) s += ',';
    const auto v = at(d);
    s += v ? std::to_string(*v) : "?";
  }
  return s + "]";
}

bool is_quantized_type(QuantizeOp op, DType t) {
  switch (t) {
    case DType::int8:
    case DType::uint8:
    case DType::int16:
    case DType::uint16:
    case DType::int4:
    case DType::uint4:
    case DType::float8e4m3fn:
    case DType::float8e4m3fnuz:
    case DType::float8e5m2:
    case DType::float8e5m2fnuz:
    case DType::float4e2m1:
      return true;
    case DType::int32:
      return op == QuantizeOp::dequantize;
    default:
      return false;
  }
}

const char* quantization_input_name(QuantizeOp op, size_t i) {
  const bool q = op == QuantizeOp::quantize;
  switch (i) {
    case 0:
      return "x (input 0)";
    case 1:
      return q ? "y_scale (input 1)" : "x_scale (input 1)";
    default:
      return q ? "y_zero_point (input 2)" : "x_zero_point (input 2)";
  }
}

LinearQuantization LinearQuantization::decode(const Node& n, int32_t node_id, QuantizeOp op,
                                              DType x_type, DType scale_type,
                                              DType zero_point_type) {
  const auto name = [&](size_t i) { return std::string(quantization_input_name(op, i)); };
  LinearQuantization q;
  q.op = op;
  q.axis = attr_int(n, "axis", 1);
  q.block_size = attr_int(n, "block_size", 0);
  if (q.block_size < 0) {
    fail(n, node_id, "block_size " + std::to_string(q.block_size) + " is negative");
  }
  q.scale = scale_type;
  q.has_zero_point = zero_point_type != DType::undefined;
  if (scale_type != DType::undefined && !is_real_type(scale_type)) {
    fail(n, node_id,
         name(1) + " is " + type_name(scale_type) + ": a scale is float, float16 or bfloat16");
  }
  if (q.has_zero_point && !is_quantized_type(op, zero_point_type)) {
    fail(n, node_id, name(2) + " is " + type_name(zero_point_type) + ", not a quantized type");
  }
  const auto output_dtype = static_cast<int32_t>(attr_int(n, "output_dtype", 0));
  const auto out = static_cast<DType>(output_dtype);
  if (op == QuantizeOp::quantize) {
    if (x_type != DType::undefined && !is_real_type(x_type) && x_type != DType::int32) {
      fail(n, node_id,
           name(0) + " is " + type_name(x_type) + ": QuantizeLinear reads float, float16, " +
               "bfloat16 or int32");
    }
    q.real = x_type;
    if (output_dtype != 0 && (!is_known_dtype(output_dtype) || !is_quantized_type(op, out))) {
      fail(n, node_id, "output_dtype " + std::to_string(output_dtype) + " is not a quantized type");
    }
    if (output_dtype != 0 && q.has_zero_point && zero_point_type != out) {
      fail(n, node_id,
           name(2) + " is " + type_name(zero_point_type) + " but output_dtype is " +
               type_name(out) + ": they must be one type");
    }
    q.quantized = q.has_zero_point ? zero_point_type : output_dtype != 0 ? out : DType::uint8;
    const auto precision = static_cast<int32_t>(attr_int(n, "precision", 0));
    if (precision != 0 &&
        (!is_known_dtype(precision) || !is_real_type(static_cast<DType>(precision)))) {
      fail(n, node_id,
           "precision " + std::to_string(precision) + " is not float, float16 or bfloat16");
    }
    q.precision = precision != 0 ? static_cast<DType>(precision) : scale_type;
    return q;
  }
  if (x_type != DType::undefined && !is_quantized_type(op, x_type)) {
    fail(n, node_id, name(0) + " is " + type_name(x_type) + ", not a quantized type");
  }
  if (x_type != DType::undefined && q.has_zero_point && zero_point_type != x_type) {
    fail(n, node_id,
         name(2) + " is " + type_name(zero_point_type) + " but x is " + type_name(x_type) +
             ": they must be one type");
  }
  q.quantized = x_type;
  if (output_dtype != 0 && (!is_known_dtype(output_dtype) || !is_real_type(out))) {
    fail(n, node_id,
         "output_dtype " + std::to_string(output_dtype) + " is not float, float16 or bfloat16");
  }
  q.real = output_dtype != 0 ? out : scale_type;
  return q;
}

std::optional<QuantLayout> LinearQuantization::layout(
    const Node& n, int32_t node_id, const Extents& x, const Extents& scale_extents,
    std::optional<Extents> zero_point_extents) const {
  const auto name = [&](size_t i) { return std::string(quantization_input_name(op, i)); };
  if (!x.ranked() || !scale_extents.ranked()) return std::nullopt;
  QuantLayout l;
  // A scale of one element applies to the whole tensor, whatever its rank (as the reference
  // implementation and onnxruntime read it).
  if (!single_element(scale_extents)) {
    const auto rank = static_cast<int64_t>(x.rank());
    if (axis < -rank || axis >= rank) {
      fail(n, node_id,
           "axis " + std::to_string(axis) + " is out of range for x of rank " +
               std::to_string(rank));
    }
    l.axis = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    const auto extent = x.at(l.axis);
    if (block_size == 0) {
      if (scale_extents.rank() != 1) {
        fail(n, node_id,
             name(1) + " has shape " + scale_extents.to_string() +
                 ": without block_size a scale is a scalar or a 1-D tensor");
      }
      l.granularity = QuantGranularity::per_axis;
      const auto len = scale_extents.at(0);
      if (len && extent && *len != *extent) {
        fail(n, node_id,
             name(1) + " has " + std::to_string(*len) + " elements but x has " +
                 std::to_string(*extent) + " along axis " + std::to_string(l.axis));
      }
    } else {
      if (scale_extents.rank() != x.rank()) {
        fail(n, node_id,
             name(1) + " has shape " + scale_extents.to_string() + " but x has " + x.to_string() +
                 ": a blocked scale has x's rank");
      }
      l.granularity = QuantGranularity::blocked;
      l.block = block_size;
      for (size_t d = 0; d < x.rank(); ++d) {
        const auto s = scale_extents.at(d);
        const auto e = x.at(d);
        if (!s || !e) continue;
        const int64_t want = d == l.axis ? *e / block_size + (*e % block_size != 0 ? 1 : 0) : *e;
        if (*s == want) continue;
        if (d == l.axis) {
          fail(n, node_id,
               "block_size " + std::to_string(block_size) + " splits x's extent " +
                   std::to_string(*e) + " along axis " + std::to_string(d) + " into " +
                   std::to_string(want) + " blocks but " + name(1) + " has " + std::to_string(*s));
        }
        fail(n, node_id,
             name(1) + " has shape " + scale_extents.to_string() + " but x has " + x.to_string() +
                 ": they differ off the blocked axis " + std::to_string(l.axis));
      }
      l.blocks = scale_extents.at(l.axis).value_or(0);
    }
  }
  if (zero_point_extents && zero_point_extents->ranked()) {
    bool same = single_element(*zero_point_extents) && single_element(scale_extents);
    if (!same && zero_point_extents->rank() == scale_extents.rank()) {
      same = true;
      for (size_t d = 0; d < scale_extents.rank(); ++d) {
        const auto a = scale_extents.at(d);
        const auto b = zero_point_extents->at(d);
        if (a && b && *a != *b) same = false;
      }
    }
    if (!same) {
      fail(n, node_id,
           name(2) + " has shape " + zero_point_extents->to_string() + " but " + name(1) + " has " +
               scale_extents.to_string() + ": they must have one shape");
    }
  }
  return l;
}

void check_scale(const Node& n, int32_t node_id, QuantizeOp op, size_t index, double value) {
  if (value > 0 && std::isfinite(value)) return;
  std::ostringstream v;  // shortest: "0", "-0.5", "1e-45", "nan", "inf"
  v << value;
  fail(n, node_id,
       std::string(quantization_input_name(op, 1)) + " element " + std::to_string(index) + " is " +
           v.str() + ": a scale must be positive and finite");
}

namespace {

template <QuantizeOp kOp>
void infer_linear_quantization(const InferContext& ctx, InferResult& r) {
  const DType zp = ctx.has_input(2) ? ctx.input(2).dtype : DType::undefined;
  const auto q = LinearQuantization::decode(ctx.node, ctx.node_id, kOp, ctx.input(0).dtype,
                                            ctx.input(1).dtype, zp);
  std::optional<Extents> zp_extents;
  if (ctx.has_input(2)) zp_extents = Extents::of(ctx.input(2).shape);
  q.layout(ctx.node, ctx.node_id, Extents::of(ctx.input(0).shape), Extents::of(ctx.input(1).shape),
           zp_extents);
  // Scales known now (constants small enough to hold) are checked now; the kernel checks the
  // others when it is prepared or runs.
  if (const KnownValue* s = ctx.value(1)) {
    for (size_t i = 0; i < s->numel(); ++i) {
      if (const auto v = s->real(i)) check_scale(ctx.node, ctx.node_id, kOp, i, *v);
    }
  }
  const DType out = kOp == QuantizeOp::quantize ? q.quantized : q.real;
  set_output(r, 0, out, ctx.input(0).shape);
}

// y (uint8, the input's shape), y_scale (float scalar), y_zero_point (uint8 scalar).
void infer_dynamic_quantize(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, DType::uint8, ctx.input(0).shape);
  set_output(r, 1, DType::float32, ranked({}));
  set_output(r, 2, DType::uint8, ranked({}));
}

}  // namespace

void register_quantization(OpRegistry& r) {
  constexpr auto quantize = infer_linear_quantization<QuantizeOp::quantize>;
  constexpr auto dequantize = infer_linear_quantization<QuantizeOp::dequantize>;
  // Elementwise where the scale and zero point are one value (graph::to_channels_last then moves
  // them; a per-axis or blocked one is not a scalar, and the node stays).
  OpSchema onnx_quantize = op("QuantizeLinear", 2, 3, quantize);
  onnx_quantize.elementwise = true;
  r.add(onnx_quantize);
  OpSchema onnx_dequantize = op("DequantizeLinear", 2, 3, dequantize);
  onnx_dequantize.dequantizes = true;
  onnx_dequantize.elementwise = true;
  r.add(onnx_dequantize);
  r.add(op("DynamicQuantizeLinear", 1, 1, infer_dynamic_quantize, 3, 3));
  // onnxruntime's quantizer writes these for types or axes the ONNX ops of older opsets lack;
  // the semantics and attributes are the ONNX ops'.
  OpSchema ms_quantize = op("QuantizeLinear", 2, 3, quantize);
  ms_quantize.domain = "com.microsoft";
  ms_quantize.elementwise = true;
  r.add(ms_quantize);
  OpSchema ms_dequantize = op("DequantizeLinear", 2, 3, dequantize);
  ms_dequantize.domain = "com.microsoft";
  ms_dequantize.dequantizes = true;
  ms_dequantize.elementwise = true;
  r.add(ms_dequantize);
}

}  // namespace footprint::graph::ops
