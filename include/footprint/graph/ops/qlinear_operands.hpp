#pragma once
// The operands of onnxruntime's com.microsoft QLinear element, pool and concat ops (what its
// QOperator quantizer writes): which input holds which tensor, scale and zero point, and the forms
// each may take. Shape inference and the kernels (runtime/kernels/qlinear.cpp) both take it, so a
// model inference accepts is one the kernel runs, and a bad operand is refused naming the node
// and the input.
//
//   const auto q = graph::ops::QLinearOperands::of(node, node_id, QLinearOp::add, inputs);
//   for (size_t i = 0; i < inputs; ++i)
//     q.check_input(node, node_id, i, dtype_of(i), extents_of(i));   // absent: DType::undefined
//   // tensor k's scale is input q.scale(k), its zero point q.zero_point(k) (kOutput: the
//   // output's); graph::ops::check_qlinear_scale(node, node_id, q, i, value) checks a value.
//
// The layouts (onnxruntime's contrib op schemas):
//   QLinearAdd, QLinearMul               A, A_scale, A_zero_point, B, B_scale, B_zero_point,
//                                        C_scale[, C_zero_point]
//   QLinearSigmoid, QLinearLeakyRelu,    X, X_scale, X_zero_point, Y_scale[, Y_zero_point]
//   QLinearSoftmax, QLinearAveragePool,
//   QLinearGlobalAveragePool
//   QLinearConcat                        Y_scale, Y_zero_point, then X, X_scale, X_zero_point
//                                        for each tensor joined
// Every tensor is int8 or uint8, all of one type; every scale is one float32 (a scalar or a
// 1-element tensor), positive and finite; every zero point is one element of the tensors' type
// and may be omitted (0), as onnxruntime reads them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "footprint/core/dtype.hpp"
#include "footprint/graph/ops/quantization.hpp"

namespace footprint::graph {
struct Node;
struct InferContext;
}  // namespace footprint::graph

namespace footprint::graph::ops {

enum class QLinearOp : uint8_t {
  add,
  mul,
  sigmoid,
  leaky_relu,
  softmax,
  average_pool,
  global_average_pool,
  concat
};

enum class QLinearRole : uint8_t { tensor, scale, zero_point };

struct QLinearOperands {
  static constexpr int kOutput = -1;

  QLinearOp op = QLinearOp::add;
  size_t inputs = 0;   // the node's input count
  size_t tensors = 0;  // tensors read (A and B; the Xs of a concat; else X)

  // The layout for a node of `input_count` inputs; fails naming the node when the count does not
  // fit it (a concat's inputs after Y's come in threes).
  static QLinearOperands of(const Node& n, int32_t node_id, QLinearOp op, size_t input_count);

  // The inputs of tensor k (kOutput: the output's scale and zero point).
  size_t tensor(size_t k) const;
  size_t scale(int k) const;
  size_t zero_point(int k) const;
  // The role of input i and whose it is (a tensor index, or kOutput).
  QLinearRole role(size_t i) const;
  int owner(size_t i) const;
  // The input whose dtype every tensor and zero point must have: the first tensor read.
  size_t type_input() const { return tensor(0); }
  // Input i as the schema calls it, for messages: "A_scale (input 1)".
  std::string name(size_t i) const;

  // Checks input i: `dtype` undefined where it is omitted (a zero point may be; a tensor or scale
  // may not), `quantized` the type_input's dtype, `extents` nullopt where not known. Fails
  // naming the node and the input.
  void check_input(const Node& n, int32_t node_id, size_t i, DType dtype, DType quantized,
                   const std::optional<Extents>& extents) const;
};

// Fails naming the node and its scale input i when `value` is not positive and finite.
void check_qlinear_scale(const Node& n, int32_t node_id, const QLinearOperands& q, size_t i,
                         double value);

// Inference's check of a node's operands: every input as far as its type and extents are known,
// and the scales known now (constants small enough to hold); the kernel checks the others when
// it is prepared or runs. Returns the layout.
QLinearOperands check_qlinear_operands(const InferContext& ctx, QLinearOp op);

// Whether t is a type the QLinear ops read (int8, uint8).
bool qlinear_type(DType t);

// The rows QLinearSoftmax normalises, as onnxruntime reads its `opset` attribute (required) and
// `axis` (default 1 before opset 13, -1 from it): before 13 the input is coerced to 2-D at the
// axis (a row is the axis and every dim after it), from 13 a row is the axis alone.
struct QLinearSoftmaxRows {
  size_t axis = 0;       // normalised
  bool coerced = false;  // opset < 13

  static QLinearSoftmaxRows decode(const Node& n, int32_t node_id, size_t rank);
};

}  // namespace footprint::graph::ops
