// com.microsoft's QLinear element, pool and concat ops, which onnxruntime's QOperator quantizer
// writes: QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax (rows of the
// elementwise family, graph/ops/elementwise.cpp), QLinearAveragePool, QLinearGlobalAveragePool
// (conv_pool) and QLinearConcat (indexing), on int8 and uint8.
//
// Each computes what onnxruntime's CPU kernels compute, so a QOperator model's outputs are its
// reference's: the tensors are dequantized with their float32 scale and zero point, the op runs
// in float32, and the result is requantized (rounded half to even, saturated). Where onnxruntime
// arranges the float arithmetic in a particular way, so do these (the order of a sum, a product
// of scales taken before or after a division), since a quantized output moves by a whole step
// when a value near a rounding tie moves by one ulp:
// - QLinearAdd: A (A_scale / C_scale) + B (B_scale / C_scale) + (C_zero - ...), each step a fused
//   multiply-add (MLAS's AVX2 kernel), with a tensor broadcast along the row folded into the
//   constant first;
// - QLinearMul: (A - A_zero)(B - B_zero), exact in int32, times A_scale B_scale / C_scale, plus
//   C_zero;
// - QLinearSigmoid, QLinearLeakyRelu: a table of the 256 outputs, one per input byte, built when
//   preparing where the scales and zero points are constants (heap declared as the row's packed
//   bytes), else on the stack at each run. The sigmoid is 1 / (1 + exp(-x)) in float: MLAS uses
//   its own approximation of it, so an entry at a rounding tie may differ by one step.
// - QLinearSoftmax: onnxruntime's integer-domain form: a table of exp((x - max) x_scale), shifted
//   so that a row's sum cannot overflow, summed in float in order along the row, and
//   y = round(e floor(1 / y_scale) / sum) + y_zero, saturated; X's zero point cancels out.
// - QLinearAveragePool: the window's dequantized elements summed in float (rows, then columns),
//   divided by the count (the kernel's size with count_include_pad, else the window's part inside
//   the input), then round(mean / y_scale + y_zero);
// - QLinearGlobalAveragePool: the int32 sum less x_zero times the count, times
//   x_scale / (y_scale count);
// - QLinearConcat: a tensor quantized as Y is copied; another goes through a table of
//   round(x_scale (x - x_zero) / Y_scale) + Y_zero, built on the stack at each run.
//
// The operands are read as graph/ops/qlinear_operands.hpp decodes them for inference and for
// these kernels alike. Scales are checked when preparing where they are constants, else on each
// run; a bad one is refused naming the node and the input. No kernel allocates.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "broadcast.hpp"
#include "dnnl_util.hpp"
#include "families.hpp"
#include "footprint/graph/ops/conv_window.hpp"
#include "footprint/graph/ops/qlinear_operands.hpp"
#include "parallel_for.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;
using graph::ops::QLinearOp;
using graph::ops::QLinearOperands;
using graph::ops::QLinearRole;
using graph::ops::QLinearSoftmaxRows;

constexpr DTypeSet kQLinearTypes{DType::int8, DType::uint8};

struct Range {
  int32_t lo = 0;
  int32_t hi = 255;
};

Range range_of(DType t) {
  return t == DType::int8 ? Range{-128, 127} : Range{0, 255};
}

// Element i of an int8 or uint8 tensor.
int32_t element(const TensorRef& t, size_t i) {
  if (t.dtype == DType::int8) return t.as<const int8_t>()[i];
  return t.as<const uint8_t>()[i];
}

// The byte b read as an element of type t (an int8 table is indexed by the element's bits).
int32_t byte_value(DType t, size_t b) {
  return t == DType::int8 ? static_cast<int32_t>(static_cast<int8_t>(static_cast<uint8_t>(b)))
                          : static_cast<int32_t>(b);
}

// v rounded half to even within [lo, hi] (integers well inside 2^22): rounded by adding and
// taking away 1.5 x 2^23 (in the default rounding mode, to nearest even), a loop the compiler
// vectorises where std::nearbyint would be a call, then clamped, so a NaN goes to lo. Rounding
// before clamping to integer bounds gives what clamping first gives (a value past 2^22, which
// the magic number rounds coarsely, stays past the bounds); clamping first made GCC branch on
// the bounds, and branches under -ftrapping-math keep it from vectorising.
float round_clamped(float v, float lo, float hi) {
  constexpr float kMagic = 12582912.0F;  // 1.5 x 2^23
  v = (v + kMagic) - kMagic;
  return std::min(hi, std::max(lo, v));
}

// round_half_even(v) + zero, saturated to the range: v clamped first to the range less the zero
// point, as MLAS's requantization does.
int32_t quantize(float v, int32_t zero, Range r) {
  const float lo = static_cast<float>(r.lo - zero);
  const float hi = static_cast<float>(r.hi - zero);
  return static_cast<int32_t>(round_clamped(v, lo, hi)) + zero;
}

// A scale and zero point read from the inputs.
struct Quant {
  float scale = 1;
  int32_t zero = 0;
};

