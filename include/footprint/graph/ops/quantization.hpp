#pragma once
// What a QuantizeLinear or DequantizeLinear node asks for (ONNX opsets 10 to 25, and the same
// ops of the com.microsoft domain, which onnxruntime's quantizer emits with the same attributes),
// decoded once: the quantized and float dtypes, and from the operands' extents whether the scale
// applies to the whole tensor, per slice along an axis, or per block of that axis. Shape
// inference and the kernel both take it, so a model inference accepts is one the kernel runs the
// same way, and a bad one is refused naming the node and the input at fault.
//
//   const auto q = graph::ops::LinearQuantization::decode(node, node_id, QuantizeOp::dequantize,
//                                                         x.dtype, scale.dtype, zp_dtype);
//   const QuantLayout l =
//       *q.layout(node, node_id, Extents::of(x.dims), Extents::of(scale.dims), zp_extents);
//   // x seen as [outer, x.dims[l.axis], inner]: element (o, a, i) uses scale element
//   //   per_tensor: 0; per_axis: a; blocked: (o * l.blocks + a / l.block) * inner + i
//   graph::ops::check_scale(node, node_id, QuantizeOp::dequantize, k, scale_k);  // k-th scale
//
// Attributes are read whatever the opset (a node of an opset without `axis` has none, and then
// gets the default, 1), so one decoder serves every version and both domains.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "footprint/core/dtype.hpp"
#include "footprint/core/shape.hpp"

namespace footprint::graph {
struct Node;
}

namespace footprint::graph::ops {

enum class QuantizeOp : uint8_t { quantize, dequantize };
enum class QuantGranularity : uint8_t { per_tensor, per_axis, blocked };

// The extents of a tensor, some possibly unknown (inference's symbolic dims) or all known (a
// kernel's); a view, so the kernel decodes without allocating. An unranked shape has no rank.
class Extents {
 public:
  static Extents of(const Shape& s) { return Extents(s); }
  static Extents of(std::span<const int64_t> dims) { return Extents(dims); }
  bool ranked() const { return ranked_; }
  size_t rank() const { return rank_; }
  std::optional<int64_t> at(size_t d) const;
  // "[2,?,4]", an unknown extent as "?", for messages.
  std::string to_string() const;

 private:
  explicit Extents(const Shape& s) : ranked_(s.ranked), rank_(s.rank()), dims_(s.dims.data()) {}
  explicit Extents(std::span<const int64_t> dims)
      : ranked_(true), rank_(dims.size()), values_(dims.data()) {}
  bool ranked_ = false;
  size_t rank_ = 0;
  const Dim* dims_ = nullptr;
  const int64_t* values_ = nullptr;
};

// Which scale element applies where (the example above); per tensor, the axis and blocks are
// unused.
struct QuantLayout {
  QuantGranularity granularity = QuantGranularity::per_tensor;
  size_t axis = 0;     // normalised; per_axis and blocked
  int64_t block = 0;   // blocked: elements of the axis sharing one scale
  int64_t blocks = 0;  // blocked: the scale's extent on the axis, ceil(extent / block)
};

struct LinearQuantization {
  QuantizeOp op = QuantizeOp::quantize;
  int64_t axis = 1;                    // as given; normalised against x's rank by layout()
  int64_t block_size = 0;              // 0: not blocked
  DType quantized = DType::undefined;  // QuantizeLinear's y, DequantizeLinear's x
  DType real = DType::undefined;       // QuantizeLinear's x, DequantizeLinear's y
  DType scale = DType::undefined;
  // QuantizeLinear: the float type x / scale is computed in (rounded to): the `precision`
  // attribute, else the scale's type, as the spec says.
  DType precision = DType::undefined;
  bool has_zero_point = false;

  // From the node's attributes and its operands' dtypes (undefined where not known; `zero_point`
  // undefined when the node has none). Fails naming the node and the input on a dtype the op
  // does not allow: a zero point of another type than the quantized one, an `output_dtype` the
  // zero point contradicts, a scale that is not a float. Types the spec allows but footprint
  // does not run (float8) are accepted here: the kernel's row declares what it runs.
  static LinearQuantization decode(const Node& n, int32_t node_id, QuantizeOp op, DType x_type,
                                   DType scale_type, DType zero_point_type);

  // The granularity from x's and the scale's extents, checking where they are known that the
  // scale fits x (a 1-D scale of the axis' extent, a blocked one of x's shape with
  // ceil(extent / block_size) on the axis), the axis is within x's rank, and the zero point has
  // the scale's shape. nullopt when x or the scale has no known rank (inference only).
  std::optional<QuantLayout> layout(const Node& n, int32_t node_id, const Extents& x,
                                    const Extents& scale_extents,
                                    std::optional<Extents> zero_point_extents) const;
};

// Fails naming the node and its scale input when element `index` of the scale, `value`, is not
// positive and finite (zero, negative, NaN, infinite): no such scale quantizes anything.
void check_scale(const Node& n, int32_t node_id, QuantizeOp op, size_t index, double value);

// Whether `t` is a type QuantizeLinear may produce and DequantizeLinear read (the integer types
// of 4 to 16 bits, int32 for DequantizeLinear, the float8 and float4 types).
bool is_quantized_type(QuantizeOp op, DType t);

// The name of input `i` of the op as the spec calls it ("x_scale (input 1)"), for messages.
const char* quantization_input_name(QuantizeOp op, size_t i);

}  // namespace footprint::graph::ops
