// Elementwise ops: unary (same dtype and shape), binary and variadic with numpy broadcasting,
// comparisons (bool), Clip, Where, Cast. Small known operands are computed, so shape arithmetic
// (Shape -> Gather -> Mul -> Concat) stays known, symbols included.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "families.hpp"
#include "footprint/graph/elementwise_program.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/graph/ops/qlinear_operands.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

using IntFn = std::optional<Dim> (*)(const Dim&, const Dim&);
using RealFn = std::optional<double> (*)(double, double);

std::optional<int64_t> both(const Dim& a, const Dim& b, int64_t& y) {
  const auto x = a.value();
  const auto v = b.value();
  if (!x || !v) return std::nullopt;
  y = *v;
  return x;
}

// ---- Integer arithmetic on possibly symbolic elements.

std::optional<Dim> int_add(const Dim& a, const Dim& b) {
  return a + b;
}
std::optional<Dim> int_sub(const Dim& a, const Dim& b) {
  return a - b;
}
std::optional<Dim> int_mul(const Dim& a, const Dim& b) {
  return a * b;
}
std::optional<Dim> int_max(const Dim& a, const Dim& b) {
  return max(a, b);
}
std::optional<Dim> int_min(const Dim& a, const Dim& b) {
  return min(a, b);
}

std::optional<Dim> int_div(const Dim& a, const Dim& b) {
  int64_t y = 0;
  if (const auto x = both(a, b, y)) {
    // The kernel defines the two quotients C does not (by zero, the smallest value by -1).
    if (y == 0 || y == -1) return std::nullopt;
    return Dim::known(*x / y);  // C semantics: truncation, as ONNX integer Div
  }
  // A symbolic dividend is a size (non-negative): truncation is floor for a positive divisor.
  const auto d = b.value();
  if (d && *d > 0) return floor_div(a, b);
  return std::nullopt;
}

std::optional<Dim> int_mod(const Dim& a, const Dim& b) {
  int64_t y = 0;
  const auto x = both(a, b, y);
  if (!x || y == 0 || y == -1) return std::nullopt;  // as int_div
  int64_t r = *x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;  // fmod=0: the sign of the divisor
  return Dim::known(r);
}

// fmod=1: the sign of the dividend (C's %).
std::optional<Dim> int_fmod(const Dim& a, const Dim& b) {
  int64_t y = 0;
  const auto x = both(a, b, y);
  if (!x || y == 0 || y == -1) return std::nullopt;  // as int_div
  return Dim::known(*x % y);
}

std::optional<Dim> int_pow(const Dim& a, const Dim& b) {
  int64_t y = 0;
  const auto x = both(a, b, y);
  if (!x || y < 0) return std::nullopt;
  int64_t r = 1;
  for (int64_t i = 0; i < y; ++i) {
    if (__builtin_mul_overflow(r, *x, &r)) return std::nullopt;
  }
  return Dim::known(r);
}

template <class Cmp>
std::optional<Dim> int_compare(const Dim& a, const Dim& b) {
  int64_t y = 0;
  if (const auto x = both(a, b, y)) return Dim::known(Cmp()(*x, y) ? 1 : 0);
  return std::nullopt;
}

std::optional<Dim> int_equal(const Dim& a, const Dim& b) {
  if (a == b) return Dim::known(1);
  // An extent is never negative: the exporter's Where(Equal(shape, -1), ...) idiom.
  const auto x = a.value();
  const auto y = b.value();
  if ((x && *x < 0 && b.is_nonnegative()) || (y && *y < 0 && a.is_nonnegative()))
    return Dim::known(0);
  return int_compare<std::equal_to<>>(a, b);
}

template <class Op>
std::optional<Dim> int_logic(const Dim& a, const Dim& b) {
  int64_t y = 0;
  if (const auto x = both(a, b, y)) return Dim::known(Op()(*x != 0, y != 0) ? 1 : 0);
  return std::nullopt;
}

// ---- Real arithmetic.