// Tensor k's (QLinearOperands::kOutput: the output's) scale and zero point; an omitted zero
// point is 0.
Quant quant_of(const KernelContext& ctx, const QLinearOperands& q, int k) {
  Quant p;
  p.scale = ctx.input(q.scale(k)).as<const float>()[0];
  if (const TensorRef* z = ctx.input_or_null(q.zero_point(k))) p.zero = element(*z, 0);
  return p;
}

// Whether tensor k's scale and zero point were given when preparing (constants).
bool quant_known(const KernelContext& ctx, const QLinearOperands& q, int k) {
  const TensorRef* z = ctx.input_or_null(q.zero_point(k));
  return ctx.input(q.scale(k)).data != nullptr && (z == nullptr || z->data != nullptr);
}

// ---- The state every row prepares

struct PoolShape {
  static constexpr size_t kDims = 3;  // onnxruntime's pools have 1 to 3 spatial dims
  int64_t batch = 1, channels = 1, in_size = 1, out_size = 1, kernel_size = 1;
  std::array<int64_t, kDims> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1},
      pad{0, 0, 0};
  bool include_pad = false;
  bool channels_last = false;
};

class QLinearState final : public graph::KernelState {
 public:
  uint64_t owned_bytes() const override { return table_bytes; }

  QLinearOperands q;
  DType type = DType::undefined;
  bool scales_checked = false;  // every scale a constant, checked when preparing
  // QLinearSigmoid, QLinearLeakyRelu: the output for each input byte; QLinearSoftmax: the
  // exponentials by distance from the row's maximum. table_bytes 0: not built (computed per run).
  std::array<uint8_t, 256> bytes{};
  std::array<float, 256> exps{};
  uint64_t table_bytes = 0;
  QLinearSoftmaxRows rows;
  PoolShape pool;
  size_t axis = 0;  // QLinearConcat
};

void check_scales(const KernelContext& ctx, const QLinearOperands& q) {
  for (size_t i = 0; i < q.inputs; ++i) {
    if (q.role(i) != QLinearRole::scale) continue;
    const TensorRef& s = ctx.input(i);
    const float v = s.as<const float>()[0];
    if (!(v > 0) || !std::isfinite(v)) {
      graph::ops::check_qlinear_scale(ctx.node(), ctx.node_id(), q, i, v);
    }
  }
}

// Decodes the layout and checks every operand's dtype and extents, and the scales given.
std::unique_ptr<QLinearState> prepare_operands(const KernelContext& ctx, QLinearOp op) {
  auto s = std::make_unique<QLinearState>();
  s->q = QLinearOperands::of(ctx.node(), ctx.node_id(), op, ctx.input_count());
  const QLinearOperands& q = s->q;
  const TensorRef* typed = ctx.input_or_null(q.type_input());
  s->type = typed != nullptr ? typed->dtype : DType::undefined;
  bool all_known = true;
  for (size_t i = 0; i < q.inputs; ++i) {
    const TensorRef* in = ctx.input_or_null(i);
    std::optional<graph::ops::Extents> extents;
    if (in != nullptr) extents = graph::ops::Extents::of(in->dims);
    q.check_input(ctx.node(), ctx.node_id(), i, in != nullptr ? in->dtype : DType::undefined,
                  s->type, extents);
    // check_input has made every scale and zero point one element.
    if (q.role(i) == QLinearRole::scale && (in == nullptr || in->data == nullptr))
      all_known = false;
  }
  if (all_known) {
    check_scales(ctx, q);
    s->scales_checked = true;
  }
  return s;
}

QLinearState* state_of(KernelContext& ctx) {
  QLinearState* s = prepared_state<QLinearState>(ctx);
  if (s != nullptr && !s->scales_checked) check_scales(ctx, s->q);
  return s;
}

// ---- QLinearAdd, QLinearMul

// The constants of a row of QLinearAdd or QLinearMul, passed by value: a byte store may alias
// anything a loop reads through a reference, and a loop that must reload its constants after
// every store does not vectorise. The row loops are told to vectorise (`omp simd`) rather than
// their pointers declared restrict: y may be A or B itself (the rows run in place), which leaves
// each element depending on its own inputs alone.
struct RowConstants {
  float ra = 0, rb = 0, fixed = 0;  // Add: A_scale/C_scale, B_scale/C_scale, the zero points'
  int32_t za = 0, zb = 0;           // Mul: the zero points, and its ratio in ra
  float lo = 0, hi = 0;             // the output's range
};

// A fused multiply-add, one rounding (an instruction in the wide copies, which have FMA).
template <class T>
float fused(T v, float r, float add) {
  return std::fma(static_cast<float>(v), r, add);
}

// A product rounded to float before anything is added to it (the conversion keeps the wide
// copies from fusing the two).
template <class T>
float rounded_product(T v, float r) {
  return static_cast<float>(static_cast<double>(v) * r);
}

