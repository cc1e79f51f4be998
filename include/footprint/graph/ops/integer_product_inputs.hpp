#pragma once
// The operands of the integer products (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv,
// and onnxruntime's QGemm and MatMulIntegerToFloat):
// which input holds what, and which forms a scale or zero point may take.
//
// Inference checks the dtypes and the extents it knows; the kernel checks the concrete extents
// when preparing and reads each parameter through the same spread, so the forms a model may use
// are written once.
//
//   const auto in = graph::ops::IntegerProductInputs::of(graph::ops::IntegerProduct::qlinear_conv);
//   const auto spread = graph::ops::spread_of(zero_point_dims, w_dims, in.role(in.b_zero));
//   if (!spread) fail("input 'w_zero_point' ...");
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "footprint/core/dtype.hpp"

namespace footprint::graph::ops {

// The ONNX ops, then onnxruntime's (com.microsoft): QGemm, a QLinearMatMul of matrices with
// Gemm's transA, transB and alpha, an int32 C and a float output when y_scale is omitted;
// MatMulIntegerToFloat, a MatMulInteger whose sums are scaled to float, plus a float bias.
enum class IntegerProduct : uint8_t {
  matmul_integer,
  conv_integer,
  qlinear_matmul,
  qlinear_conv,
  qgemm,
  matmul_integer_to_float
};

// How a parameter of a tensor is laid over it.
enum class ParamAxis : uint8_t {
  tensor,   // one value (x of a convolution, its output)
  rows,     // of a matrix product's A or Y: a scalar, one per row [M], or [..., M, 1]
  columns,  // of a matrix product's B: a scalar, one per column [N], or [..., 1, N]
  channels  // of a convolution's weights: a scalar or one per output channel [M]
};

// How a valid parameter spreads: one value, one per row / column / channel (a 1-D tensor), or one
// per row / column of every matrix of the batch (the tensor's own batch extents).
enum class Spread : uint8_t { one, per_axis, per_matrix };

// Where the operands are among the node's inputs; -1: the op has no such input.
struct IntegerProductInputs {
  IntegerProduct op = IntegerProduct::matmul_integer;
  int a = 0, a_scale = -1, a_zero = -1;
  int b = 1, b_scale = -1, b_zero = -1;
  int y_scale = -1, y_zero = -1, bias = -1;

  static IntegerProductInputs of(IntegerProduct op);
  bool conv() const {
    return op == IntegerProduct::conv_integer || op == IntegerProduct::qlinear_conv;
  }
  // Whether the op has an output scale (QGemm's is optional: without it Y is float).
  bool quantized_output() const { return y_scale >= 0; }
  // Whether the op scales its sums: its a_scale and b_scale are required.
  bool scaled() const { return a_scale >= 0; }
  // The ONNX name of input i ("x_zero_point"), for messages.
  std::string name(int i) const;
  // How the parameter at input i lies over its tensor.
  ParamAxis axis(int i) const;
};

// The spread of a parameter of extents `param` over a tensor of extents `tensor` (a matrix
// product's operand as stored: 1-D operands are promoted as MatMul does), or nullopt when it is
// none of the forms `axis` allows.
std::optional<Spread> spread_of(const std::vector<int64_t>& param,
                                const std::vector<int64_t>& tensor, ParamAxis axis);

// What the forms `axis` allows are, for messages: "a scalar or one value per row".
std::string spread_forms(ParamAxis axis);

// Whether a quantized operand's dtype is one the integer products take (uint8, int8).
bool integer_operand_dtype(DType t);

}  // namespace footprint::graph::ops