std::optional<double> real_add(double a, double b) {
  return a + b;
}
std::optional<double> real_sub(double a, double b) {
  return a - b;
}
std::optional<double> real_mul(double a, double b) {
  return a * b;
}
std::optional<double> real_div(double a, double b) {
  return a / b;
}
std::optional<double> real_pow(double a, double b) {
  return std::pow(a, b);
}
std::optional<double> real_max(double a, double b) {
  return std::max(a, b);
}
std::optional<double> real_fmod(double a, double b) {
  return std::fmod(a, b);
}
std::optional<double> real_min(double a, double b) {
  return std::min(a, b);
}
template <class Cmp>
std::optional<double> real_compare(double a, double b) {
  return Cmp()(a, b) ? 1.0 : 0.0;
}

struct BinaryOp {
  std::string_view name;
  IntFn on_ints;    // nullptr: not computed on integers
  RealFn on_reals;  // nullptr: not computed on reals
  bool boolean_result = false;
};

constexpr BinaryOp kBinaryOps[] = {
    {"Add", int_add, real_add},
    {"Sub", int_sub, real_sub},
    {"Mul", int_mul, real_mul},
    {"Div", int_div, real_div},
    {"Pow", int_pow, real_pow},
    {"Mod", int_mod, nullptr},
    {"BitShift", nullptr, nullptr},
    {"BitwiseAnd", nullptr, nullptr},
    {"BitwiseOr", nullptr, nullptr},
    {"BitwiseXor", nullptr, nullptr},
    {"PRelu", nullptr, nullptr},
    {"And", int_logic<std::logical_and<>>, nullptr, true},
    {"Or", int_logic<std::logical_or<>>, nullptr, true},
    {"Xor", int_logic<std::not_equal_to<>>, nullptr, true},
    {"Equal", int_equal, real_compare<std::equal_to<>>, true},
    {"Greater", int_compare<std::greater<>>, real_compare<std::greater<>>, true},
    {"Less", int_compare<std::less<>>, real_compare<std::less<>>, true},
    {"GreaterOrEqual", int_compare<std::greater_equal<>>, real_compare<std::greater_equal<>>, true},
    {"LessOrEqual", int_compare<std::less_equal<>>, real_compare<std::less_equal<>>, true},
};

// Mod with fmod=1 (required for floats).
constexpr BinaryOp kFmod = {"Mod", int_fmod, real_fmod};

// Variadic ops fold pairwise with the binary function of the same meaning.
constexpr BinaryOp kVariadicOps[] = {
    {"Sum", int_add, real_add},
    {"Max", int_max, real_max},
    {"Min", int_min, real_min},
    {"Mean", nullptr, nullptr},
};