template <class T>
void add_row(RowConstants k, const T* a, int64_t sa, const T* b, int64_t sb, T* y, size_t len) {
  // One value along the row, A or B, is folded into the constant first; A x ra and B x rb play
  // the same part, so a constant A swaps places with B.
  if (sa == 0) {
    std::swap(a, b);
    std::swap(sa, sb);
    std::swap(k.ra, k.rb);
  }
  const float ra = k.ra, rb = k.rb, fixed = k.fixed, lo = k.lo, hi = k.hi;
  if (sb == 0) {
    const float base = fixed + rounded_product(b[0], rb);
    // The branches differ in their strides only: each loop vectorises for its own.
    if (sa == 1) {  // NOLINT(bugprone-branch-clone)
#pragma omp simd
      for (size_t i = 0; i < len; ++i)
        y[i] = static_cast<T>(round_clamped(fused(a[i], ra, base), lo, hi));
    } else {
#pragma omp simd
      for (size_t i = 0; i < len; ++i)
        y[i] = static_cast<T>(round_clamped(fused(a[i * sa], ra, base), lo, hi));
    }
  } else if (sa == 1 && sb == 1) {  // NOLINT(bugprone-branch-clone): as above
#pragma omp simd
    for (size_t i = 0; i < len; ++i)
      y[i] = static_cast<T>(round_clamped(fused(a[i], ra, fused(b[i], rb, fixed)), lo, hi));
  } else {
#pragma omp simd
    for (size_t i = 0; i < len; ++i) {
      y[i] =
          static_cast<T>(round_clamped(fused(a[i * sa], ra, fused(b[i * sb], rb, fixed)), lo, hi));
    }
  }
}

// QLinearAdd or QLinearMul over A (input 0) and B (input 3) broadcast to Y: `row` runs each row
// with the constants k, the output's range filled in here.
template <class T, class Row>
void binary_rows(KernelContext& ctx, RowConstants k, Row row) {
  const TensorRef& ta = ctx.input(0);
  const TensorRef& tb = ctx.input(3);
  TensorRef& ty = ctx.output(0);
  BroadcastPlan<2> plan;
  if (!plan_broadcast<2>(ty.dims, {ta.dims, tb.dims}, plan)) ctx.fail("the rank is too high");
  const Range range = range_of(ty.dtype);
  k.lo = static_cast<float>(range.lo);
  k.hi = static_cast<float>(range.hi);
  const T* pa = ta.as<const T>();
  const T* pb = tb.as<const T>();
  T* py = ty.as<T>();
  const int64_t sa = plan.inner_stride(0);
  const int64_t sb = plan.inner_stride(1);
  // Wide vectors: the fused multiply-adds they may make of Add's are the ones meant, and exact
  // in double as written.
  broadcast_rows<2, true>(plan, ctx.threads(),
                          [&](const std::array<int64_t, 2>& off, size_t out, size_t len) {
                            row(k, pa + off[0], sa, pb + off[1], sb, py + out, len);
                          });
}

template <class T>
void add_rows(KernelContext& ctx, const QLinearOperands& q) {
  const Quant a = quant_of(ctx, q, 0);
  const Quant b = quant_of(ctx, q, 1);
  const Quant c = quant_of(ctx, q, QLinearOperands::kOutput);
  RowConstants k;
  k.ra = a.scale / c.scale;
  k.rb = b.scale / c.scale;
  k.fixed = static_cast<float>(c.zero) -
            (k.ra * static_cast<float>(a.zero) + k.rb * static_cast<float>(b.zero));
  // A lambda rather than the function's address, so each wide copy inlines (and vectorises) it.
  binary_rows<T>(ctx, k, [](const auto&... row) { add_row<T>(row...); });
}

// The product scaled, rounded to float, then the zero point added: two roundings, as MLAS's
// kernel makes them (the conversion keeps a compiler from fusing them).
template <class T>
T mul_value(T x, T y, int32_t za, int32_t zb, float ratio, float zero_c, float lo, float hi) {
  const int32_t product = (static_cast<int32_t>(x) - za) * (static_cast<int32_t>(y) - zb);
  const auto scaled = static_cast<float>(static_cast<double>(product) * ratio);
  return static_cast<T>(round_clamped(scaled + zero_c, lo, hi));
}

template <class T>
void mul_row(const RowConstants k, const T* a, int64_t sa, const T* b, int64_t sb, T* y,
             size_t len) {
  const int32_t za = k.za, zb = k.zb;
  const float ratio = k.ra, zero_c = k.fixed, lo = k.lo, hi = k.hi;
  // The branches differ in their strides only: each loop vectorises for its own.
  // NOLINTNEXTLINE(bugprone-branch-clone)
  if (sa == 1 && sb == 1) {
#pragma omp simd
    for (size_t i = 0; i < len; ++i) y[i] = mul_value(a[i], b[i], za, zb, ratio, zero_c, lo, hi);
  } else if (sa == 1 && sb == 0) {
    const T b0 = b[0];
#pragma omp simd
    for (size_t i = 0; i < len; ++i) y[i] = mul_value(a[i], b0, za, zb, ratio, zero_c, lo, hi);
  } else if (sa == 0 && sb == 1) {
    const T a0 = a[0];
#pragma omp simd
    for (size_t i = 0; i < len; ++i) y[i] = mul_value(a0, b[i], za, zb, ratio, zero_c, lo, hi);
  } else {
#pragma omp simd
    for (size_t i = 0; i < len; ++i)
      y[i] = mul_value(a[i * sa], b[i * sb], za, zb, ratio, zero_c, lo, hi);
  }
}

