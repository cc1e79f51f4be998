#include "footprint/graph/ops/integer_product_inputs.hpp"

#include <functional>
#include <numeric>

namespace footprint::graph::ops {

IntegerProductInputs IntegerProductInputs::of(IntegerProduct op) {
  IntegerProductInputs in;
  in.op = op;
  switch (op) {
    case IntegerProduct::matmul_integer:
    case IntegerProduct::conv_integer:
      // (a, b, a_zero_point, b_zero_point) and (x, w, x_zero_point, w_zero_point)
      in.a_zero = 2;
      in.b_zero = 3;
      break;
    case IntegerProduct::qlinear_matmul:
    case IntegerProduct::qlinear_conv:
      // (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point[, B])
      in.a_scale = 1;
      in.a_zero = 2;
      in.b = 3;
      in.b_scale = 4;
      in.b_zero = 5;
      in.y_scale = 6;
      in.y_zero = 7;
      if (op == IntegerProduct::qlinear_conv) in.bias = 8;
      break;
    case IntegerProduct::qgemm:
      // (A, a_scale, a_zero_point, B, b_scale, b_zero_point[, C, y_scale, y_zero_point])
      in.a_scale = 1;
      in.a_zero = 2;
      in.b = 3;
      in.b_scale = 4;
      in.b_zero = 5;
      in.bias = 6;
      in.y_scale = 7;
      in.y_zero = 8;
      break;
    case IntegerProduct::matmul_integer_to_float:
      // (A, B, a_scale, b_scale[, a_zero_point, b_zero_point, bias])
      in.a_scale = 2;
      in.b_scale = 3;
      in.a_zero = 4;
      in.b_zero = 5;
      in.bias = 6;
      break;
  }
  return in;
}

std::string IntegerProductInputs::name(int i) const {
  const bool c = conv();
  std::string first = c ? "x" : "a";
  std::string second = c ? "w" : "b";
  if (i == a) return first;
  if (i == b) return second;
  if (i == a_scale) return first + "_scale";
  if (i == a_zero) return first + "_zero_point";
  if (i == b_scale) return second + "_scale";
  if (i == b_zero) return second + "_zero_point";
  if (i == y_scale) return "y_scale";
  if (i == y_zero) return "y_zero_point";
  if (i == bias) {
    return op == IntegerProduct::qgemm                     ? "C"
           : op == IntegerProduct::matmul_integer_to_float ? "bias"
                                                           : "B";
  }
  return "input " + std::to_string(i);
}

ParamAxis IntegerProductInputs::axis(int i) const {
  if (i == a_scale || i == a_zero) return conv() ? ParamAxis::tensor : ParamAxis::rows;
  if (i == b_scale || i == b_zero) return conv() ? ParamAxis::channels : ParamAxis::columns;
  if (i == y_scale || i == y_zero) return conv() ? ParamAxis::tensor : ParamAxis::rows;
  return ParamAxis::tensor;
}

std::optional<Spread> spread_of(const std::vector<int64_t>& param,
                                const std::vector<int64_t>& tensor, ParamAxis axis) {
  const int64_t numel =
      std::accumulate(param.begin(), param.end(), int64_t{1}, std::multiplies<>());
  if (numel == 1 && param.size() <= 1) return Spread::one;
  if (axis == ParamAxis::tensor || tensor.empty()) return std::nullopt;
  const size_t r = tensor.size();
  if (axis == ParamAxis::channels) {
    if (param.size() == 1 && param[0] == tensor[0]) return Spread::per_axis;
    return std::nullopt;
  }
  // A 1-D operand is one row (A) or one column (B): only a single value fits it.
  if (r < 2) return std::nullopt;
  const size_t along = axis == ParamAxis::rows ? r - 2 : r - 1;
  if (param.size() == 1 && param[0] == tensor[along]) return Spread::per_axis;
  std::vector<int64_t> per_matrix = tensor;
  per_matrix[axis == ParamAxis::rows ? r - 1 : r - 2] = 1;
  if (param == per_matrix) return Spread::per_matrix;
  return std::nullopt;
}

std::string spread_forms(ParamAxis axis) {
  switch (axis) {
    case ParamAxis::tensor:
      return "a scalar";
    case ParamAxis::rows:
      return "a scalar, one value per row [M] or per row of each matrix [..., M, 1]";
    case ParamAxis::columns:
      return "a scalar, one value per column [N] or per column of each matrix [..., 1, N]";
    case ParamAxis::channels:
      return "a scalar or one value per output channel [M]";
  }
  return {};
}

bool integer_operand_dtype(DType t) {
  return t == DType::uint8 || t == DType::int8;
}

}  // namespace footprint::graph::ops