const BinaryOp* find_op(std::string_view name) {
  for (const BinaryOp& b : kBinaryOps) {
    if (b.name == name) return &b;
  }
  for (const BinaryOp& b : kVariadicOps) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

// Known operands whose exact result leaves int64: not computed here (the kernel wraps it).
bool overflows(std::string_view op, const Dim& a, const Dim& b) {
  const auto x = a.value();
  const auto y = b.value();
  if (!x || !y) return false;
  int64_t r = 0;
  if (op == "Add" || op == "Sum") return __builtin_add_overflow(*x, *y, &r);
  if (op == "Sub") return __builtin_sub_overflow(*x, *y, &r);
  if (op == "Mul") return __builtin_mul_overflow(*x, *y, &r);
  return false;
}

// a (op) b elementwise with broadcasting; nullopt when any element is not computable.
std::optional<KnownValue> known_binary(const BinaryOp& op, const KnownValue& a, const KnownValue& b,
                                       DType out_dtype) {
  const auto dims = broadcast_static(a.dims, b.dims);
  if (!dims) return std::nullopt;
  const auto ia = broadcast_indices(*dims, a.dims);
  const auto ib = broadcast_indices(*dims, b.dims);
  if (!ia || !ib) return std::nullopt;
  const bool ints = !is_real(a.dtype) && !is_real(b.dtype);
  KnownValue out;
  out.dtype = out_dtype;
  out.dims = *dims;
  const bool real_out = is_real(out_dtype);
  for (size_t n = 0; n < ia->size(); ++n) {
    const auto i = static_cast<size_t>((*ia)[n]);
    const auto j = static_cast<size_t>((*ib)[n]);
    if (ints) {
      if (op.on_ints == nullptr || overflows(op.name, a.ints[i], b.ints[j])) return std::nullopt;
      auto r = op.on_ints(a.ints[i], b.ints[j]);
      if (!r || r->is_unknown()) return std::nullopt;
      // A result outside the output's type is what the kernel wraps, which the known value
      // would not (an int32 INT_MAX + 1 is INT_MIN when run).
      if (const auto v = r->value(); v && !dtype_traits(out_dtype).holds(*v)) return std::nullopt;
      out.ints.push_back(*r);
      continue;
    }
    if (op.on_reals == nullptr) return std::nullopt;
    const auto x = a.real(i);
    const auto y = b.real(j);
    if (!x || !y) return std::nullopt;
    const auto r = op.on_reals(*x, *y);
    if (!r) return std::nullopt;
    if (real_out) {
      out.reals.push_back(*r);
    } else {
      out.ints.push_back(Dim::known(static_cast<int64_t>(*r)));
    }
  }
  return out;
}

// ---- Unary known values.

std::optional<Dim> unary_int(std::string_view op, const Dim& d) {
  const auto v = d.value();
  // The smallest int64 has no negation: the kernel's wraps, a known value would not.
  if (v && *v == INT64_MIN) return std::nullopt;
  if (op == "Neg") return Dim::known(0) - d;
  if (!v) return std::nullopt;
  if (op == "Abs") return Dim::known(*v < 0 ? -*v : *v);
  if (op == "Relu") return Dim::known(*v < 0 ? 0 : *v);
  if (op == "Sign") return Dim::known(*v > 0 ? 1 : *v < 0 ? -1 : 0);
  if (op == "Not") return Dim::known(*v == 0 ? 1 : 0);
  return std::nullopt;
}

std::optional<double> unary_real(std::string_view op, double x) {
  if (op == "Neg") return -x;
  if (op == "Abs") return std::fabs(x);
  if (op == "Floor") return std::floor(x);
  if (op == "Ceil") return std::ceil(x);
  if (op == "Round") return std::nearbyint(x);
  if (op == "Sqrt") return std::sqrt(x);
  if (op == "Exp") return std::exp(x);
  if (op == "Log") return std::log(x);
  if (op == "Reciprocal") return 1.0 / x;
  if (op == "Relu") return std::max(x, 0.0);
  return std::nullopt;
}

std::optional<KnownValue> known_unary(std::string_view op, const KnownValue& v) {
  KnownValue out = v;
  if (v.is_integer() && !is_real(v.dtype)) {
    for (Dim& d : out.ints) {
      auto r = unary_int(op, d);
      if (!r || r->is_unknown()) return std::nullopt;
      d = *r;
    }
    return out;
  }
  for (double& x : out.reals) {
    const auto r = unary_real(op, x);
    if (!r) return std::nullopt;
    x = *r;
  }
  return out;
}

// ---- Hooks.

void infer_unary(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
  if (const KnownValue* v = ctx.value(0)) {
    if (auto out = known_unary(ctx.node.op_type, *v)) set_value(r, 0, std::move(*out));
  }
}

void infer_is_class(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, DType::boolean, ctx.input(0).shape);
}

void infer_binary(const InferContext& ctx, InferResult& r) {
  const BinaryOp* op = find_op(ctx.node.op_type);
  if (ctx.node.op_type == "Mod" && ctx.attr_int("fmod", 0) != 0) op = &kFmod;
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  const DType dtype = op != nullptr && op->boolean_result ? DType::boolean : a.dtype;
  // Before opset 7, B was broadcast to A's shape only where the `broadcast` attribute said so.
  const bool legacy = ctx.opset > 0 && ctx.opset < 7;
  // PRelu's slope broadcasts to X (unidirectionally): the output is X's shape.
  const bool to_first = legacy || ctx.node.op_type == "PRelu";
  set_output(r, 0, dtype, to_first ? a.shape : broadcast(ctx, {&a.shape, &b.shape}));
  const KnownValue* x = ctx.value(0);
  const KnownValue* y = ctx.value(1);
  if (op != nullptr && x != nullptr && y != nullptr && !legacy) {
    if (auto v = known_binary(*op, *x, *y, dtype)) set_value(r, 0, std::move(*v));
  }
}