template <class T>
void mul_rows(KernelContext& ctx, const QLinearOperands& q) {
  const Quant a = quant_of(ctx, q, 0);
  const Quant b = quant_of(ctx, q, 1);
  const Quant c = quant_of(ctx, q, QLinearOperands::kOutput);
  RowConstants k;
  k.ra = a.scale * b.scale / c.scale;
  k.fixed = static_cast<float>(c.zero);
  k.za = a.zero;
  k.zb = b.zero;
  binary_rows<T>(ctx, k, [](const auto&... row) { mul_row<T>(row...); });
}

std::unique_ptr<graph::KernelState> binary_prepare_add(const KernelContext& ctx) {
  return prepare_operands(ctx, QLinearOp::add);
}
std::unique_ptr<graph::KernelState> binary_prepare_mul(const KernelContext& ctx) {
  return prepare_operands(ctx, QLinearOp::mul);
}

void add_kernel(KernelContext& ctx) {
  QLinearState* s = state_of(ctx);
  if (s == nullptr) return;
  if (s->type == DType::int8) return add_rows<int8_t>(ctx, s->q);
  add_rows<uint8_t>(ctx, s->q);
}

void mul_kernel(KernelContext& ctx) {
  QLinearState* s = state_of(ctx);
  if (s == nullptr) return;
  if (s->type == DType::int8) return mul_rows<int8_t>(ctx, s->q);
  mul_rows<uint8_t>(ctx, s->q);
}

// ---- QLinearSigmoid, QLinearLeakyRelu: a table of the 256 outputs

template <QLinearOp kOp>
void build_lookup(const KernelContext& ctx, const QLinearOperands& q, DType t, float alpha,
                  std::array<uint8_t, 256>& table) {
  const Quant x = quant_of(ctx, q, 0);
  const Quant y = quant_of(ctx, q, QLinearOperands::kOutput);
  const Range range = range_of(t);
  for (size_t b = 0; b < 256; ++b) {
    const float v = x.scale * static_cast<float>(byte_value(t, b) - x.zero);
    float f = 0;
    if constexpr (kOp == QLinearOp::sigmoid) {
      f = 1.0F / (1.0F + std::exp(-v));
    } else {
      f = v >= 0.0F ? v : alpha * v;
    }
    // The element's bits: an int8 result is stored as its byte.
    table[b] = static_cast<uint8_t>(quantize(f / y.scale, y.zero, range));
  }
}

float leaky_alpha(const graph::Node& n) {
  return graph::attr_float(n, "alpha", 0.01F);
}

template <QLinearOp kOp>
std::unique_ptr<graph::KernelState> lookup_prepare(const KernelContext& ctx) {
  auto s = prepare_operands(ctx, kOp);
  if (quant_known(ctx, s->q, 0) && quant_known(ctx, s->q, QLinearOperands::kOutput)) {
    build_lookup<kOp>(ctx, s->q, s->type, leaky_alpha(ctx.node()), s->bytes);
    s->table_bytes = sizeof(s->bytes);
  }
  return s;
}

template <QLinearOp kOp>
void lookup_kernel(KernelContext& ctx) {
  QLinearState* s = state_of(ctx);
  if (s == nullptr) return;
  std::array<uint8_t, 256> local{};
  const std::array<uint8_t, 256>* table = &s->bytes;
  if (s->table_bytes == 0) {
    build_lookup<kOp>(ctx, s->q, s->type, leaky_alpha(ctx.node()), local);
    table = &local;
  }
  const auto* x = ctx.input(0).as<const uint8_t>();
  auto* y = ctx.output(0).as<uint8_t>();
  parallel_for(ctx.threads(), ctx.input(0).numel(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) y[i] = (*table)[x[i]];
  });
}

// Whether the scale and zero point inputs in [first, last] are all constants (an omitted zero
// point is one): the tables are then built when preparing.
bool constants(const std::vector<graph::ConcreteTensor>& in, const std::vector<bool>& constant,
               size_t first, size_t last) {
  for (size_t i = first; i <= last; ++i) {
    const bool omitted = i >= in.size() || in[i].dtype == DType::undefined;
    if (!omitted && (i >= constant.size() || !constant[i])) return false;
  }
  return true;
}

uint64_t lookup_packed(const graph::Node& /*n*/, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& /*out*/,
                       const std::vector<bool>& constant) {
  return constants(in, constant, 1, 4) ? sizeof(std::array<uint8_t, 256>) : 0;
}

// ---- QLinearSoftmax

// A row of `length` elements `stride` apart.
struct SoftmaxRows {
  size_t rows = 1, length = 1, stride = 1, inner = 1;
  // The first element of row r.
  size_t start(size_t r) const { return (r / inner) * length * inner + r % inner; }
};

SoftmaxRows softmax_rows(const QLinearSoftmaxRows& d, std::span<const int64_t> dims) {
  SoftmaxRows s;
  size_t outer = 1;
  for (size_t i = 0; i < d.axis; ++i) outer *= static_cast<size_t>(dims[i]);
  size_t after = 1;
  for (size_t i = d.axis + 1; i < dims.size(); ++i) after *= static_cast<size_t>(dims[i]);
  const auto extent = static_cast<size_t>(dims[d.axis]);
  if (d.coerced) {
    s.rows = outer;
    s.length = extent * after;
  } else {
    s.rows = outer * after;
    s.length = extent;
    s.stride = after;
    s.inner = after;
  }
  return s;
}

