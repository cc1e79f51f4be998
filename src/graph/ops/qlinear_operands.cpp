#include "footprint/graph/ops/qlinear_operands.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::graph::ops {
namespace {

[[noreturn]] void fail(const Node& n, int32_t node_id, const std::string& what) {
  throw Error("node " + n.label(node_id) + ": " + what);
}

// The first input of the output's scale: C_scale (6) of the binary ops, Y_scale (3) of the
// one-tensor ops, Y_scale (0) of a concat.
size_t output_scale(QLinearOp op) {
  switch (op) {
    case QLinearOp::add:
    case QLinearOp::mul:
      return 6;
    case QLinearOp::concat:
      return 0;
    default:
      return 3;
  }
}

bool binary(QLinearOp op) {
  return op == QLinearOp::add || op == QLinearOp::mul;
}

bool lower_case_names(QLinearOp op) {
  return op == QLinearOp::average_pool || op == QLinearOp::global_average_pool;
}

}  // namespace

bool qlinear_type(DType t) {
  return t == DType::int8 || t == DType::uint8;
}

QLinearOperands QLinearOperands::of(const Node& n, int32_t node_id, QLinearOp op,
                                    size_t input_count) {
  QLinearOperands q;
  q.op = op;
  q.inputs = input_count;
  if (op == QLinearOp::concat) {
    if (input_count < 5 || (input_count - 2) % 3 != 0) {
      fail(n, node_id,
           "inputs after Y_scale and Y_zero_point come in threes (X, scale, zero point), " +
               std::to_string(input_count < 2 ? 0 : input_count - 2) + " given");
    }
    q.tensors = (input_count - 2) / 3;
  } else {
    q.tensors = binary(op) ? 2 : 1;
  }
  return q;
}

size_t QLinearOperands::tensor(size_t k) const {
  return op == QLinearOp::concat ? 2 + 3 * k : 3 * k;
}

size_t QLinearOperands::scale(int k) const {
  return k == kOutput ? output_scale(op) : tensor(static_cast<size_t>(k)) + 1;
}

size_t QLinearOperands::zero_point(int k) const {
  return scale(k) + 1;
}

int QLinearOperands::owner(size_t i) const {
  const size_t out = output_scale(op);
  if (i == out || i == out + 1) return kOutput;
  const size_t first = op == QLinearOp::concat ? 2 : 0;
  return static_cast<int>((i - first) / 3);
}

QLinearRole QLinearOperands::role(size_t i) const {
  const int k = owner(i);
  if (k == kOutput) return i == scale(kOutput) ? QLinearRole::scale : QLinearRole::zero_point;
  const size_t at = i - tensor(static_cast<size_t>(k));
  return at == 0 ? QLinearRole::tensor : at == 1 ? QLinearRole::scale : QLinearRole::zero_point;
}

std::string QLinearOperands::name(size_t i) const {
  const int k = owner(i);
  std::string base;
  if (k == kOutput) {
    base = binary(op) ? "C" : "Y";
  } else if (binary(op)) {
    base = k == 0 ? "A" : "B";
  } else {
    base = "X";
  }
  std::string s = base;
  const QLinearRole r = role(i);
  if (r != QLinearRole::tensor) {
    const char* part = r == QLinearRole::scale ? "_scale" : "_zero_point";
    s = (lower_case_names(op) ? std::string(1, static_cast<char>(base[0] - 'A' + 'a')) : base) +
        part;
  }
  return s + " (input " + std::to_string(i) + ")";
}

void QLinearOperands::check_input(const Node& n, int32_t node_id, size_t i, DType dtype,
                                  DType quantized, const std::optional<Extents>& extents) const {
  const QLinearRole r = role(i);
  if (dtype == DType::undefined) {
    if (r == QLinearRole::zero_point) return;  // omitted: 0
    fail(n, node_id, name(i) + " is required");
  }
  const std::string type(dtype_name(dtype));
  if (r == QLinearRole::scale) {
    if (dtype != DType::float32) {
      fail(n, node_id,
           name(i) + " is " + type + ", not " + std::string(dtype_name(DType::float32)));
    }
  } else if (!qlinear_type(dtype)) {
    fail(n, node_id, name(i) + " is " + type + ", not int8 or uint8");
  } else if (quantized != DType::undefined && dtype != quantized) {
    fail(n, node_id,
         name(i) + " is " + type + " but " + name(type_input()) + " is " +
             std::string(dtype_name(quantized)) + ": they must be one type");
  }
  if (r == QLinearRole::tensor || !extents || !extents->ranked()) return;
  for (size_t d = 0; d < extents->rank(); ++d) {
    const auto e = extents->at(d);
    if (!e || *e == 1) continue;
    fail(n, node_id,
         name(i) + " has " + std::to_string(*e) + " elements along axis " + std::to_string(d) +
             ": it must be one value (a scalar or a 1-element tensor)");
  }
}

void check_qlinear_scale(const Node& n, int32_t node_id, const QLinearOperands& q, size_t i,
                         double value) {
  if (value > 0 && std::isfinite(value)) return;
  std::ostringstream v;  // shortest: "0", "-0.5", "nan", "inf"
  v << value;
  fail(n, node_id, q.name(i) + " is " + v.str() + ": a scale must be positive and finite");
}

QLinearOperands check_qlinear_operands(const InferContext& ctx, QLinearOp op) {
  const auto q = QLinearOperands::of(ctx.node, ctx.node_id, op, ctx.input_count());
  const size_t t = q.type_input();
  const DType quantized = ctx.has_input(t) ? ctx.input(t).dtype : DType::undefined;
  for (size_t i = 0; i < q.inputs; ++i) {
    if (!ctx.has_input(i)) {
      q.check_input(ctx.node, ctx.node_id, i, DType::undefined, quantized, std::nullopt);
      continue;
    }
    const TensorType& in = ctx.input(i);
    // A dtype inference does not know (an untyped graph input) is checked by the kernel.
    if (in.dtype == DType::undefined) continue;
    q.check_input(ctx.node, ctx.node_id, i, in.dtype, quantized, Extents::of(in.shape));
    const KnownValue* v = ctx.value(i);
    if (q.role(i) != QLinearRole::scale || v == nullptr) continue;
    for (size_t e = 0; e < v->numel(); ++e) {
      if (const auto s = v->real(e)) check_qlinear_scale(ctx.node, ctx.node_id, q, i, *s);
    }
  }
  return q;
}

QLinearSoftmaxRows QLinearSoftmaxRows::decode(const Node& n, int32_t node_id, size_t rank) {
  if (n.attribute("opset") == nullptr) {
    fail(n, node_id, "attribute 'opset' is required (the Softmax opset it follows)");
  }
  const int64_t opset = attr_int(n, "opset", 0);
  const int64_t axis = attr_int(n, "axis", opset < 13 ? 1 : -1);
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    fail(n, node_id,
         "axis " + std::to_string(axis) + " is out of range for X of rank " + std::to_string(r));
  }
  QLinearSoftmaxRows rows;
  rows.axis = static_cast<size_t>(axis < 0 ? axis + r : axis);
  rows.coerced = opset < 13;
  return rows;
}

}  // namespace footprint::graph::ops