// onnxruntime's QLinearAdd and QLinearMul (A, A_scale, A_zp, B, B_scale, B_zp, C_scale[, C_zp]):
// A and B broadcast, in A's dtype; the operands as graph/ops/qlinear_operands.hpp reads them.
template <QLinearOp kOp>
void infer_qlinear_binary(const InferContext& ctx, InferResult& r) {
  check_qlinear_operands(ctx, kOp);
  const TensorType& a = ctx.input(0);
  set_output(r, 0, a.dtype, broadcast(ctx, {&a.shape, &ctx.input(3).shape}));
}

// onnxruntime's QLinearSigmoid, QLinearLeakyRelu and QLinearSoftmax (X, X_scale, X_zp, Y_scale[,
// Y_zp]): X's shape and dtype; QLinearSoftmax's axis and opset as its kernel reads them.
template <QLinearOp kOp>
void infer_qlinear_unary(const InferContext& ctx, InferResult& r) {
  check_qlinear_operands(ctx, kOp);
  const Shape& x = ctx.input(0).shape;
  if (kOp == QLinearOp::softmax && x.ranked) {
    QLinearSoftmaxRows::decode(ctx.node, ctx.node_id, x.rank());
  }
  set_output(r, 0, ctx.input(0).dtype, ctx.input(0).shape);
}

void infer_variadic(const InferContext& ctx, InferResult& r) {
  std::vector<const Shape*> shapes;
  for (size_t i = 0; i < ctx.input_count(); ++i) shapes.push_back(&ctx.input(i).shape);
  const DType dtype = ctx.input(0).dtype;
  set_output(r, 0, dtype, broadcast(ctx, shapes));
  const BinaryOp* op = find_op(ctx.node.op_type);
  if (op == nullptr || ctx.value(0) == nullptr) return;
  std::optional<KnownValue> acc = *ctx.value(0);
  for (size_t i = 1; i < ctx.input_count() && acc; ++i) {
    if (ctx.value(i) == nullptr) return;
    acc = known_binary(*op, *acc, *ctx.value(i), dtype);
  }
  if (acc && (op->on_ints != nullptr || op->on_reals != nullptr)) set_value(r, 0, *acc);
}