// exps[d] = exp((x - max) x_scale) for x d below the row's maximum, scaled by e^shift with the
// shift as large as keeps a row of `length` such terms below the float maximum (less a margin),
// as onnxruntime builds its table (in double, each entry then rounded to float).
void build_exps(float x_scale, size_t length, std::array<float, 256>& exps) {
  const double room =
      std::log(static_cast<double>(std::numeric_limits<float>::max() / static_cast<float>(length)));
  const double shift = std::max(0.0, room - 5.0) / x_scale;
  for (size_t d = 0; d < 256; ++d) {
    const double i = 255.0 - static_cast<double>(d);
    exps[d] = static_cast<float>(std::exp((i - 255.0 + shift) * static_cast<double>(x_scale)));
  }
}

std::unique_ptr<graph::KernelState> softmax_prepare(const KernelContext& ctx) {
  auto s = prepare_operands(ctx, QLinearOp::softmax);
  const TensorRef& x = ctx.input(0);
  s->rows = QLinearSoftmaxRows::decode(ctx.node(), ctx.node_id(), x.rank());
  const TensorRef& scale = ctx.input(s->q.scale(0));
  if (scale.data != nullptr && x.numel() > 0) {
    build_exps(scale.as<const float>()[0], softmax_rows(s->rows, x.dims).length, s->exps);
    s->table_bytes = sizeof(s->exps);
  }
  return s;
}

uint64_t softmax_packed(const graph::Node& /*n*/, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& /*out*/,
                        const std::vector<bool>& constant) {
  size_t numel = 1;
  for (int64_t d : in[0].dims) numel *= static_cast<size_t>(d);
  return numel > 0 && constants(in, constant, 1, 1) ? sizeof(std::array<float, 256>) : 0;
}

template <class T>
void softmax_run(KernelContext& ctx, const QLinearState& s, const std::array<float, 256>& exps,
                 const SoftmaxRows& r) {
  const Quant y = quant_of(ctx, s.q, QLinearOperands::kOutput);
  // onnxruntime's output scale: the integer part of 1 / y_scale.
  const float y_scale = std::floor(1.0F / y.scale);
  const Range range = range_of(s.type);
  const T* x = ctx.input(0).as<const T>();
  T* out = ctx.output(0).as<T>();
  parallel_for(
      ctx.threads(), r.rows,
      [&](size_t begin, size_t end) {
        for (size_t row = begin; row < end; ++row) {
          const size_t at = r.start(row);
          int32_t top = std::numeric_limits<int32_t>::min();
          for (size_t i = 0; i < r.length; ++i) {
            top = std::max<int32_t>(top, x[at + i * r.stride]);
          }
          float sum = 0;
          for (size_t i = 0; i < r.length; ++i) {
            sum += exps[static_cast<size_t>(top - static_cast<int32_t>(x[at + i * r.stride]))];
          }
          for (size_t i = 0; i < r.length; ++i) {
            const size_t e = at + i * r.stride;
            const float v = exps[static_cast<size_t>(top - static_cast<int32_t>(x[e]))];
            out[e] = static_cast<T>(quantize(v * y_scale / sum, y.zero, range));
          }
        }
      },
      1);
}

void softmax_kernel(KernelContext& ctx) {
  QLinearState* s = state_of(ctx);
  if (s == nullptr) return;
  const TensorRef& x = ctx.input(0);
  if (x.numel() == 0) return;
  const SoftmaxRows rows = softmax_rows(s->rows, x.dims);
  std::array<float, 256> local{};
  const std::array<float, 256>* exps = &s->exps;
  if (s->table_bytes == 0) {
    build_exps(quant_of(ctx, s->q, 0).scale, rows.length, local);
    exps = &local;
  }
  if (s->type == DType::int8) return softmax_run<int8_t>(ctx, *s, *exps, rows);
  softmax_run<uint8_t>(ctx, *s, *exps, rows);
}

// ---- QLinearAveragePool, QLinearGlobalAveragePool

bool channels_last(const graph::Node& n) {
  return graph::attr_int(n, "channels_last", 0) != 0;
}

// X's extents as [N, C, spatial...] whatever its layout.
std::vector<int64_t> as_nchw(std::span<const int64_t> dims, bool last) {
  std::vector<int64_t> d(dims.begin(), dims.end());
  if (last && d.size() >= 3) std::rotate(d.begin() + 1, d.end() - 1, d.end());
  return d;
}