void infer_clip(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

void infer_where(const InferContext& ctx, InferResult& r) {
  const TensorType& c = ctx.input(0);
  const TensorType& x = ctx.input(1);
  const TensorType& y = ctx.input(2);
  set_output(r, 0, x.dtype, broadcast(ctx, {&c.shape, &x.shape, &y.shape}));
  const KnownValue* kc = ctx.value(0);
  const KnownValue* kx = ctx.value(1);
  const KnownValue* ky = ctx.value(2);
  if (kc == nullptr || kx == nullptr || ky == nullptr) return;
  const auto xy = broadcast_static(kx->dims, ky->dims);
  const auto dims = xy ? broadcast_static(kc->dims, *xy) : std::nullopt;
  if (!dims || !kc->int_values()) return;
  const auto ic = broadcast_indices(*dims, kc->dims);
  const auto ix = broadcast_indices(*dims, kx->dims);
  const auto iy = broadcast_indices(*dims, ky->dims);
  if (!ic || !ix || !iy) return;
  KnownValue out;
  out.dtype = x.dtype;
  out.dims = *dims;
  const bool ints = kx->is_integer() && !is_real(kx->dtype);
  for (size_t n = 0; n < ic->size(); ++n) {
    const bool take_x = kc->ints[static_cast<size_t>((*ic)[n])].value().value_or(0) != 0;
    const KnownValue& src = take_x ? *kx : *ky;
    const auto at = static_cast<size_t>(take_x ? (*ix)[n] : (*iy)[n]);
    if (ints) {
      out.ints.push_back(src.ints[at]);
    } else {
      out.reals.push_back(src.reals[at]);
    }
  }
  set_value(r, 0, std::move(out));
}

void infer_cast(const InferContext& ctx, InferResult& r) {
  const int64_t to = ctx.attr_int("to", 0);
  if (!is_known_dtype(static_cast<int32_t>(to))) ctx.fail("attribute 'to' is not a known dtype");
  const auto dtype = static_cast<DType>(to);
  set_output(r, 0, dtype, ctx.input(0).shape);
  if (const KnownValue* v = ctx.value(0)) {
    if (auto out = cast_value(*v, dtype)) set_value(r, 0, std::move(*out));
  }
}

void infer_cast_like(const InferContext& ctx, InferResult& r) {
  const DType dtype = ctx.input(1).dtype;
  set_output(r, 0, dtype, ctx.input(0).shape);
  if (const KnownValue* v = ctx.value(0)) {
    if (auto out = cast_value(*v, dtype)) set_value(r, 0, std::move(*out));
  }
}

// footprint::Elementwise (graph::fuse): its program's steps all compute over the output's index
// space, which is its inputs' broadcast; the inputs and the output share one dtype (float32,
// float16 or bfloat16), as the ops of the run did.
void infer_elementwise_program(const InferContext& ctx, InferResult& r) {
  ChainProgram program;
  if (const char* e = parse_chain(ctx.attr_string("program", ""), ctx.input_count(), program)) {
    ctx.fail(std::string("attribute 'program': ") + e);
  }
  if (ctx.input_count() == 0) ctx.fail("has no inputs");
  const DType t = ctx.input(0).dtype;
  if (t != DType::float32 && t != DType::float16 && t != DType::bfloat16) {
    ctx.fail("runs on float32, float16 or bfloat16 inputs, not " + std::string(dtype_name(t)));
  }
  std::vector<const Shape*> shapes;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.input(i).dtype != t) ctx.fail("every input must have input 0's dtype");
    shapes.push_back(&ctx.input(i).shape);
  }
  set_output(r, 0, t, broadcast(ctx, shapes));
}

// ---- As epilogues of the node before (graph::fuse)

Epilogue epilogue(EpilogueOp op, float alpha = 0, float beta = 0) {
  Epilogue e;
  e.op = op;
  e.alpha = alpha;
  e.beta = beta;
  return e;
}

std::optional<Epilogue> relu_epilogue(const Graph& /*g*/, const Node& /*n*/) {
  return epilogue(EpilogueOp::relu);
}
std::optional<Epilogue> sigmoid_epilogue(const Graph& /*g*/, const Node& /*n*/) {
  return epilogue(EpilogueOp::sigmoid);
}
std::optional<Epilogue> tanh_epilogue(const Graph& /*g*/, const Node& /*n*/) {
  return epilogue(EpilogueOp::tanh);
}
std::optional<Epilogue> hard_swish_epilogue(const Graph& /*g*/, const Node& /*n*/) {
  return epilogue(EpilogueOp::hard_swish);
}
std::optional<Epilogue> gelu_epilogue(const Graph& /*g*/, const Node& n) {
  const std::string_view form = attr_string(n, "approximate", "none");
  if (form != "none" && form != "tanh") return std::nullopt;  // the kernel names it
  return epilogue(form == "tanh" ? EpilogueOp::gelu_tanh : EpilogueOp::gelu_erf);
}
std::optional<Epilogue> leaky_relu_epilogue(const Graph& /*g*/, const Node& n) {
  return epilogue(EpilogueOp::leaky_relu, attr_float(n, "alpha", 0.01F));
}
std::optional<Epilogue> hard_sigmoid_epilogue(const Graph& /*g*/, const Node& n) {
  return epilogue(EpilogueOp::hard_sigmoid, attr_float(n, "alpha", 0.2F),
                  attr_float(n, "beta", 0.5F));
}

// A bound of Clip from opset 11: an omitted input (or an empty tensor) is no bound; otherwise a
// constant scalar, or the Clip is not an epilogue.
std::optional<float> clip_bound(const Graph& g, const Node& n, size_t i, float none) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return none;
  const Value& v = g.value(n.inputs[i]);
  if (!v.constant || !v.known || v.known->numel() > 1) return std::nullopt;
  if (v.known->numel() == 0) return none;
  const std::optional<double> bound = v.known->real(0);
  if (!bound) return std::nullopt;
  return static_cast<float>(*bound);
}

std::optional<Epilogue> clip_epilogue(const Graph& g, const Node& n) {
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  constexpr float kMax = std::numeric_limits<float>::max();
  const int64_t opset = g.model() != nullptr ? g.model()->opset_version("") : 0;
  if (opset < 11) {  // as the kernel reads it (KernelContext::opset)
    return epilogue(EpilogueOp::clip, attr_float(n, "min", kLowest), attr_float(n, "max", kMax));
  }
  const auto lo = clip_bound(g, n, 1, kLowest);
  const auto hi = clip_bound(g, n, 2, kMax);
  if (!lo || !hi) return std::nullopt;
  return epilogue(EpilogueOp::clip, *lo, *hi);
}

OpSchema elementwise(OpSchema s) {
  s.elementwise = true;
  return s;
}

}  // namespace

void register_elementwise(OpRegistry& r) {
  for (std::string_view name :
       {"Abs",         "Acos",      "Acosh",     "Asin",      "Asinh",   "Atan", "Atanh",
        "Ceil",        "Cos",       "Cosh",      "Elu",       "Erf",     "Exp",  "Floor",
        "HardSigmoid", "HardSwish", "LeakyRelu", "Log",       "Mish",    "Neg",  "Not",
        "Reciprocal",  "Relu",      "Round",     "Selu",      "Sigmoid", "Sign", "Sin",
        "Sinh",        "Softplus",  "Softsign",  "Sqrt",      "Tan",     "Tanh", "ThresholdedRelu",
        "Gelu",        "Celu",      "Shrink",    "BitwiseNot"}) {
    r.add(elementwise(op(name, 1, 1, infer_unary)));
  }
  r.add(elementwise(op("IsNaN", 1, 1, infer_is_class)));
  r.add(elementwise(op("IsInf", 1, 1, infer_is_class)));
  // in_place is the kernels' promise: runtime/kernels/elementwise.cpp declares it.
  for (const BinaryOp& b : kBinaryOps) r.add(elementwise(op(b.name, 2, 2, infer_binary)));
  for (const BinaryOp& b : kVariadicOps) r.add(elementwise(op(b.name, 1, V, infer_variadic)));
  r.add(elementwise(op("Clip", 1, 3, infer_clip)));
  // Elementwise over their tensors (A, B, X); their scales and zero points are scalars.
  for (OpSchema s : {op("QLinearAdd", 7, 8, infer_qlinear_binary<QLinearOp::add>),
                     op("QLinearMul", 7, 8, infer_qlinear_binary<QLinearOp::mul>),
                     op("QLinearSigmoid", 4, 5, infer_qlinear_unary<QLinearOp::sigmoid>),
                     op("QLinearLeakyRelu", 4, 5, infer_qlinear_unary<QLinearOp::leaky_relu>)}) {
    s.elementwise = true;
    r.add(contrib(s));
  }
  r.add(contrib(op("QLinearSoftmax", 4, 5, infer_qlinear_unary<QLinearOp::softmax>)));
  const std::pair<std::string_view, EpilogueFn> epilogues[] = {
      {"Relu", relu_epilogue},
      {"LeakyRelu", leaky_relu_epilogue},
      {"Clip", clip_epilogue},
      {"Sigmoid", sigmoid_epilogue},
      {"Tanh", tanh_epilogue},
      {"HardSigmoid", hard_sigmoid_epilogue},
      {"HardSwish", hard_swish_epilogue},
      {"Gelu", gelu_epilogue}};
  for (const auto& [name, fn] : epilogues) r.row("", name).as_epilogue = fn;
  r.add(elementwise(op("Where", 3, 3, infer_where)));
  OpSchema program = elementwise(
      op("Elementwise", 1, static_cast<int>(kMaxChainInputs), infer_elementwise_program));
  program.domain = "footprint";
  r.add(program);
  r.add(op("Cast", 1, 1, infer_cast));
  r.add(op("CastLike", 2, 2, infer_cast_like));
}

}  // namespace footprint::graph::ops