// nhwc: the channels-last row (NhwcQLinearAveragePool, ...), whose X and Y are [N, H, W, C]
// whatever its attribute says.
std::unique_ptr<graph::KernelState> pool_prepare_shape(const KernelContext& ctx, QLinearOp op,
                                                       bool nhwc) {
  auto s = prepare_operands(ctx, op);
  const graph::Node& n = ctx.node();
  PoolShape& p = s->pool;
  p.channels_last = nhwc || channels_last(n);
  const std::vector<int64_t> x = as_nchw(ctx.input(0).dims, p.channels_last);
  const std::vector<int64_t> y = as_nchw(extents_of(ctx).out[0], p.channels_last);
  if (x.size() < 3 || x.size() > 2 + PoolShape::kDims || y.size() != x.size()) {
    ctx.fail("X must have 1 to 3 spatial dims, has " + extents_text(ctx.input(0).dims));
  }
  const size_t nd = x.size() - 2;
  const size_t lead = PoolShape::kDims - nd;  // leading dims of extent 1
  p.batch = x[0];
  p.channels = x[1];
  std::optional<graph::ops::PoolWindow> w;
  if (op == QLinearOp::average_pool) {
    w = graph::ops::PoolWindow::decode(n, ctx.node_id(), nd);
    p.include_pad = w->count_include_pad;
  }
  for (size_t i = 0; i < nd; ++i) {
    const size_t d = lead + i;
    p.in[d] = x[2 + i];
    p.out[d] = y[2 + i];
    if (w) {
      if (w->window.dilations[i] != 1) {
        ctx.fail(
            "dilations other than 1 are not supported (onnxruntime's QLinearAveragePool has "
            "none)");
      }
      p.kernel[d] = w->window.kernel_shape[i];
      p.stride[d] = w->window.strides[i];
      p.pad[d] = w->window.forward_pads(i, p.kernel[d], p.in[d], p.out[d]).begin;
    } else {
      p.kernel[d] = p.in[d];
    }
  }
  for (size_t d = 0; d < PoolShape::kDims; ++d) {
    p.in_size *= p.in[d];
    p.out_size *= p.out[d];
    p.kernel_size *= p.kernel[d];
  }
  return s;
}

template <bool kNhwc>
std::unique_ptr<graph::KernelState> average_pool_prepare(const KernelContext& ctx) {
  return pool_prepare_shape(ctx, QLinearOp::average_pool, kNhwc);
}
template <bool kNhwc>
std::unique_ptr<graph::KernelState> global_pool_prepare(const KernelContext& ctx) {
  return pool_prepare_shape(ctx, QLinearOp::global_average_pool, kNhwc);
}

// The pools move to their channels-last rows where they read NCHW.
bool pool_runs_channels_last(const graph::Node& n) {
  return !channels_last(n);
}

// Where plane (n, c) of a tensor of `size` elements a plane starts, and how far apart its
// elements are, in either layout.
struct PlaneAt {
  size_t base = 0;
  size_t step = 1;
};
PlaneAt plane_at(const PoolShape& p, int64_t plane, int64_t size) {
  const int64_t n = plane / p.channels;
  const int64_t c = plane % p.channels;
  if (p.channels_last) {
    return {static_cast<size_t>(n * size * p.channels + c), static_cast<size_t>(p.channels)};
  }
  return {static_cast<size_t>(plane * size), 1};
}

// A window's extent on dim d for output position o: [begin, end) inside the input, as
// onnxruntime's pools clip it (the end at the input, then the begin at 0).
struct Span {
  int64_t begin = 0;
  int64_t end = 0;
};
Span window(const PoolShape& p, size_t d, int64_t o) {
  const int64_t start = o * p.stride[d] - p.pad[d];
  return {std::max<int64_t>(start, 0), std::min(start + p.kernel[d], p.in[d])};
}

template <class T>
void average_pool_run(KernelContext& ctx, const QLinearState& s) {
  const PoolShape& p = s.pool;
  const Quant qx = quant_of(ctx, s.q, 0);
  const Quant qy = quant_of(ctx, s.q, QLinearOperands::kOutput);
  const Range range = range_of(s.type);
  const T* x = ctx.input(0).as<const T>();
  T* y = ctx.output(0).as<T>();
  // Each byte's dequantized value, the very float the sum would compute for it (scale x
  // (v - zero)), looked up rather than converted and multiplied at every tap.
  std::array<float, 256> dequantized{};
  for (size_t b = 0; b < 256; ++b) {
    dequantized[b] = qx.scale * static_cast<float>(byte_value(s.type, b) - qx.zero);
  }
  const auto byte = [](T v) { return static_cast<size_t>(static_cast<uint8_t>(v)); };
  parallel_for(
      ctx.threads(), static_cast<size_t>(p.batch * p.channels),
      [&](size_t begin, size_t end) {
        for (auto plane = static_cast<int64_t>(begin); plane < static_cast<int64_t>(end); ++plane) {
          const PlaneAt in = plane_at(p, plane, p.in_size);
          const PlaneAt out = plane_at(p, plane, p.out_size);
          size_t o = 0;
          for (int64_t o0 = 0; o0 < p.out[0]; ++o0) {
            const Span s0 = window(p, 0, o0);
            for (int64_t o1 = 0; o1 < p.out[1]; ++o1) {
              const Span s1 = window(p, 1, o1);
              for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++o) {
                const Span s2 = window(p, 2, o2);
                float sum = 0;
                for (int64_t i0 = s0.begin; i0 < s0.end; ++i0) {
                  for (int64_t i1 = s1.begin; i1 < s1.end; ++i1) {
                    for (int64_t i2 = s2.begin; i2 < s2.end; ++i2) {
                      const auto at = static_cast<size_t>((i0 * p.in[1] + i1) * p.in[2] + i2);
                      sum += dequantized[byte(x[in.base + at * in.step])];
                    }
                  }
                }
                const int64_t inside = std::max<int64_t>(0, s0.end - s0.begin) *
                                       std::max<int64_t>(0, s1.end - s1.begin) *
                                       std::max<int64_t>(0, s2.end - s2.begin);
                const int64_t count = p.include_pad ? p.kernel_size : inside;
                const float mean = count > 0 ? sum / static_cast<float>(count) : 0.0F;
                y[out.base + o * out.step] = static_cast<T>(
                    quantize(mean / qy.scale + static_cast<float>(qy.zero), 0, range));
              }
            }
          }
        }
      },
      1);
}

// Channels-last X [N, pixels, C]: blocks of kBlock channels of an image summed pixel row by pixel
// row (contiguous, vectorised) in int32, then requantized as the plain planes are.
template <class T>
void global_pool_rows(KernelContext& ctx, const QLinearState& s, float scale, Quant qx, Quant qy,
                      Range range) {
  constexpr int64_t kBlock = 256;
  const PoolShape& p = s.pool;
  const T* x = ctx.input(0).as<const T>();
  T* y = ctx.output(0).as<T>();
  const int64_t blocks = (p.channels + kBlock - 1) / kBlock;
  parallel_for(
      ctx.threads(), static_cast<size_t>(p.batch * blocks),
      [&](size_t begin, size_t end) {
        std::array<int32_t, kBlock> sums{};
        for (auto t = static_cast<int64_t>(begin); t < static_cast<int64_t>(end); ++t) {
          const int64_t n = t / blocks;
          const int64_t c0 = t % blocks * kBlock;
          const int64_t nc = std::min(kBlock, p.channels - c0);
          std::fill_n(sums.begin(), nc, 0);
          for (int64_t i = 0; i < p.in_size; ++i) {
            const T* __restrict row = x + (n * p.in_size + i) * p.channels + c0;
            int32_t* __restrict acc = sums.data();
#pragma omp simd
            for (int64_t c = 0; c < nc; ++c) acc[c] += row[c];
          }
          for (int64_t c = 0; c < nc; ++c) {
            const int64_t acc = sums[c] - int64_t{qx.zero} * p.in_size;
            y[n * p.channels + c0 + c] =
                static_cast<T>(quantize(static_cast<float>(acc) * scale, qy.zero, range));
          }
        }
      },
      1);
}

template <class T>
void global_pool_run(KernelContext& ctx, const QLinearState& s) {
  const PoolShape& p = s.pool;
  const Quant qx = quant_of(ctx, s.q, 0);
  const Quant qy = quant_of(ctx, s.q, QLinearOperands::kOutput);
  const Range range = range_of(s.type);
  const float scale = qx.scale / (qy.scale * static_cast<float>(p.in_size));
  // Sums of more than 2^23 bytes would not fit int32: the plain planes sum in int64.
  if (p.channels_last && p.in_size < (int64_t{1} << 23)) {
    return global_pool_rows<T>(ctx, s, scale, qx, qy, range);
  }
  const T* x = ctx.input(0).as<const T>();
  T* y = ctx.output(0).as<T>();
  parallel_for(
      ctx.threads(), static_cast<size_t>(p.batch * p.channels),
      [&](size_t begin, size_t end) {
        for (auto plane = static_cast<int64_t>(begin); plane < static_cast<int64_t>(end); ++plane) {
          const PlaneAt in = plane_at(p, plane, p.in_size);
          const PlaneAt out = plane_at(p, plane, 1);
          int64_t sum = 0;
          for (int64_t i = 0; i < p.in_size; ++i) {
            sum += x[in.base + static_cast<size_t>(i) * in.step];
          }
          const int64_t acc = sum - int64_t{qx.zero} * p.in_size;
          y[out.base] = static_cast<T>(quantize(static_cast<float>(acc) * scale, qy.zero, range));
        }
      },
      16);
}

void average_pool_kernel(KernelContext& ctx) {
  QLinearState* s = state_of(ctx);
  if (s == nullptr) return;
  if (s->type == DType::int8) return average_pool_run<int8_t>(ctx, *s);
  average_pool_run<uint8_t>(ctx, *s);
}

void global_pool_kernel(KernelContext& ctx) {
  QLinearState* s = state_of(ctx);
  if (s == nullptr) return;
  if (s->type == DType::int8) return global_pool_run<int8_t>(ctx, *s);
  global_pool_run<uint8_t>(ctx, *s);
}

// ---- QLinearConcat

std::unique_ptr<graph::KernelState> concat_prepare(const KernelContext& ctx) {
  auto s = prepare_operands(ctx, QLinearOp::concat);
  const auto rank = static_cast<int64_t>(extents_of(ctx).out[0].size());
  const int64_t axis = ctx.attr_int("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  s->axis = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  return s;
}

// NhwcQLinearConcat: the axis is NCHW's, the tensors [N, H, W, C].
std::unique_ptr<graph::KernelState> nhwc_concat_prepare(const KernelContext& ctx) {
  auto s = concat_prepare(ctx);
  auto* q = dynamic_cast<QLinearState*>(s.get());
  if (q != nullptr && extents_of(ctx).out[0].size() == 4) {
    constexpr std::array<size_t, 4> kNhwcAxis{0, 3, 1, 2};
    q->axis = kNhwcAxis.at(q->axis);
  }
  return s;
}

void concat_kernel(KernelContext& ctx) {
  QLinearState* s = state_of(ctx);
  if (s == nullptr) return;
  const QLinearOperands& q = s->q;
  TensorRef& y = ctx.output(0);
  auto* out = y.as<uint8_t>();
  size_t outer = 1;
  for (size_t d = 0; d < s->axis; ++d) outer *= static_cast<size_t>(y.dims[d]);
  size_t inner = 1;
  for (size_t d = s->axis + 1; d < y.rank(); ++d) inner *= static_cast<size_t>(y.dims[d]);
  const size_t out_block = static_cast<size_t>(y.dims[s->axis]) * inner;
  const Quant qy = quant_of(ctx, q, QLinearOperands::kOutput);
  const Range range = range_of(s->type);
  size_t offset = 0;  // of this tensor's block within a block of Y
  for (size_t k = 0; k < q.tensors; ++k) {
    const TensorRef& x = ctx.input(q.tensor(k));
    const size_t block = x.rank() > s->axis ? static_cast<size_t>(x.dims[s->axis]) * inner : 0;
    const Quant qx = quant_of(ctx, q, static_cast<int>(k));
    const auto* in = x.as<const uint8_t>();
    const bool copy = qx.scale == qy.scale && qx.zero == qy.zero;
    std::array<uint8_t, 256> table{};
    if (!copy) {
      for (size_t b = 0; b < 256; ++b) {
        const float v = qx.scale * static_cast<float>(byte_value(s->type, b) - qx.zero);
        table[b] = static_cast<uint8_t>(quantize(v / qy.scale, qy.zero, range));
      }
    }
    parallel_for(
        ctx.threads(), outer,
        [&](size_t begin, size_t end) {
          for (size_t o = begin; o < end; ++o) {
            const uint8_t* src = in + o * block;
            uint8_t* dst = out + o * out_block + offset;
            if (copy) {
              std::memcpy(dst, src, block);
            } else {
              for (size_t i = 0; i < block; ++i) dst[i] = table[src[i]];
            }
          }
        },
        std::max<size_t>(1, 16384 / std::max<size_t>(block, 1)));
    offset += block;
  }
}

}  // namespace

void register_qlinear(graph::OpRegistry& r) {
  constexpr std::string_view ms = "com.microsoft";
  const auto set = [&](std::string_view op, graph::KernelFn kernel, graph::PrepareFn prepare) {
    graph::OpSchema& row = r.row(ms, op);
    row.kernel = kernel;
    row.prepare = prepare;
    row.kernel_dtypes = kQLinearTypes;
    row.kernel_dtype_of = -1;  // output 0: a concat's input 0 is Y's scale
    return &row;
  };
  // in_place: each output element is written after the input elements it is computed from are
  // read, at its own index (a QLinearAdd or QLinearMul output has A's bytes only where A is not
  // broadcast; a softmax reads its row whole before writing it).
  set("QLinearAdd", add_kernel, binary_prepare_add)->in_place = true;
  set("QLinearMul", mul_kernel, binary_prepare_mul)->in_place = true;
  for (graph::OpSchema* row : {set("QLinearSigmoid", lookup_kernel<QLinearOp::sigmoid>,
                                   lookup_prepare<QLinearOp::sigmoid>),
                               set("QLinearLeakyRelu", lookup_kernel<QLinearOp::leaky_relu>,
                                   lookup_prepare<QLinearOp::leaky_relu>)}) {
    row->packed = lookup_packed;
    row->in_place = true;
  }
  graph::OpSchema* softmax = set("QLinearSoftmax", softmax_kernel, softmax_prepare);
  softmax->packed = softmax_packed;
  softmax->in_place = true;
  set("QLinearAveragePool", average_pool_kernel, average_pool_prepare<false>);
  set("QLinearGlobalAveragePool", global_pool_kernel, global_pool_prepare<false>);
  set("QLinearConcat", concat_kernel, concat_prepare);
  // The same on channels-last tensors (graph::to_channels_last), where an NhwcQLinearConv chain
  // hands them: pools and concatenations between convolutions change no layout.
  const auto nhwc = [&](std::string_view op, std::string_view row, graph::KernelFn kernel,
                        graph::PrepareFn prepare) {
    graph::OpSchema& last = r.row("footprint", row);
    last.kernel = kernel;
    last.prepare = prepare;
    last.kernel_dtypes = kQLinearTypes;
    last.kernel_dtype_of = -1;
    graph::OpSchema& plain = r.row(ms, op);
    plain.channels_last = last.op_type;
    return &plain;
  };
  nhwc("QLinearAveragePool", "NhwcQLinearAveragePool", average_pool_kernel,
       average_pool_prepare<true>)
      ->channels_last_runs = pool_runs_channels_last;
  nhwc("QLinearGlobalAveragePool", "NhwcQLinearGlobalAveragePool", global_pool_kernel,
       global_pool_prepare<true>)
      ->channels_last_runs = pool_runs_channels_last;
  nhwc("QLinearConcat", "NhwcQLinearConcat", concat_kernel, nhwc_concat_prepare)
      ->channels_last_rank4_inputs = true;
}

}  // namespace footprint::runtime::kernels
