// Integer products: MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv (the rows of
// graph/ops/integer_products.cpp), and onnxruntime's QGemm, MatMulIntegerToFloat and
// DynamicQuantizeMatMul (com.microsoft rows of graph/ops/matmul.cpp; the last quantizes its float
// A into the step's workspace as DynamicQuantizeLinear does, then runs as MatMulIntegerToFloat).
//
// Every form computes the int32 sum of (a - a_zero) (b - b_zero) over the contracted extent, as
// ONNX defines it (wrapping as int32 does, never undefined); QGemm reads A and B transposed where
// transA and transB say and adds its int32 C (broadcast to [M, N]). Then Y is the sums (int32), or
// saturate(round_half_even(acc * a_scale b_scale / y_scale) + y_zero) (plus the int32 bias before
// scaling for QLinearConv; QGemm's alpha a factor of a_scale), the scale product taken in float32
// as onnxruntime does, or, for QGemm without y_scale and MatMulIntegerToFloat, the float
// acc * alpha a_scale b_scale (plus MatMulIntegerToFloat's float bias).
//
// The scales and zero points may be scalars, one per row of A / column of B / output channel, or
// one per row or column of every matrix (graph/ops/integer_product_inputs.hpp): the kernels read
// each through its spread, decoded once when preparing. A scale that is zero, negative or not
// finite fails naming the node and the input: when preparing where it is a constant, else when
// running.
//
// Two ways to run them, chosen from the extents alone (so the workspace and packed hooks and
// prepare agree):
// - oneDNN's int8 kernels (a matrix product whose B has no batch dims, a 2-D convolution its jit
//   kernels take), where the weights are a constant, packed once (OpSchema::packed, the original
//   then released), and where the CPU has VNNI: without it oneDNN adds pairs of 8-bit products
//   in int16 first, which saturates, and the sums would not be ONNX's. oneDNN computes the raw
//   int32 sums into the planned workspace (or Y); the zero points it does not take are taken off
//   here through row, column and window sums, then the bias, the requantization or scaling.
// - plain loops accumulating in int32 (wide vectors where the CPU has them) otherwise: weights
//   computed at run time, 1-D and 3-D convolutions, B with batch dims, CPUs without VNNI.
// Their outputs are identical (IntegerProductsSession), and were bit for bit onnxruntime 1.30's
// on the models tried (docs/RUNTIME.md, "Integer products"; QGemm and MatMulIntegerToFloat
// against onnxruntime 1.32).
#include <algorithm>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dnnl_util.hpp"
#include "dtype_dispatch.hpp"
#include "dynamic_quantize.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "footprint/graph/ops/conv_window.hpp"
#include "footprint/graph/ops/integer_product_inputs.hpp"
#include "footprint/runtime/tensor.hpp"
#include "parallel_for.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::ops::IntegerProduct;
using graph::ops::IntegerProductInputs;
using graph::ops::ParamAxis;
using graph::ops::Spread;

// ---- the operands' parameters

// One scale or zero point: where it is among the inputs and how it spreads over its tensor.
// Absent (input < 0 or omitted): a zero point of 0.
struct Param {
  int input = -1;
  Spread spread = Spread::one;
  int64_t per = 1;  // values per matrix where it spreads (rows, columns or channels)

  // Index of the value for row / column / channel i of matrix `matrix` (a batch index of the
  // parameter's tensor).
  int64_t index(int64_t matrix, int64_t i) const {
    switch (spread) {
      case Spread::one:
        return 0;
      case Spread::per_axis:
        return i;
      case Spread::per_matrix:
        return matrix * per + i;
    }
    return 0;
  }
};

// The product's shape, decoded once from the concrete extents.
struct MatmulShape {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> batch;           // Y's batch extents (broadcast)
  std::vector<int64_t> a_step, b_step;  // per batch dim: A's / B's matrix index stride (0 where
                                        // the operand broadcasts)
  int64_t batches = 1;
  // Where element (m, k) of a matrix of A and (k, n) of one of B lie: row-major as stored, or
  // transposed (QGemm's transA, transB).
  int64_t a_rs = 1, a_ks = 1, b_ks = 1, b_ns = 1;
};

struct ConvShape {
  int64_t n = 1, c = 1, m = 1, group = 1;
  std::array<int64_t, 3> in{1, 1, 1}, kernel{1, 1, 1}, out{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0}, pad_end{0, 0, 0};
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// A matrix product oneDNN runs: A [rows, K] (Y's batch folded into its rows) times B [K, N]
// packed once into the primitive's layout as int8 (a uint8 B less 128, its zero point less 128
// with it), into int32 sums; the kernel then takes the zero points off with B's column sums
// (kept after the packed weights) and A's row sums:
//   sum (a - za)(b - zb) = sum a b - zb sum a - za sum b + K za zb.
struct DnnlProduct {
  dnnl::matmul::primitive_desc pd;
  dnnl::reorder::primitive_desc pack;
  int64_t rows = 0, k = 0, n = 0;
  int32_t b_shift = 0;
  uint64_t scratch_bytes = 0;  // oneDNN's scratchpad, first in the workspace
  uint64_t sums_bytes = 0;     // then the int32 sums of a quantized output
  uint64_t weights_bytes = 0;  // the packed weights, then N column sums
  uint64_t workspace() const { return scratch_bytes + sums_bytes; }
  uint64_t packed() const { return weights_bytes + static_cast<uint64_t>(n) * sizeof(int32_t); }
};

// A 2-D convolution oneDNN runs (its int8 jit kernels): x reordered to channels-last in the
// workspace, the weights packed once as int8 (a uint8 w less 128), x's zero point as oneDNN's
// (a padded position then adds nothing, as in ONNX), int32 sums channels-last in the workspace;
// the kernel then takes w's zero points off with the window sums of x less its zero point,
//   sum (x - zx)(w - zw) = sum (x - zx) w - zw sum (x - zx),
// adds the bias and requantizes into Y.
//
// NhwcQLinearConv (graph::to_channels_last) is the same convolution on tensors already
// channels-last: x read where it lies and Y requantized from the sums row by row, with no
// layout change on either side.
struct DnnlConv {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::reorder::primitive_desc pack, to_channels_last;
  int32_t w_shift = 0;
  bool channels_last = false;  // x and Y [N, H, W, C]: no reorder, no x in the workspace
  int64_t group = 1;           // the convolution's groups, or 1 where it runs dense (dnnl_conv)
  // The workspace: scratch (the primitive's or the reorder's), x channels-last (plain x only),
  // the int32 sums, the window sums.
  uint64_t src_offset = 0, dst_offset = 0, window_offset = 0, total = 0;
  uint64_t weights_bytes = 0;
};

class ProductState final : public graph::KernelState {
 public:
  uint64_t owned_bytes() const override { return packed.size(); }

  IntegerProductInputs in;
  DType a_dtype = DType::undefined, b_dtype = DType::undefined, y_dtype = DType::undefined;
  Param a_zero, b_zero, a_scale, b_scale, y_scale, y_zero;
  float alpha = 1.0F;              // QGemm's, a factor of every scale
  int64_t c_rows = 0, c_cols = 0;  // QGemm's int32 C over Y [M, N]: 1 where it broadcasts; 0: none
  bool float_bias = false;         // MatMulIntegerToFloat's bias [N], added after scaling
  MatmulShape mm;
  ConvShape conv;
  bool scales_checked = false;  // every scale is a constant, checked when preparing
  // Where oneDNN runs the product: its plan, the primitive and the packed weights.
  std::optional<DnnlProduct> dnnl;
  std::optional<DnnlState> primitive;
  AlignedBuffer packed;
  std::optional<DnnlConv> dnnl_conv;
  std::optional<DnnlState> to_channels_last;
  int32_t x_zero = 0;          // oneDNN reads x's zero point from here
  bool channels_last = false;  // NhwcQLinearConv: x and Y [N, H, W, C]
};

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

[[noreturn]] void fail_input(const graph::Node& node, const IntegerProductInputs& in, int i,
                             const std::string& what) {
  node_fail(node, "input '" + in.name(i) + "' " + what);
}

// The parameter at input i over a tensor of extents `tensor`, checked for its dtype (`want`) and
// its extents.
Param decode_param(const graph::Node& node, const IntegerProductInputs& in, const Extents& e, int i,
                   const std::vector<int64_t>& tensor, DType want) {
  Param p;
  if (i < 0 || !e.has_in(static_cast<size_t>(i))) return p;
  const auto at = static_cast<size_t>(i);
  // A scale (want float32) may be float16 or bfloat16 where inference allowed it (QLinearMatMul
  // from opset 21): read widened (ScaleValues).
  const bool widened = want == DType::float32 &&
                       (e.in_dtype[at] == DType::float16 || e.in_dtype[at] == DType::bfloat16);
  if (e.in_dtype[at] != want && !widened) {
    fail_input(node, in, i,
               "is " + dtype_label(e.in_dtype[at]) + ", not " + dtype_label(want) +
                   (want == DType::float32 ? "" : " as its tensor"));
  }
  const ParamAxis axis = in.axis(i);
  const auto spread = graph::ops::spread_of(e.in[at], tensor, axis);
  if (!spread) {
    fail_input(node, in, i,
               extents_text(e.in[at]) + " is not " + graph::ops::spread_forms(axis) + " of " +
                   extents_text(tensor));
  }
  p.input = i;
  p.spread = *spread;
  if (*spread != Spread::one) {
    const size_t r = tensor.size();
    p.per = axis == ParamAxis::rows      ? tensor[r - 2]
            : axis == ParamAxis::columns ? tensor[r - 1]
                                         : tensor[0];
  }
  return p;
}

// Element j of a scale tensor, float32 or (QLinearMatMul from opset 21) float16 or bfloat16.
float scale_element(const void* data, DType t, size_t j) {
  switch (t) {
    case DType::float16:
      return to_float(static_cast<const Float16*>(data)[j]);
    case DType::bfloat16:
      return to_float(static_cast<const BFloat16*>(data)[j]);
    default:
      return static_cast<const float*>(data)[j];
  }
}

// A scale must be a positive finite float: anything else makes no quantized value.
void check_scales(const graph::Node& node, const IntegerProductInputs& in, int i,
                  const graph::TensorRef& t) {
  for (size_t j = 0; j < t.numel(); ++j) {
    const float s = scale_element(t.data, t.dtype, j);
    if (!(s > 0.0F) || !std::isfinite(s)) {
      fail_input(node, in, i,
                 "holds " + std::to_string(s) + " at " + std::to_string(j) +
                     ": a scale must be positive and finite");
    }
  }
}

MatmulShape matmul_shape(const graph::Node& node, const std::vector<int64_t>& a,
                         const std::vector<int64_t>& b, const std::vector<int64_t>& y) {
  if (a.empty() || b.empty()) node_fail(node, "the operands must not be scalars");
  const size_t rank = std::max({a.size(), b.size(), size_t{2}});
  std::vector<int64_t> da(rank, 1), db(rank, 1);
  std::copy(a.begin(), a.end(), da.end() - static_cast<std::ptrdiff_t>(a.size()));
  if (b.size() == 1) {
    db[rank - 2] = b[0];
  } else {
    std::copy(b.begin(), b.end(), db.end() - static_cast<std::ptrdiff_t>(b.size()));
  }
  MatmulShape s;
  s.m = da[rank - 2];
  s.k = da[rank - 1];
  s.n = db[rank - 1];
  if (db[rank - 2] != s.k) {
    node_fail(node, "inner dims of " + extents_text(a) + " and " + extents_text(b) + " differ");
  }
  s.a_step.assign(rank - 2, 0);
  s.b_step.assign(rank - 2, 0);
  int64_t a_matrices = 1, b_matrices = 1;
  for (size_t i = rank - 2; i-- > 0;) {
    if (da[i] != db[i] && da[i] != 1 && db[i] != 1) {
      node_fail(node, "batch dims of " + extents_text(a) + " and " + extents_text(b) +
                          " do not broadcast");
    }
    s.a_step[i] = da[i] == 1 ? 0 : a_matrices;
    s.b_step[i] = db[i] == 1 ? 0 : b_matrices;
    a_matrices *= da[i];
    b_matrices *= db[i];
  }
  for (size_t i = 0; i + 2 < rank; ++i) s.batch.push_back(std::max(da[i], db[i]));
  s.batches = numel(s.batch);
  if (s.batches * s.m * s.n != numel(y)) {
    node_fail(node, "the output " + extents_text(y) + " does not match the operands'");
  }
  return s;
}

// QGemm's operands as the product reads them, A' [M, K] and B' [K, N], from A and B as stored and
// transA / transB; the other products' as stored.
struct LogicalOperands {
  std::vector<int64_t> a, b;
  bool trans_a = false, trans_b = false;
};

LogicalOperands logical_operands(const graph::Node& node, IntegerProduct op,
                                 const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  LogicalOperands l{a, b};
  if (op != IntegerProduct::qgemm) return l;
  if (a.size() != 2 || b.size() != 2) {
    node_fail(node,
              "the operands " + extents_text(a) + " and " + extents_text(b) + " must be matrices");
  }
  l.trans_a = node_int(node, "transA", 0) != 0;
  l.trans_b = node_int(node, "transB", 0) != 0;
  if (l.trans_a) std::swap(l.a[0], l.a[1]);
  if (l.trans_b) std::swap(l.b[0], l.b[1]);
  return l;
}

MatmulShape product_shape(const graph::Node& node, IntegerProduct op, const std::vector<int64_t>& a,
                          const std::vector<int64_t>& b, const std::vector<int64_t>& y) {
  const LogicalOperands l = logical_operands(node, op, a, b);
  MatmulShape s = matmul_shape(node, l.a, l.b, y);
  s.a_rs = l.trans_a ? 1 : s.k;
  s.a_ks = l.trans_a ? s.m : 1;
  s.b_ks = l.trans_b ? 1 : s.n;
  s.b_ns = l.trans_b ? s.k : 1;
  return s;
}

ConvShape conv_shape(const graph::Node& node, int32_t node_id, const std::vector<int64_t>& x,
                     const std::vector<int64_t>& w, const std::vector<int64_t>& y) {
  if (x.size() < 3 || x.size() > 5) {
    node_fail(node, "input 'x' " + extents_text(x) + " must have 1 to 3 spatial dims");
  }
  const size_t spatial = x.size() - 2;
  if (w.size() != x.size()) {
    node_fail(node,
              "input 'w' " + extents_text(w) + " does not have the rank of 'x' " + extents_text(x));
  }
  const auto window = graph::ops::ConvWindow::decode(node, node_id, spatial);
  ConvShape s;
  s.n = x[0];
  s.c = x[1];
  s.m = w[0];
  s.group = window.group;
  if (s.group <= 0 || s.c != w[1] * s.group || s.m % s.group != 0) {
    node_fail(node, "input 'w' " + extents_text(w) + " does not fit 'x' " + extents_text(x) +
                        " in " + std::to_string(s.group) + " groups");
  }
  if (y.size() != x.size() || y[0] != s.n || y[1] != s.m) {
    node_fail(node, "the output " + extents_text(y) + " does not match the operands'");
  }
  const size_t skip = 3 - spatial;  // leading spatial dims of extent 1
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t k = w[i + 2];
    if (!window.kernel_shape.empty() && window.kernel_shape[i] != k) {
      node_fail(node, "attribute 'kernel_shape' does not match 'w' " + extents_text(w));
    }
    s.in[skip + i] = x[i + 2];
    s.kernel[skip + i] = k;
    s.out[skip + i] = y[i + 2];
    s.stride[skip + i] = window.strides[i];
    s.dilation[skip + i] = window.dilations[i];
    s.pad[skip + i] = window.forward_pads(i, k, x[i + 2], y[i + 2]).begin;
    // The end pad that gives exactly the output's extent (what oneDNN checks).
    s.pad_end[skip + i] = (y[i + 2] - 1) * window.strides[i] + window.effective_kernel(i, k) -
                          x[i + 2] - s.pad[skip + i];
  }
  return s;
}

// ---- reading parameters while running

// A parameter's values for one run, its tensor looked up once (the hot loops read them per
// column).
template <class T>
struct ParamValues {
  const T* data = nullptr;  // nullptr: an absent zero point, 0
  Param p;
  T at(int64_t matrix, int64_t i) const {
    return data == nullptr ? T{0} : data[p.index(matrix, i)];
  }
};

template <class T>
ParamValues<T> values_of(const graph::KernelContext& ctx, const Param& p) {
  if (p.input < 0 || !ctx.has_input(static_cast<size_t>(p.input))) return {nullptr, p};
  return {ctx.input(static_cast<size_t>(p.input)).as<const T>(), p};
}

template <class T>
int32_t zero_at(const graph::KernelContext& ctx, const Param& p, int64_t matrix, int64_t i) {
  if (p.input < 0 || !ctx.has_input(static_cast<size_t>(p.input))) return 0;
  return static_cast<int32_t>(
      ctx.input(static_cast<size_t>(p.input)).as<const T>()[p.index(matrix, i)]);
}

// A scale's values for one run, float32 or widened as read (float16, bfloat16); an op without
// scales (MatMulInteger, ConvInteger) reads 0.
struct ScaleValues {
  const void* data = nullptr;
  DType dtype = DType::undefined;  // undefined: absent
  Param p;
  // float32 first, a test the requantizing loops can hoist out of their columns (a run of
  // BERT-mini QOperator counts 1.5% more instructions than with float32 pointers alone:
  // callgrind, 20 runs, before and after 83b1c15).
  float at(int64_t matrix, int64_t i) const {
    if (dtype == DType::float32) return static_cast<const float*>(data)[p.index(matrix, i)];
    return data == nullptr ? 0.0F : scale_element(data, dtype, p.index(matrix, i));
  }
};

ScaleValues scales_of(const graph::KernelContext& ctx, const Param& p) {
  if (p.input < 0 || !ctx.has_input(static_cast<size_t>(p.input))) {
    return {nullptr, DType::undefined, p};
  }
  const graph::TensorRef& t = ctx.input(static_cast<size_t>(p.input));
  return {t.data, t.dtype, p};
}

float scale_at(const graph::KernelContext& ctx, const Param& p, int64_t matrix, int64_t i) {
  return scales_of(ctx, p).at(matrix, i);
}

// The scales of a step whose scales are not all constants.
void check_run_scales(graph::KernelContext& ctx, const ProductState& s) {
  if (s.scales_checked) return;
  for (const int i : {s.in.a_scale, s.in.b_scale, s.in.y_scale}) {
    if (i >= 0 && ctx.has_input(static_cast<size_t>(i))) {
      check_scales(ctx.node(), s.in, i, ctx.input(static_cast<size_t>(i)));
    }
  }
}

// a_scale b_scale / y_scale in float32, as onnxruntime takes it; an overflow to infinity (scales
// far apart) held at the largest float, so that a zero sum still gives 0 rather than NaN.
float multiplier(float a_scale, float b_scale, float y_scale) {
  return std::min(a_scale * b_scale / y_scale, std::numeric_limits<float>::max());
}

// saturate(round_half_even(acc * multiplier) + zero) in TY's range (nearbyint rounds half to even
// in the default rounding mode). Plain comparisons, so the loops calling it vectorise.
template <class TY>
TY requantize(int32_t acc, float multiplier, int32_t zero) {
  float v = std::nearbyint(static_cast<float>(acc) * multiplier) + static_cast<float>(zero);
  constexpr auto lo = static_cast<float>(std::numeric_limits<TY>::min());
  constexpr auto hi = static_cast<float>(std::numeric_limits<TY>::max());
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return static_cast<TY>(v);
}

#if defined(FOOTPRINT_WIDE_VECTORS)
// requantize(in + b, m, zy) for n elements (b nullptr: none), 16 to an AVX-512 vector, the last
// ones masked: the same bytes as the loop. GCC vectorised that loop at 256 bits with blends for its
// clamps; here the product is held within +-2^30 (past every byte range, so it clamps the same),
// rounded half to even by the conversion (the default rounding mode, as nearbyint), offset by the
// zero point in int32 and narrowed with saturation. GCC 12 warns that its intrinsics' headers read
// an undefined vector (as for transpose_16x16): off around this function alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <class TY>
__attribute__((target("avx512f"))) void requantize_avx512(const int32_t* in, const uint32_t* b,
                                                          const float* m, int32_t zy, TY* out,
                                                          int64_t n) {
  const __m512 lo = _mm512_set1_ps(-1073741824.0F);
  const __m512 hi = _mm512_set1_ps(1073741824.0F);
  const __m512i zero = _mm512_set1_epi32(zy);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16
                            ? __mmask16{0xFFFF}
                            : static_cast<__mmask16>((1U << static_cast<unsigned>(n - j)) - 1);
    __m512i acc = _mm512_maskz_loadu_epi32(k, in + j);
    if (b != nullptr) acc = _mm512_add_epi32(acc, _mm512_maskz_loadu_epi32(k, b + j));
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_maskz_loadu_ps(k, m + j));
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(v), zero);
    if constexpr (std::is_same_v<TY, uint8_t>) {
      _mm512_mask_cvtusepi32_storeu_epi8(out + j, k, _mm512_max_epi32(r, _mm512_setzero_si512()));
    } else {
      _mm512_mask_cvtsepi32_storeu_epi8(out + j, k, r);
    }
  }
}
#pragma GCC diagnostic pop
#endif

// ---- matrix products

// Where one block of a row of Y goes: row m of Y's matrix `batch` (A's matrix am, B's bm), its
// columns [n0, n0 + count).
struct RowBlock {
  int64_t batch = 0, am = 0, bm = 0, m = 0, n0 = 0, count = 0;
};

constexpr int64_t kColumnBlock = 256;

// The multipliers of one block of Y's columns, kept across the rows that share them: a
// per-tensor a_scale and y_scale give every row the same (each a division and a scale lookup,
// which cost more than requantizing itself: a ViT's QLinearMatMul of [197, 384] x [384, 1536]
// spent 0.6 ms of its 1.0 there against oneDNN's 0.4 for the product).
struct BlockMultipliers {
  std::array<float, kColumnBlock> values{};
  std::array<int64_t, 4> key{-1, -1, -1, -1};  // a_scale's index, y_scale's, B's matrix, n0
};

// A block of Y from its int32 sums (wrapping, so unsigned): stored as they are (int32 Y), or
// QGemm's C added, then requantized (8-bit Y) or scaled to float (QGemm without y_scale,
// MatMulIntegerToFloat and its bias).
template <class TY>
void store_sums(const graph::KernelContext& ctx, const ProductState& s, const uint32_t* acc,
                const RowBlock& r, BlockMultipliers& kept, TY* y) {
  if constexpr (std::is_same_v<TY, int32_t>) {
    for (int64_t j = 0; j < r.count; ++j) y[j] = static_cast<int32_t>(acc[j]);
  } else {
    std::array<uint32_t, kColumnBlock> sums;  // NOLINT: written before read, not cleared per block
    const uint32_t* from = acc;
    if (s.c_rows > 0) {
      const int32_t* c = ctx.input(static_cast<size_t>(s.in.bias)).as<const int32_t>() +
                         (s.c_rows == 1 ? 0 : r.m * s.c_cols);
      for (int64_t j = 0; j < r.count; ++j) {
        sums[j] = acc[j] + static_cast<uint32_t>(c[s.c_cols == 1 ? 0 : r.n0 + j]);
      }
      from = sums.data();
    }
    constexpr bool kToFloat = std::is_same_v<TY, float>;
    const std::array<int64_t, 4> key{s.a_scale.index(r.am, r.m),
                                     kToFloat ? 0 : s.y_scale.index(r.batch, r.m), r.bm, r.n0};
    float* multipliers = kept.values.data();
    if (key != kept.key) {
      const ScaleValues b_scale = scales_of(ctx, s.b_scale);
      const float sa = scale_at(ctx, s.a_scale, r.am, r.m) * s.alpha;
      if constexpr (kToFloat) {
        for (int64_t j = 0; j < r.count; ++j) multipliers[j] = sa * b_scale.at(r.bm, r.n0 + j);
      } else {
        const float sy = scale_at(ctx, s.y_scale, r.batch, r.m);
        for (int64_t j = 0; j < r.count; ++j) {
          multipliers[j] = multiplier(sa, b_scale.at(r.bm, r.n0 + j), sy);
        }
      }
      kept.key = key;
    }
    if constexpr (kToFloat) {
      for (int64_t j = 0; j < r.count; ++j) {
        y[j] = static_cast<float>(static_cast<int32_t>(from[j])) * multipliers[j];
      }
      if (s.float_bias) {
        const float* bias = ctx.input(static_cast<size_t>(s.in.bias)).as<const float>() + r.n0;
        for (int64_t j = 0; j < r.count; ++j) y[j] += bias[j];
      }
    } else {
      const int32_t zy = zero_at<TY>(ctx, s.y_zero, r.batch, r.m);
#if defined(FOOTPRINT_WIDE_VECTORS)
      if (wide::host_isa() == wide::Isa::avx512) {
        requantize_avx512(reinterpret_cast<const int32_t*>(from), nullptr, multipliers, zy, y,
                          r.count);
        return;
      }
#endif
      for (int64_t j = 0; j < r.count; ++j) {
        y[j] = requantize<TY>(static_cast<int32_t>(from[j]), multipliers[j], zy);
      }
    }
  }
}

// The matrix index of A and of B for Y's batch index `batch`.
std::pair<int64_t, int64_t> operand_matrices(const MatmulShape& s, int64_t batch) {
  int64_t a = 0, b = 0;
  for (size_t i = s.batch.size(); i-- > 0;) {
    const int64_t at = batch % s.batch[i];
    batch /= s.batch[i];
    a += at * s.a_step[i];
    b += at * s.b_step[i];
  }
  return {a, b};
}

template <class TA, class TB, class TY>
void matmul_rows(graph::KernelContext& ctx, const ProductState& s, int64_t begin, int64_t end) {
  const MatmulShape& sh = s.mm;
  const TA* a_data = ctx.input(static_cast<size_t>(s.in.a)).as<const TA>();
  const TB* b_data = ctx.input(static_cast<size_t>(s.in.b)).as<const TB>();
  TY* y_data = ctx.output(0).as<TY>();
  const auto b_zero = values_of<TB>(ctx, s.b_zero);
  std::array<int32_t, kColumnBlock> zb{};
  std::array<uint32_t, kColumnBlock> acc{};  // unsigned: wraps as ONNX's int32 sum does
  BlockMultipliers kept;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t batch = row / sh.m;
    const int64_t m = row % sh.m;
    const auto [am, bm] = operand_matrices(sh, batch);
    const TA* a = a_data + am * sh.m * sh.k + m * sh.a_rs;
    const TB* b = b_data + bm * sh.k * sh.n;
    const int32_t za = zero_at<TA>(ctx, s.a_zero, am, m);
    for (int64_t n0 = 0; n0 < sh.n; n0 += kColumnBlock) {
      const int64_t nn = std::min(kColumnBlock, sh.n - n0);
      // int8 zero points are signed: sign extension is meant.
      // NOLINTNEXTLINE(bugprone-signed-char-misuse)
      for (int64_t j = 0; j < nn; ++j) zb[j] = b_zero.at(bm, n0 + j);
      std::fill_n(acc.begin(), nn, 0U);
      for (int64_t k = 0; k < sh.k; ++k) {
        const int32_t av = static_cast<int32_t>(a[k * sh.a_ks]) - za;
        if (av == 0) continue;
        const TB* brow = b + k * sh.b_ks + n0 * sh.b_ns;
        if (sh.b_ns == 1) {
          for (int64_t j = 0; j < nn; ++j) {
            acc[j] += static_cast<uint32_t>(av * (static_cast<int32_t>(brow[j]) - zb[j]));
          }
        } else {
          for (int64_t j = 0; j < nn; ++j) {
            acc[j] += static_cast<uint32_t>(av * (static_cast<int32_t>(brow[j * sh.b_ns]) - zb[j]));
          }
        }
      }
      store_sums<TY>(ctx, s, acc.data(), {batch, am, bm, m, n0, nn}, kept,
                     y_data + row * sh.n + n0);
    }
  }
}

template <class TA, class TB, class TY>
void run_matmul_typed(graph::KernelContext& ctx, const ProductState& s) {
  const int64_t rows = s.mm.batches * s.mm.m;
  const auto work = static_cast<size_t>(std::max<int64_t>(1, s.mm.k * s.mm.n));
  parallel_for(
      ctx.threads(), static_cast<size_t>(rows),
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          matmul_rows<TA, TB, TY>(ctx, s, static_cast<int64_t>(begin), static_cast<int64_t>(end));
        });
      },
      std::max<size_t>(1, size_t{1 << 16} / work));
}

// ---- convolutions

// One output plane (image n, channel oc) of the int32 sums, into `acc`: padding reads as the
// input's zero point, so it adds nothing. kWindowSums: every weight read as 1 (the sums of x less
// its zero point over each window of oc's group, which the oneDNN path needs).
template <class TX, class TW, bool kWindowSums = false>
void conv_plane(const graph::KernelContext& ctx, const ProductState& s, int64_t n, int64_t oc,
                uint32_t* acc) {
  const ConvShape& c = s.conv;
  const TX* x = ctx.input(static_cast<size_t>(s.in.a)).as<const TX>();
  const TW* w = ctx.input(static_cast<size_t>(s.in.b)).as<const TW>();
  const int64_t cg = c.c / c.group;
  const int64_t g = oc / (c.m / c.group);
  const int32_t zx = zero_at<TX>(ctx, s.a_zero, 0, 0);
  const int32_t zw = zero_at<TW>(ctx, s.b_zero, 0, oc);
  std::fill_n(acc, c.out_plane(), 0U);
  for (int64_t ic = 0; ic < cg; ++ic) {
    const TX* xp = x + (n * c.c + g * cg + ic) * c.in_plane();
    const TW* wk = w + (oc * cg + ic) * c.kernel_size();
    for (int64_t kd = 0; kd < c.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < c.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < c.kernel[2]; ++kw) {
          const int32_t wv =
              kWindowSums
                  ? 1
                  : static_cast<int32_t>(wk[(kd * c.kernel[1] + kh) * c.kernel[2] + kw]) - zw;
          if (wv == 0) continue;
          // The outputs whose input column lies inside the row: iw = ow s - p + kw d in [0, W).
          const int64_t shift = kw * c.dilation[2] - c.pad[2];
          int64_t ow_begin = shift >= 0 ? 0 : (-shift + c.stride[2] - 1) / c.stride[2];
          int64_t ow_end = c.in[2] - shift <= 0 ? 0 : (c.in[2] - shift - 1) / c.stride[2] + 1;
          ow_end = std::min(ow_end, c.out[2]);
          ow_begin = std::min(ow_begin, ow_end);
          for (int64_t od = 0; od < c.out[0]; ++od) {
            const int64_t id = od * c.stride[0] - c.pad[0] + kd * c.dilation[0];
            if (id < 0 || id >= c.in[0]) continue;
            for (int64_t oh = 0; oh < c.out[1]; ++oh) {
              const int64_t ih = oh * c.stride[1] - c.pad[1] + kh * c.dilation[1];
              if (ih < 0 || ih >= c.in[1]) continue;
              const TX* xr = xp + (id * c.in[1] + ih) * c.in[2] + shift;
              uint32_t* ar = acc + (od * c.out[1] + oh) * c.out[2];
              for (int64_t ow = ow_begin; ow < ow_end; ++ow) {
                ar[ow] +=
                    static_cast<uint32_t>(wv * (static_cast<int32_t>(xr[ow * c.stride[2]]) - zx));
              }
            }
          }
        }
      }
    }
  }
}

template <class TX, class TW, class TY>
void run_conv_typed(graph::KernelContext& ctx, const ProductState& s) {
  const ConvShape& c = s.conv;
  const int64_t plane = c.out_plane();
  uint32_t* sums = nullptr;
  if constexpr (std::is_same_v<TY, int32_t>) {
    sums = ctx.output(0).as<uint32_t>();  // int32 and uint32 may alias
  } else {
    const std::span<std::byte> ws = ctx.workspace();
    const auto need = static_cast<size_t>(c.n * c.m * plane) * sizeof(uint32_t);
    if (ws.size() < need) {
      ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " bytes) is smaller than " +
               std::to_string(need) + " bytes");
    }
    sums = reinterpret_cast<uint32_t*>(ws.data());
  }
  const auto planes = static_cast<size_t>(c.n * c.m);
  const auto work = static_cast<size_t>(std::max<int64_t>(1, plane * c.kernel_size() * c.c));
  parallel_for(
      ctx.threads(), planes,
      [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) {
          const auto i = static_cast<int64_t>(p);
          uint32_t* acc = sums + i * plane;
          with_wide_vectors([&] { conv_plane<TX, TW>(ctx, s, i / c.m, i % c.m, acc); });
          if constexpr (!std::is_same_v<TY, int32_t>) {
            const int64_t oc = i % c.m;
            const int32_t bias =
                s.in.bias >= 0 && ctx.has_input(static_cast<size_t>(s.in.bias))
                    ? ctx.input(static_cast<size_t>(s.in.bias)).as<const int32_t>()[oc]
                    : 0;
            const float m =
                multiplier(scale_at(ctx, s.a_scale, 0, 0), scale_at(ctx, s.b_scale, 0, oc),
                           scale_at(ctx, s.y_scale, 0, 0));
            const int32_t zy = zero_at<TY>(ctx, s.y_zero, 0, 0);
            TY* y = ctx.output(0).as<TY>() + i * plane;
            with_wide_vectors([&] {
              for (int64_t j = 0; j < plane; ++j) {
                y[j] = requantize<TY>(static_cast<int32_t>(acc[j] + static_cast<uint32_t>(bias)), m,
                                      zy);
              }
            });
          }
        }
      },
      std::max<size_t>(1, size_t{1 << 16} / work));
}

// ---- matrix products on oneDNN

using dnnl::memory;

uint64_t aligned(uint64_t bytes) {
  return (bytes + 63) / 64 * 64;
}

// Where a channels-last convolution oneDNN has no jit kernel for keeps its NCHW copies of x and
// Y in the workspace (run_conv_through_nchw), the plain loops' own workspace after them.
struct ThroughNchw {
  uint64_t y_offset = 0, loops_offset = 0;
  static ThroughNchw of(int64_t x_bytes, int64_t y_bytes) {
    ThroughNchw t;
    t.y_offset = aligned(static_cast<uint64_t>(x_bytes));
    t.loops_offset = t.y_offset + aligned(static_cast<uint64_t>(y_bytes));
    return t;
  }
};

memory::data_type int8_type(DType t) {
  return t == DType::uint8 ? memory::data_type::u8 : memory::data_type::s8;
}

// Whether oneDNN's int8 products are exact here. With VNNI they add 8-bit products straight
// into int32; without it, its kernels add pairs of them in int16 first, which saturates (255 x
// 127 x 2 > 32767) and would change the sums, so the plain loops run instead.
bool int8_products_exact() {
  static const bool vnni = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    for (const dnnl::cpu_isa need : {dnnl::cpu_isa::avx512_core_vnni, dnnl::cpu_isa::avx2_vnni}) {
      const auto bits = static_cast<unsigned>(need);
      if ((isa & bits) == bits) return true;  // the ISAs are nested bit masks
    }
    return false;
  }();
  return vnni;
}

// The oneDNN plan of a matrix product of a B without batch dims (a weight), or nullopt where
// the plain loops run it: the same answer for the workspace, packed and prepare hooks, which
// all decide from the extents alone.
std::optional<DnnlProduct> dnnl_product(const graph::Node& node, IntegerProduct op,
                                        const Extents& e) {
  const IntegerProductInputs in = IntegerProductInputs::of(op);
  const auto a = static_cast<size_t>(in.a);
  const auto b = static_cast<size_t>(in.b);
  if (in.conv() || !int8_products_exact() || !all_positive(e) || !e.has_in(a) || !e.has_in(b) ||
      !graph::ops::integer_operand_dtype(e.in_dtype[a]) ||
      !graph::ops::integer_operand_dtype(e.in_dtype[b])) {
    return std::nullopt;
  }
  const MatmulShape s = product_shape(node, op, e.in[a], e.in[b], e.out[0]);
  for (const int64_t step : s.b_step) {
    if (step != 0) return std::nullopt;  // one B per matrix of the batch
  }
  DnnlProduct d;
  d.rows = s.batches * s.m;
  d.k = s.k;
  d.n = s.n;
  d.b_shift = e.in_dtype[b] == DType::uint8 ? 128 : 0;
  try {
    // A's batch folds into its rows: a transposed A (QGemm's) is one matrix.
    const memory::desc src({d.rows, d.k}, int8_type(e.in_dtype[a]), memory::dims{s.a_rs, s.a_ks});
    const memory::desc weights({d.k, d.n}, memory::data_type::s8, memory::format_tag::any);
    const memory::desc dst({d.rows, d.n}, memory::data_type::s32, memory::dims{d.n, 1});
    d.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), user_scratchpad(),
                                        cpu_engine());
    // B as stored into the primitive's layout; a uint8 B less 128 on the way (its zero point).
    const memory::desc plain({d.k, d.n}, memory::data_type::s8, memory::dims{s.b_ks, s.b_ns});
    d.pack = dnnl::reorder::primitive_desc(cpu_engine(), plain, cpu_engine(), d.pd.weights_desc());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  d.scratch_bytes = aligned(d.pd.scratchpad_desc().get_size());
  // The int32 sums go to Y where it is int32; else to the workspace, before Y is made of them.
  d.sums_bytes = e.out_dtype[0] != DType::int32
                     ? static_cast<uint64_t>(d.rows) * static_cast<uint64_t>(d.n) * sizeof(int32_t)
                     : 0;
  d.weights_bytes = aligned(d.pd.weights_desc().get_size());
  return d;
}

// Reorders the constant weights `w` (`count` elements) into `to` with `pack`, from int8: a
// uint8 tensor (`shift` 128) goes through a copy less 128 (each byte with its top bit flipped),
// held only while packing. oneDNN's reorder cannot take that zero point itself where the packed
// layout carries its compensation (an int8 A, x's zero point).
void pack_weights(const dnnl::reorder::primitive_desc& pack, const void* w, size_t count,
                  int32_t shift, void* to) {
  std::vector<uint8_t> shifted;
  if (shift != 0) {
    const auto* bytes = static_cast<const uint8_t*>(w);
    shifted.resize(count);
    for (size_t i = 0; i < count; ++i) shifted[i] = bytes[i] ^ 0x80U;
    w = shifted.data();
  }
  memory from(pack.src_desc(), cpu_engine(), const_cast<void*>(w));
  memory dst(pack.dst_desc(), cpu_engine(), to);
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(pack).execute(stream, from, dst);
  stream.wait();
}

// Packs the constant B once and builds the primitive over the packed copy.
void prepare_dnnl(ProductState& s, const DnnlProduct& d, const void* b) {
  s.packed = AlignedBuffer(d.packed());
  pack_weights(d.pack, b, static_cast<size_t>(d.k * d.n), d.b_shift, s.packed.data());
  // Column sums of B as packed (less the shift), for the zero points.
  auto* sums = reinterpret_cast<int32_t*>(s.packed.data() + d.weights_bytes);
  std::fill_n(sums, d.n, 0);
  const MatmulShape& sh = s.mm;
  const auto add = [&](auto* rows) {
    for (int64_t k = 0; k < d.k; ++k) {
      for (int64_t j = 0; j < d.n; ++j)
        sums[j] += static_cast<int32_t>(rows[k * sh.b_ks + j * sh.b_ns]) - d.b_shift;
    }
  };
  if (d.b_shift != 0) {
    add(static_cast<const uint8_t*>(b));
  } else {
    add(static_cast<const int8_t*>(b));
  }
  s.primitive.emplace(
      d.pd, dnnl::matmul(d.pd),
      std::vector<std::pair<int, memory::desc>>{{DNNL_ARG_SRC, d.pd.src_desc()},
                                                {DNNL_ARG_WEIGHTS, d.pd.weights_desc()},
                                                {DNNL_ARG_DST, d.pd.dst_desc()}});
  s.primitive->bind(DNNL_ARG_WEIGHTS, s.packed.data());
  s.dnnl = d;
}

// Rows [begin, end) of Y from oneDNN's sums: the zero points taken off, then stored as Y's type
// asks (store_sums). A few rows at a time, a block of columns across them before the next block,
// so the rows that share their multipliers compute them once.
template <class TA, class TB, class TY>
void finish_dnnl_rows(graph::KernelContext& ctx, const ProductState& s, const int32_t* sums,
                      int64_t begin, int64_t end) {
  constexpr int64_t kRows = 32;
  const DnnlProduct& d = *s.dnnl;
  const MatmulShape& sh = s.mm;
  const TA* a_data = ctx.input(static_cast<size_t>(s.in.a)).as<const TA>();
  const auto* col_sums = reinterpret_cast<const int32_t*>(s.packed.data() + d.weights_bytes);
  const TB* zb = s.b_zero.input >= 0 && ctx.has_input(static_cast<size_t>(s.b_zero.input))
                     ? ctx.input(static_cast<size_t>(s.b_zero.input)).as<const TB>()
                     : nullptr;
  const bool zb_per_column = zb != nullptr && s.b_zero.spread != Spread::one;
  const auto shift = static_cast<uint32_t>(d.b_shift);
  TY* y_data = ctx.output(0).as<TY>();
  std::array<uint32_t, kColumnBlock> zbs{};
  std::array<uint32_t, kColumnBlock> acc{};
  std::array<uint32_t, kRows> row_sums{};
  std::array<uint32_t, kRows> a_zeros{};
  BlockMultipliers kept;
  for (int64_t r0 = begin; r0 < end; r0 += kRows) {
    const int64_t rows = std::min(kRows, end - r0);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = r0 + i;
      const int64_t m = r % sh.m;
      const int64_t am = operand_matrices(sh, r / sh.m).first;
      // Row r of A as oneDNN read it (a transposed A is one matrix: r is m).
      const TA* a = a_data + (sh.a_ks == 1 ? r * d.k : m * sh.a_rs);
      uint32_t row_sum = 0;
      for (int64_t k = 0; k < d.k; ++k) {
        row_sum += static_cast<uint32_t>(static_cast<int32_t>(a[k * sh.a_ks]));
      }
      row_sums[i] = row_sum;
      a_zeros[i] = static_cast<uint32_t>(zero_at<TA>(ctx, s.a_zero, am, m));
    }
    for (int64_t n0 = 0; n0 < d.n; n0 += kColumnBlock) {
      const int64_t nn = std::min(kColumnBlock, d.n - n0);
      // B's zero points less the shift, unsigned: the sums wrap as int32 ones do.
      for (int64_t j = 0; j < nn; ++j) {
        const int32_t z = zb == nullptr ? 0 : static_cast<int32_t>(zb[zb_per_column ? n0 + j : 0]);
        zbs[j] = static_cast<uint32_t>(z) - shift;
      }
      const int32_t* cj = col_sums + n0;
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t r = r0 + i;
        const int64_t batch = r / sh.m;
        const int64_t m = r % sh.m;
        const uint32_t row_sum = row_sums[i];
        const uint32_t za = a_zeros[i];
        const uint32_t kza = static_cast<uint32_t>(d.k) * za;
        const int32_t* pj = sums + r * d.n + n0;
        for (int64_t j = 0; j < nn; ++j) {
          acc[j] = static_cast<uint32_t>(pj[j]) - zbs[j] * row_sum -
                   za * static_cast<uint32_t>(cj[j]) + kza * zbs[j];
        }
        store_sums<TY>(ctx, s, acc.data(), {batch, operand_matrices(sh, batch).first, 0, m, n0, nn},
                       kept, y_data + r * d.n + n0);
      }
    }
  }
}

template <class TA, class TB, class TY>
void run_dnnl_typed(graph::KernelContext& ctx, ProductState& s) {
  const DnnlProduct& d = *s.dnnl;
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < d.workspace()) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " bytes) is smaller than " +
             std::to_string(d.workspace()) + " bytes");
  }
  int32_t* sums = std::is_same_v<TY, int32_t>
                      ? ctx.output(0).as<int32_t>()
                      : reinterpret_cast<int32_t*>(ws.data() + d.scratch_bytes);
  s.primitive->bind(DNNL_ARG_SRC, ctx.input(static_cast<size_t>(s.in.a)).data);
  s.primitive->bind(DNNL_ARG_DST, sums);
  s.primitive->execute(ctx);
  parallel_for(
      ctx.threads(), static_cast<size_t>(d.rows),
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          finish_dnnl_rows<TA, TB, TY>(ctx, s, sums, static_cast<int64_t>(begin),
                                       static_cast<int64_t>(end));
        });
      },
      std::max<size_t>(1, size_t{1 << 14} / static_cast<size_t>(d.n + d.k)));
}

// ---- convolutions on oneDNN

// The oneDNN plan of a 2-D convolution, or nullopt where the plain loops run it. Only oneDNN's
// jit kernels: its gemm-based int8 convolution runs a gemm that may take memory of its own.
// The plan of convolution c in `group` groups (c.group, or 1 for its dense form), or nullopt
// where oneDNN has no jit kernel for it.
std::optional<DnnlConv> dnnl_conv_in(const ConvShape& c, const Extents& e, size_t a, size_t b,
                                     int64_t group, bool channels_last) {
  DnnlConv d;
  d.w_shift = e.in_dtype[b] == DType::uint8 ? 128 : 0;
  d.channels_last = channels_last;
  d.group = group;
  const int64_t cg = c.c / group;
  const memory::dims w_dims = group == 1
                                  ? memory::dims{c.m, cg, c.kernel[1], c.kernel[2]}
                                  : memory::dims{group, c.m / group, cg, c.kernel[1], c.kernel[2]};
  try {
    const memory::dims x_dims{c.n, c.c, c.in[1], c.in[2]};
    const memory::desc src(x_dims, int8_type(e.in_dtype[a]), memory::format_tag::nhwc);
    const memory::desc dst({c.n, c.m, c.out[1], c.out[2]}, memory::data_type::s32,
                           memory::format_tag::nhwc);
    const memory::desc weights(w_dims, memory::data_type::s8, memory::format_tag::any);
    dnnl::primitive_attr attr = user_scratchpad();
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    d.pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights,
            memory::desc(), dst, {c.stride[1], c.stride[2]}, {c.dilation[1] - 1, c.dilation[2] - 1},
            {c.pad[1], c.pad[2]}, {c.pad_end[1], c.pad_end[2]}),
        attr, cpu_engine());
    const std::string impl = d.pd.impl_info_str();
    if (impl.rfind("jit", 0) != 0 && impl.rfind("brg", 0) != 0) return std::nullopt;
    const memory::desc plain_w(w_dims, memory::data_type::s8,
                               group == 1 ? memory::format_tag::oihw : memory::format_tag::goihw);
    d.pack =
        dnnl::reorder::primitive_desc(cpu_engine(), plain_w, cpu_engine(), d.pd.weights_desc());
    if (!channels_last) {
      const memory::desc plain_x(x_dims, int8_type(e.in_dtype[a]), memory::format_tag::nchw);
      d.to_channels_last = dnnl::reorder::primitive_desc(cpu_engine(), plain_x, cpu_engine(),
                                                         d.pd.src_desc(), user_scratchpad());
    }
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  uint64_t scratch = d.pd.scratchpad_desc().get_size();
  if (!channels_last) scratch = std::max(scratch, d.to_channels_last.scratchpad_desc().get_size());
  d.src_offset = aligned(scratch);
  d.dst_offset = d.src_offset + (channels_last ? 0 : aligned(d.pd.src_desc().get_size()));
  d.window_offset = d.dst_offset + aligned(d.pd.dst_desc().get_size());
  d.total = d.window_offset +
            aligned(static_cast<uint64_t>(c.n * group * c.out_plane()) * sizeof(int32_t));
  d.weights_bytes = aligned(d.pd.weights_desc().get_size());
  return d;
}

// The most groups a grouped convolution oneDNN takes in no jit kernel is run dense with: the
// products it computes grow with the groups (zeros outside each group's block).
constexpr int64_t kMaxDenseGroups = 8;

std::optional<DnnlConv> dnnl_conv(const graph::Node& node, int32_t node_id, IntegerProduct op,
                                  const Extents& e, bool channels_last) {
  const IntegerProductInputs in = IntegerProductInputs::of(op);
  const auto a = static_cast<size_t>(in.a);
  const auto b = static_cast<size_t>(in.b);
  if (!in.conv() || !int8_products_exact() || !all_positive(e) || !e.has_in(a) || !e.has_in(b) ||
      e.in[a].size() != 4 || !graph::ops::integer_operand_dtype(e.in_dtype[a]) ||
      !graph::ops::integer_operand_dtype(e.in_dtype[b])) {
    return std::nullopt;
  }
  const ConvShape c = conv_shape(node, node_id, e.in[a], e.in[b], e.out[0]);
  if (auto d = dnnl_conv_in(c, e, a, b, c.group, channels_last)) return d;
  // oneDNN's int8 jit kernels take a grouped convolution only for some channels a group
  // (ShuffleNet's 1x1 of 6 input channels a group has none): channels-last, a few groups run as
  // one dense convolution whose weights outside their group's block are w's zero point, so they
  // add nothing (prepare_dnnl_conv); the window sums then run over every channel.
  if (channels_last && c.group > 1 && c.group <= kMaxDenseGroups) {
    return dnnl_conv_in(c, e, a, b, 1, channels_last);
  }
  return std::nullopt;
}

// The dense form of grouped weights w [M, C / group, kh, kw]: [M, C, kh, kw], each output
// channel's weights in its group's block and its zero point (`zero`, w's bytes) elsewhere.
std::vector<uint8_t> dense_weights(const ConvShape& c, const uint8_t* w,
                                   const std::function<uint8_t(int64_t)>& zero) {
  const int64_t cg = c.c / c.group;
  const int64_t per_group = c.m / c.group;
  const int64_t ks = c.kernel_size();
  std::vector<uint8_t> dense(static_cast<size_t>(c.m * c.c * ks));
  for (int64_t oc = 0; oc < c.m; ++oc) {
    const int64_t g = oc / per_group;
    uint8_t* row = dense.data() + oc * c.c * ks;
    std::fill_n(row, c.c * ks, zero(oc));
    std::copy_n(w + oc * cg * ks, cg * ks, row + g * cg * ks);
  }
  return dense;
}

// w_zero: w's zero points (nullptr: none, 0).
void prepare_dnnl_conv(ProductState& s, const DnnlConv& d, const void* w, const void* w_zero) {
  s.packed = AlignedBuffer(d.weights_bytes);
  const ConvShape& c = s.conv;
  if (d.group != c.group) {
    const auto* zeros = static_cast<const uint8_t*>(w_zero);
    const std::vector<uint8_t> dense = dense_weights(
        c, static_cast<const uint8_t*>(w),
        [&](int64_t oc) -> uint8_t { return zeros == nullptr ? 0 : zeros[s.b_zero.index(0, oc)]; });
    pack_weights(d.pack, dense.data(), dense.size(), d.w_shift, s.packed.data());
  } else {
    pack_weights(d.pack, w, static_cast<size_t>(c.m * (c.c / c.group) * c.kernel_size()), d.w_shift,
                 s.packed.data());
  }
  const memory::desc zero_point({1}, memory::data_type::s32, memory::dims{1});
  s.primitive.emplace(d.pd, dnnl::convolution_forward(d.pd),
                      std::vector<std::pair<int, memory::desc>>{
                          {DNNL_ARG_SRC, d.pd.src_desc()},
                          {DNNL_ARG_WEIGHTS, d.pd.weights_desc()},
                          {DNNL_ARG_DST, d.pd.dst_desc()},
                          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_point}});
  s.primitive->bind(DNNL_ARG_WEIGHTS, s.packed.data());
  s.primitive->bind(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, &s.x_zero);
  s.dnnl_conv = d;
  if (d.channels_last) return;
  s.to_channels_last.emplace(
      d.to_channels_last, dnnl::reorder(d.to_channels_last),
      std::vector<std::pair<int, memory::desc>>{{DNNL_ARG_FROM, d.to_channels_last.src_desc()},
                                                {DNNL_ARG_TO, d.to_channels_last.dst_desc()}});
}

constexpr int64_t kTile = 64;

#if defined(FOOTPRINT_WIDE_VECTORS)
// 16 rows of 16 int32 (src, rows `src_stride` apart) written as 16 columns (dst, rows
// `dst_stride` apart): interleaving 32-bit, then 64-bit pairs, then 128-bit lanes twice. GCC 12
// warns that the intrinsics' own headers read an undefined vector (their masked forms' unused
// pass-through operand): that warning is off around this function alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void transpose_16x16(const int32_t* src, int64_t src_stride,
                                                        uint32_t* dst, int64_t dst_stride) {
  __m512i r[16];  // NOLINT(cppcoreguidelines-avoid-c-arrays): vectors, not std::array's elements
  __m512i t[16];  // NOLINT(cppcoreguidelines-avoid-c-arrays)
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(src + i * src_stride);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8) {
    for (int k = 0; k < 4; ++k) {
      t[i + k] = _mm512_shuffle_i32x4(r[i + k], r[i + 4 + k], 0x88);
      t[i + 4 + k] = _mm512_shuffle_i32x4(r[i + k], r[i + 4 + k], 0xdd);
    }
  }
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0x88);
    r[8 + k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0xdd);
  }
  for (int q = 0; q < 16; ++q) _mm512_storeu_si512(dst + q * dst_stride, r[q]);
}
#pragma GCC diagnostic pop
#endif

// The tile [channel][pixel] of np pixels x nc channels from channels-last sums (`rows`, one
// pixel's channels a row, rows `stride` apart): blocks of 16 x 16 transposed in registers where
// the CPU has AVX-512, the rest element by element.
void fill_tile(const int32_t* rows, int64_t stride, int64_t np, int64_t nc, uint32_t* tile) {
  int64_t j0 = 0;
#if defined(FOOTPRINT_WIDE_VECTORS)
  if (wide::host_isa() == wide::Isa::avx512) {
    for (; j0 + 16 <= np; j0 += 16) {
      int64_t k0 = 0;
      for (; k0 + 16 <= nc; k0 += 16) {
        transpose_16x16(rows + j0 * stride + k0, stride, tile + k0 * kTile + j0, kTile);
      }
      for (int64_t j = j0; j < j0 + 16; ++j) {
        for (int64_t k = k0; k < nc; ++k)
          tile[k * kTile + j] = static_cast<uint32_t>(rows[j * stride + k]);
      }
    }
  }
#endif
  for (int64_t j = j0; j < np; ++j) {
    for (int64_t k = 0; k < nc; ++k)
      tile[k * kTile + j] = static_cast<uint32_t>(rows[j * stride + k]);
  }
}

// What the passes finishing a convolution on oneDNN read per output channel: w's zero point less
// the shift, the int32 bias and the multiplier requantizing the sums (an 8-bit Y's), and Y's
// zero point.
template <class TW, class TY>
struct ConvChannels {
  ConvChannels(const graph::KernelContext& ctx, const ProductState& s)
      : w_zeros(values_of<TW>(ctx, s.b_zero)),
        w_scales(scales_of(ctx, s.b_scale)),
        biases(s.in.bias >= 0 && ctx.has_input(static_cast<size_t>(s.in.bias))
                   ? ctx.input(static_cast<size_t>(s.in.bias)).as<const int32_t>()
                   : nullptr),
        w_shift(s.dnnl_conv->w_shift) {
    if constexpr (!std::is_same_v<TY, int32_t>) {
      x_scale = scale_at(ctx, s.a_scale, 0, 0);
      y_scale = scale_at(ctx, s.y_scale, 0, 0);
      y_zero = zero_at<TY>(ctx, s.y_zero, 0, 0);
    }
  }
  uint32_t w_zero(int64_t oc) const {
    return static_cast<uint32_t>(static_cast<int32_t>(w_zeros.at(0, oc)) - w_shift);
  }
  uint32_t bias(int64_t oc) const {
    return biases == nullptr ? 0U : static_cast<uint32_t>(biases[oc]);
  }
  float scale(int64_t oc) const { return multiplier(x_scale, w_scales.at(0, oc), y_scale); }

  ParamValues<TW> w_zeros;
  ScaleValues w_scales;
  const int32_t* biases;
  int32_t w_shift;
  float x_scale = 0, y_scale = 0;
  int32_t y_zero = 0;
};

// Tiles [begin, end) of Y (image, block of kTile pixels) from oneDNN's channels-last int32 sums:
// w's zero points taken off through the window sums, the bias added, requantized.
template <class TW, class TY>
void finish_conv_tiles(graph::KernelContext& ctx, const ProductState& s, const int32_t* sums,
                       const uint32_t* window, bool any_zero_point, int64_t begin, int64_t end) {
  const ConvShape& c = s.conv;
  const int64_t plane = c.out_plane();
  const int64_t blocks = (plane + kTile - 1) / kTile;
  const int64_t per_group = c.m / c.group;
  const ConvChannels<TW, TY> ch(ctx, s);
  std::array<uint32_t, kTile * kTile> tile{};  // [channel][pixel]
  for (int64_t t = begin; t < end; ++t) {
    const int64_t n = t / blocks;
    const int64_t p0 = t % blocks * kTile;
    const int64_t np = std::min(kTile, plane - p0);
    for (int64_t oc0 = 0; oc0 < c.m; oc0 += kTile) {
      const int64_t nc = std::min(kTile, c.m - oc0);
      fill_tile(sums + (n * plane + p0) * c.m + oc0, c.m, np, nc, tile.data());
      // The loops over a tile's pixels are told to vectorise (`omp simd`): a byte store may
      // alias anything, the constants they read included.
      for (int64_t k = 0; k < nc; ++k) {
        const int64_t oc = oc0 + k;
        uint32_t* __restrict acc = tile.data() + k * kTile;
        if (any_zero_point) {
          const uint32_t zw = ch.w_zero(oc);
          const uint32_t* __restrict win = window + (n * c.group + oc / per_group) * plane + p0;
#pragma omp simd
          for (int64_t j = 0; j < np; ++j) acc[j] -= zw * win[j];
        }
        TY* __restrict y = ctx.output(0).as<TY>() + (n * c.m + oc) * plane + p0;
        if constexpr (std::is_same_v<TY, int32_t>) {
#pragma omp simd
          for (int64_t j = 0; j < np; ++j) y[j] = static_cast<int32_t>(acc[j]);
        } else {
          const uint32_t b = ch.bias(oc);
          const float m = ch.scale(oc);
          const int32_t zy = ch.y_zero;
#pragma omp simd
          for (int64_t j = 0; j < np; ++j) {
            y[j] = requantize<TY>(static_cast<int32_t>(acc[j] + b), m, zy);
          }
        }
      }
    }
  }
}

// The window sums of channels-last x [N, H, W, C] (the plain path's conv_plane with every weight
// 1): for image n, group g and each output pixel, the sum of x less its zero point over the
// pixel's window and the group's channels.
template <class TX>
void nhwc_window_sums(const graph::KernelContext& ctx, const ProductState& s, int64_t n, int64_t g,
                      uint32_t* sums) {
  const ConvShape& c = s.conv;
  const TX* x = ctx.input(static_cast<size_t>(s.in.a)).as<const TX>();
  const int64_t cg = c.c / s.dnnl_conv->group;
  const int32_t zx = zero_at<TX>(ctx, s.a_zero, 0, 0);
  for (int64_t oh = 0; oh < c.out[1]; ++oh) {
    for (int64_t ow = 0; ow < c.out[2]; ++ow) {
      int32_t sum = 0;
      for (int64_t kh = 0; kh < c.kernel[1]; ++kh) {
        const int64_t ih = oh * c.stride[1] - c.pad[1] + kh * c.dilation[1];
        if (ih < 0 || ih >= c.in[1]) continue;
        for (int64_t kw = 0; kw < c.kernel[2]; ++kw) {
          const int64_t iw = ow * c.stride[2] - c.pad[2] + kw * c.dilation[2];
          if (iw < 0 || iw >= c.in[2]) continue;
          const TX* px = x + ((n * c.in[1] + ih) * c.in[2] + iw) * c.c + g * cg;
          for (int64_t ic = 0; ic < cg; ++ic) sum += static_cast<int32_t>(px[ic]) - zx;
        }
      }
      sums[oh * c.out[2] + ow] = static_cast<uint32_t>(sum);
    }
  }
}

// The most elements requantize_rows takes its constants for at once (16 KiB of each on the
// stack): a row of that many channels at most.
constexpr int64_t kRowBlock = 4096;

// `count` channels-last sums (whole rows of `channels`) plus their channel's bias, requantized by
// their channel's multiplier, into Y. The constants (`constants(oc)`: bias and multiplier) are
// laid out for as many whole rows as make about 256 elements, so one vectorised loop runs over
// rows of a few channels too (MobileNet's 16 and 24), with no remainder but the last.
template <class TY, class Constants>
void requantize_rows(const int32_t* sums, TY* y, int64_t count, int64_t channels,
                     const Constants& constants, int32_t zy) {
  const int64_t block = std::max<int64_t>(1, 256 / channels) * channels;  // <= kRowBlock
  std::array<uint32_t, kRowBlock> b;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<float, kRowBlock> m;     // NOLINT(cppcoreguidelines-pro-type-member-init)
  for (int64_t k = 0; k < channels; ++k) std::tie(b[k], m[k]) = constants(k);
  for (int64_t k = channels; k < block; ++k) {
    b[k] = b[k - channels];
    m[k] = m[k - channels];
  }
  for (int64_t i0 = 0; i0 < count; i0 += block) {
    const int64_t n = std::min(block, count - i0);
    const int32_t* __restrict in = sums + i0;
    TY* __restrict out = y + i0;
#if defined(FOOTPRINT_WIDE_VECTORS)
    if (wide::host_isa() == wide::Isa::avx512) {
      requantize_avx512(in, b.data(), m.data(), zy, out, n);
      continue;
    }
#endif
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      out[j] = requantize<TY>(static_cast<int32_t>(static_cast<uint32_t>(in[j]) + b[j]), m[j], zy);
    }
  }
}

// A sum as Y holds it: itself (int32 Y), or requantized.
template <class TY>
TY finished(uint32_t acc, float multiplier, int32_t zero) {
  if constexpr (std::is_same_v<TY, int32_t>) {
    return static_cast<int32_t>(acc);
  } else {
    return requantize<TY>(static_cast<int32_t>(acc), multiplier, zero);
  }
}

// Pixels [begin, end) (over the batch) of channels-last Y from oneDNN's channels-last sums, a
// row of output channels at a time: w's zero points taken off through the window sums, the
// bias added, requantized. Each block of kTile channels takes its constants onto the stack first.
template <class TW, class TY>
void finish_nhwc_rows(graph::KernelContext& ctx, const ProductState& s, const int32_t* sums,
                      const uint32_t* window, bool any_zero_point, int64_t begin, int64_t end) {
  const DnnlConv& d = *s.dnnl_conv;
  const ConvShape& c = s.conv;
  const int64_t plane = c.out_plane();
  const int64_t per_group = c.m / d.group;
  const ConvChannels<TW, TY> ch(ctx, s);
  TY* y = ctx.output(0).as<TY>();
  if constexpr (!std::is_same_v<TY, int32_t>) {
    if (!any_zero_point && c.m <= kRowBlock) {
      return requantize_rows(
          sums + begin * c.m, y + begin * c.m, (end - begin) * c.m, c.m,
          [&](int64_t oc) {
            return std::pair{ch.bias(oc), ch.scale(oc)};
          },
          ch.y_zero);
    }
  }
  std::array<uint32_t, kTile> zw{}, b{};
  std::array<float, kTile> m{};
  const int32_t zy = ch.y_zero;
  for (int64_t oc0 = 0; oc0 < c.m; oc0 += kTile) {
    const int64_t nc = std::min(kTile, c.m - oc0);
    for (int64_t k = 0; k < nc; ++k) {
      const int64_t oc = oc0 + k;
      zw[k] = ch.w_zero(oc);
      b[k] = ch.bias(oc);
      if constexpr (!std::is_same_v<TY, int32_t>) m[k] = ch.scale(oc);
    }
    for (int64_t p = begin; p < end; ++p) {
      const int32_t* __restrict row = sums + p * c.m + oc0;
      TY* __restrict out = y + p * c.m + oc0;
      std::array<uint32_t, kTile> acc;  // NOLINT(cppcoreguidelines-pro-type-member-init)
#pragma omp simd
      for (int64_t k = 0; k < nc; ++k) acc[k] = static_cast<uint32_t>(row[k]) + b[k];
      if (any_zero_point) {
        const int64_t n = p / plane;
        const uint32_t* win = window + n * d.group * plane + p % plane;
        for (int64_t k = 0; k < nc; ++k) acc[k] -= zw[k] * win[(oc0 + k) / per_group * plane];
      }
#pragma omp simd
      for (int64_t k = 0; k < nc; ++k) out[k] = finished<TY>(acc[k], m[k], zy);
    }
  }
}

template <class TX, class TW, class TY>
void run_dnnl_conv_typed(graph::KernelContext& ctx, ProductState& s) {
  const DnnlConv& d = *s.dnnl_conv;
  const ConvShape& c = s.conv;
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < d.total) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " bytes) is smaller than " +
             std::to_string(d.total) + " bytes");
  }
  std::byte* src = ws.data() + d.src_offset;
  const auto* sums = reinterpret_cast<const int32_t*>(ws.data() + d.dst_offset);
  auto* window = reinterpret_cast<uint32_t*>(ws.data() + d.window_offset);
  const void* x = ctx.input(static_cast<size_t>(s.in.a)).data;
  if (!d.channels_last) {
    s.to_channels_last->bind(DNNL_ARG_FROM, x);
    s.to_channels_last->bind(DNNL_ARG_TO, src);
    s.to_channels_last->execute(ctx);
    x = src;
  }
  s.x_zero = zero_at<TX>(ctx, s.a_zero, 0, 0);
  s.primitive->bind(DNNL_ARG_SRC, x);
  s.primitive->bind(DNNL_ARG_DST, sums);
  s.primitive->execute(ctx);
  // w's zero points (less the shift), and the window sums where one is not 0.
  const int64_t per_group = c.m / d.group;
  const int64_t plane = c.out_plane();
  bool any_zero_point = false;
  for (int64_t oc = 0; oc < c.m; ++oc) {
    any_zero_point = any_zero_point || zero_at<TW>(ctx, s.b_zero, 0, oc) != d.w_shift;
  }
  if (any_zero_point) {
    parallel_for(
        ctx.threads(), static_cast<size_t>(c.n * d.group),
        [&](size_t begin, size_t end) {
          for (size_t p = begin; p < end; ++p) {
            const auto i = static_cast<int64_t>(p);
            if (d.channels_last) {
              nhwc_window_sums<TX>(ctx, s, i / d.group, i % d.group, window + i * plane);
              continue;
            }
            with_wide_vectors([&] {
              conv_plane<TX, TW, true>(ctx, s, i / d.group, i % d.group * per_group,
                                       window + i * plane);
            });
          }
        },
        1);
  }
  if (d.channels_last) {
    const auto pixels = static_cast<size_t>(c.n * plane);
    parallel_for(
        ctx.threads(), pixels,
        [&](size_t begin, size_t end) {
          with_wide_vectors([&] {
            finish_nhwc_rows<TW, TY>(ctx, s, sums, window, any_zero_point,
                                     static_cast<int64_t>(begin), static_cast<int64_t>(end));
          });
        },
        std::max<size_t>(1, size_t{1 << 14} / static_cast<size_t>(c.m)));
    return;
  }
  // Tiles of pixels x channels: the channels-last sums transposed through a tile on the stack,
  // so that the requantizing loops read and write contiguous rows (and vectorise).
  const auto tiles = static_cast<size_t>(c.n * ((plane + kTile - 1) / kTile));
  parallel_for(
      ctx.threads(), tiles,
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          finish_conv_tiles<TW, TY>(ctx, s, sums, window, any_zero_point,
                                    static_cast<int64_t>(begin), static_cast<int64_t>(end));
        });
      },
      1);
}

// kChannelsLast: NhwcQLinearConv's, on x and Y [N, H, W, C].
template <IntegerProduct kOp, bool kChannelsLast = false>
uint64_t product_workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                           const std::vector<graph::ConcreteTensor>& out) {
  return workspace_of(
      [](const graph::Node& n, const Extents& e) -> uint64_t {
        if (kChannelsLast) {
          const Extents nchw = channels_first(e);
          if (const auto d = dnnl_conv(n, -1, kOp, nchw, true)) return d->total;
          // Through NCHW copies (run_conv_through_nchw): x, Y (8-bit), the loops' int32 sums.
          return ThroughNchw::of(numel(nchw.in[0]), numel(nchw.out[0])).loops_offset +
                 static_cast<uint64_t>(numel(nchw.out[0])) * 4;
        }
        if (const auto d = dnnl_product(n, kOp, e)) return d->workspace();
        if (const auto d = dnnl_conv(n, -1, kOp, e, false)) return d->total;
        // The plain loops keep a convolution's int32 sums there when its output is 8-bit.
        const bool sums = kOp == IntegerProduct::qlinear_conv;
        return sums ? static_cast<uint64_t>(std::max<int64_t>(0, numel(e.out[0]))) * 4 : 0;
      },
      node, in, out);
}

template <IntegerProduct kOp, bool kChannelsLast = false>
uint64_t product_packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& out,
                        const std::vector<bool>& constant) {
  const auto b = static_cast<size_t>(IntegerProductInputs::of(kOp).b);
  if (b >= constant.size() || !constant[b]) return 0;  // packed only where B is known
  return workspace_of(
      [](const graph::Node& n, const Extents& e) -> uint64_t {
        if (kChannelsLast) {
          const auto d = dnnl_conv(n, -1, kOp, channels_first(e), true);
          return d ? d->weights_bytes : 0;
        }
        if (const auto d = dnnl_product(n, kOp, e)) return d->packed();
        if (const auto d = dnnl_conv(n, -1, kOp, e, false)) return d->weights_bytes;
        return 0;
      },
      node, in, out);
}

// ---- preparing

// The bias: QLinearConv's int32 B, one per output channel; QGemm's int32 C, broadcast to Y
// [M, N] (a scalar, [N], [1, N], [M, 1] or [M, N]); MatMulIntegerToFloat's float bias, one per
// column [N].
void check_bias(const graph::Node& node, ProductState& s, const Extents& e) {
  const IntegerProductInputs& in = s.in;
  const auto i = static_cast<size_t>(in.bias);
  const std::vector<int64_t>& bias = e.in[i];
  const DType want =
      in.op == IntegerProduct::matmul_integer_to_float ? DType::float32 : DType::int32;
  if (e.in_dtype[i] != want) {
    fail_input(node, in, in.bias,
               "is " + dtype_label(e.in_dtype[i]) + ", not " + dtype_label(want));
  }
  if (in.conv()) {
    if (bias.size() != 1 || bias[0] != s.conv.m) {
      fail_input(node, in, in.bias,
                 extents_text(bias) + " is not one value per output channel [" +
                     std::to_string(s.conv.m) + "]");
    }
  } else if (in.op == IntegerProduct::qgemm) {
    const int64_t rows = bias.size() == 2 ? bias[0] : 1;
    const int64_t cols = bias.empty() ? 1 : bias.back();
    if (bias.size() > 2 || (rows != 1 && rows != s.mm.m) || (cols != 1 && cols != s.mm.n)) {
      fail_input(node, in, in.bias,
                 extents_text(bias) + " does not broadcast to the output [" +
                     std::to_string(s.mm.m) + "," + std::to_string(s.mm.n) + "]");
    }
    s.c_rows = rows;
    s.c_cols = cols;
  } else {
    if (bias.size() != 1 || bias[0] != s.mm.n) {
      fail_input(
          node, in, in.bias,
          extents_text(bias) + " is not one value per column [" + std::to_string(s.mm.n) + "]");
    }
    s.float_bias = true;
  }
}

std::unique_ptr<graph::KernelState> prepare_product(const graph::KernelContext& ctx,
                                                    IntegerProduct op, bool channels_last = false) {
  const graph::Node& node = ctx.node();
  const Extents e = channels_last ? channels_first(extents_of(ctx)) : extents_of(ctx);
  auto s = std::make_unique<ProductState>();
  s->in = IntegerProductInputs::of(op);
  const IntegerProductInputs& in = s->in;
  const auto a = static_cast<size_t>(in.a);
  const auto b = static_cast<size_t>(in.b);
  if (!e.has_in(a) || !e.has_in(b)) node_fail(node, "inputs 'a' and 'b' are required");
  s->a_dtype = e.in_dtype[a];
  s->b_dtype = e.in_dtype[b];
  s->y_dtype = e.out_dtype[0];
  for (const int i : {in.a, in.b}) {
    if (!graph::ops::integer_operand_dtype(e.in_dtype[static_cast<size_t>(i)])) {
      fail_input(node, in, i,
                 "is " + dtype_label(e.in_dtype[static_cast<size_t>(i)]) + ", not uint8 or int8");
    }
  }
  const std::vector<int64_t>& y = e.out[0];
  // The operands as the product reads them (QGemm's transposed ones), which the parameters lie on.
  const LogicalOperands l = logical_operands(node, op, e.in[a], e.in[b]);
  if (in.conv()) {
    s->conv = conv_shape(node, ctx.node_id(), e.in[a], e.in[b], y);
  } else {
    s->mm = product_shape(node, op, e.in[a], e.in[b], y);
  }
  s->a_zero = decode_param(node, in, e, in.a_zero, l.a, s->a_dtype);
  s->b_zero = decode_param(node, in, e, in.b_zero, l.b, s->b_dtype);
  const auto has = [&](int i) { return i >= 0 && e.has_in(static_cast<size_t>(i)); };
  // Y is the sums (int32), requantized (an output scale: required by the QLinear ops, QGemm's
  // optional), or the sums scaled to float (QGemm without one, MatMulIntegerToFloat).
  const bool optional_y_scale = op == IntegerProduct::qgemm;
  const bool quantized = in.quantized_output() && (has(in.y_scale) || !optional_y_scale);
  if (in.scaled()) {
    std::vector<int> scales{in.a_scale, in.b_scale};
    if (quantized) scales.push_back(in.y_scale);
    for (const int i : scales) {
      if (!has(i)) fail_input(node, in, i, "is required");
    }
    s->a_scale = decode_param(node, in, e, in.a_scale, l.a, DType::float32);
    s->b_scale = decode_param(node, in, e, in.b_scale, l.b, DType::float32);
    if (quantized) {
      s->y_scale = decode_param(node, in, e, in.y_scale, y, DType::float32);
      s->y_zero = decode_param(node, in, e, in.y_zero, y, s->y_dtype);
      if (!graph::ops::integer_operand_dtype(s->y_dtype)) {
        node_fail(node, "the output is " + dtype_label(s->y_dtype) + ", not uint8 or int8");
      }
    } else if (s->y_dtype != DType::float32) {
      node_fail(node, "the output is " + dtype_label(s->y_dtype) + ", not float32");
    }
    bool constant = true;
    for (const int i : scales) {
      const graph::TensorRef& t = ctx.input(static_cast<size_t>(i));
      if (t.data == nullptr) {
        constant = false;
      } else {
        check_scales(node, in, i, t);
      }
    }
    s->scales_checked = constant;
    if (op == IntegerProduct::qgemm) s->alpha = node_float(node, "alpha", 1.0F);
    if (!std::isfinite(s->alpha)) node_fail(node, "attribute alpha is not finite");
    if (has(in.bias)) check_bias(node, *s, e);
  } else if (s->y_dtype != DType::int32) {
    node_fail(node, "the output is " + dtype_label(s->y_dtype) + ", not int32");
  }
  const void* weights = ctx.input(b).data;
  if (weights != nullptr) {
    if (const auto d = dnnl_product(node, op, e)) prepare_dnnl(*s, *d, weights);
    if (const auto d = dnnl_conv(node, ctx.node_id(), op, e, channels_last)) {
      const graph::TensorRef* w_zero =
          has(in.b_zero) ? ctx.input_or_null(static_cast<size_t>(in.b_zero)) : nullptr;
      if (d->group != s->conv.group && w_zero != nullptr && w_zero->data == nullptr) {
        node_fail(node, "input '" + in.name(in.b_zero) +
                            "' must be a constant to run this grouped convolution channels-last");
      }
      prepare_dnnl_conv(*s, *d, weights, w_zero != nullptr ? w_zero->data : nullptr);
    }
  }
  s->channels_last = channels_last;
  return s;
}

template <IntegerProduct kOp>
std::unique_ptr<graph::KernelState> prepare(const graph::KernelContext& ctx) {
  return prepare_product(ctx, kOp);
}

std::unique_ptr<graph::KernelState> prepare_nhwc_conv(const graph::KernelContext& ctx) {
  return prepare_product(ctx, IntegerProduct::qlinear_conv, true);
}

// A QLinearConv moves to channels-last where oneDNN's exact int8 kernels run it (the CPU has
// VNNI); its weights must be a constant (channels_last_constant_inputs), packed once.
bool qlinear_conv_runs_channels_last(const graph::Node& /*node*/) {
  return int8_products_exact();
}

// A node's context with other tensors: the quantizing step's and the product's views of
// DynamicQuantizeMatMul, a channels-last convolution's plain view.
class NodeView final : public graph::KernelContext {
 public:
  static constexpr size_t kMax = 9;  // QLinearConv's inputs
  NodeView(const graph::KernelContext& outer, std::span<std::byte> scratch,
           graph::KernelState* state)
      : outer_(outer), scratch_(scratch), state_(state) {}

  void set_input(size_t i, const graph::TensorRef* t) {
    in_[i] = t != nullptr ? *t : graph::TensorRef{};
    in_present_[i] = t != nullptr;
    inputs_ = std::max(inputs_, i + 1);
  }
  void set_output(size_t i, const graph::TensorRef& t) {
    out_[i] = t;
    out_present_[i] = true;
    outputs_ = std::max(outputs_, i + 1);
  }

  const graph::Node& node() const override { return outer_.node(); }
  int32_t node_id() const override { return outer_.node_id(); }
  int64_t opset() const override { return outer_.opset(); }
  size_t input_count() const override { return inputs_; }
  size_t output_count() const override { return outputs_; }
  const graph::TensorRef* input_or_null(size_t i) const override {
    return i < inputs_ && in_present_[i] ? &in_[i] : nullptr;
  }
  graph::TensorRef* output_or_null(size_t i) override {
    return i < outputs_ && out_present_[i] ? &out_[i] : nullptr;
  }
  std::span<std::byte> workspace() override { return scratch_; }
  int threads() const override { return outer_.threads(); }
  graph::KernelState* state() const override { return state_; }
  void run_subgraph(std::string_view, std::span<const graph::TensorRef>,
                    std::span<graph::TensorRef>) override {
    fail("has no subgraphs");
  }
  void set_output_extents(size_t, std::span<const int64_t>) override {
    fail("does not report extents");
  }

 private:
  const graph::KernelContext& outer_;
  std::span<std::byte> scratch_;
  graph::KernelState* state_;
  std::array<graph::TensorRef, kMax> in_{}, out_{};
  std::array<bool, kMax> in_present_{}, out_present_{};
  size_t inputs_ = 0, outputs_ = 0;
};

// ---- a channels-last convolution oneDNN has no jit kernel for (a grouped 1x1 of few channels a
// group): the plain loops on an NCHW copy of x, into an NCHW Y, both in the workspace and
// reordered around them.

// [N, C, P] <-> [N, P, C] (kToNchw: from channels-last), element by element.
template <class T, bool kToNchw>
void change_layout(const T* from, T* to, int64_t n, int64_t c, int64_t p) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t j = 0; j < p; ++j) {
        const int64_t nchw = (i * c + k) * p + j;
        const int64_t nhwc = (i * p + j) * c + k;
        if constexpr (kToNchw) {
          to[nchw] = from[nhwc];
        } else {
          to[nhwc] = from[nchw];
        }
      }
    }
  }
}

template <class TX, class TW, class TY>
void run_conv_through_nchw(graph::KernelContext& ctx, const ProductState& s) {
  const ConvShape& c = s.conv;
  const ThroughNchw t =
      ThroughNchw::of(c.n * c.c * c.in_plane(), c.n * c.m * c.out_plane() * int64_t{sizeof(TY)});
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < t.loops_offset) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " bytes) is smaller than " +
             std::to_string(t.loops_offset) + " bytes");
  }
  const auto a = static_cast<size_t>(s.in.a);
  const graph::TensorRef& x = ctx.input(a);
  const std::vector<int64_t> x_dims{c.n, c.c, c.in[1], c.in[2]};
  const std::vector<int64_t> y_dims{c.n, c.m, c.out[1], c.out[2]};
  auto* x_plain = reinterpret_cast<TX*>(ws.data());
  auto* y_plain = reinterpret_cast<TY*>(ws.data() + t.y_offset);
  change_layout<TX, true>(x.as<const TX>(), x_plain, c.n, c.c, c.in_plane());
  NodeView plain(ctx, ws.subspan(t.loops_offset), ctx.state());
  for (size_t i = 0; i < ctx.input_count(); ++i) plain.set_input(i, ctx.input_or_null(i));
  const graph::TensorRef x_ref{x.dtype, x_dims, x_plain};
  plain.set_input(a, &x_ref);
  plain.set_output(0, graph::TensorRef{ctx.output(0).dtype, y_dims, y_plain});
  run_conv_typed<TX, TW, TY>(plain, s);
  change_layout<TY, false>(y_plain, ctx.output(0).as<TY>(), c.n, c.m, c.out_plane());
}

// ---- dispatch

using Int8Types = TypeList<uint8_t, int8_t>;

template <class TA, class TB>
void run_typed(graph::KernelContext& ctx, ProductState& s) {
  const auto go = [&](auto y) {
    using TY = decltype(y);
    if constexpr (std::is_same_v<TY, float>) {
      // Only the matrix products scale to float.
      if (s.dnnl) {
        run_dnnl_typed<TA, TB, TY>(ctx, s);
      } else {
        run_matmul_typed<TA, TB, TY>(ctx, s);
      }
    } else if (s.dnnl_conv) {
      run_dnnl_conv_typed<TA, TB, TY>(ctx, s);
    } else if (s.in.conv() && s.channels_last) {
      run_conv_through_nchw<TA, TB, TY>(ctx, s);
    } else if (s.in.conv()) {
      run_conv_typed<TA, TB, TY>(ctx, s);
    } else if (s.dnnl) {
      run_dnnl_typed<TA, TB, TY>(ctx, s);
    } else {
      run_matmul_typed<TA, TB, TY>(ctx, s);
    }
  };
  if (s.y_dtype == DType::int32) {
    go(int32_t{});
  } else if (s.y_dtype == DType::float32) {
    go(float{});
  } else if (s.y_dtype == DType::uint8) {
    go(uint8_t{});
  } else {
    go(int8_t{});
  }
}

void run_product(graph::KernelContext& ctx) {
  auto* s = dynamic_cast<ProductState*>(ctx.state());
  if (s == nullptr) ctx.fail("the kernel's state was not prepared");
  if (ctx.output(0).numel() == 0) return;
  check_run_scales(ctx, *s);
  dispatch_or_fail<Int8Types>(ctx, s->a_dtype, [&](auto a) {
    dispatch_or_fail<Int8Types>(ctx, s->b_dtype,
                                [&](auto b) { run_typed<decltype(a), decltype(b)>(ctx, *s); });
  });
}

// ---- DynamicQuantizeMatMul: A quantized as DynamicQuantizeLinear does, then MatMulIntegerToFloat

// DynamicQuantizeMatMul's inputs (A, B, b_scale[, b_zero_point, bias]) as MatMulIntegerToFloat's
// (A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias).
constexpr std::array<int, 7> kAsIntegerToFloat{0, 1, -1, 2, -1, 3, 4};

// The quantized A, its scale and its zero point, first in the step's workspace; the product's
// workspace after them.
struct QuantizedA {
  uint64_t a_bytes = 0;
  uint64_t total() const { return a_bytes + 128; }
  static QuantizedA of(int64_t numel) {
    return {aligned(static_cast<uint64_t>(std::max<int64_t>(numel, 0)))};
  }
};

std::vector<graph::ConcreteTensor> as_integer_to_float(
    const std::vector<graph::ConcreteTensor>& in) {
  std::vector<graph::ConcreteTensor> out(kAsIntegerToFloat.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const int from = kAsIntegerToFloat[i];
    if (from >= 0 && static_cast<size_t>(from) < in.size()) out[i] = in[static_cast<size_t>(from)];
  }
  if (!in.empty()) out[0].dtype = DType::uint8;  // A as quantized
  out[2] = {DType::float32, {}};
  out[4] = {DType::uint8, {}};
  return out;
}

int64_t numel_of(const graph::ConcreteTensor& t) {
  return numel(t.dims);
}

uint64_t dynamic_workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                           const std::vector<graph::ConcreteTensor>& out) {
  if (in.empty()) return 0;
  return QuantizedA::of(numel_of(in[0])).total() +
         product_workspace<IntegerProduct::matmul_integer_to_float>(node, as_integer_to_float(in),
                                                                    out);
}

uint64_t dynamic_packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& out,
                        const std::vector<bool>& constant) {
  std::vector<bool> mapped(kAsIntegerToFloat.size(), false);
  for (size_t i = 0; i < mapped.size(); ++i) {
    const int from = kAsIntegerToFloat[i];
    mapped[i] = from >= 0 && static_cast<size_t>(from) < constant.size() &&
                constant[static_cast<size_t>(from)];
  }
  return product_packed<IntegerProduct::matmul_integer_to_float>(node, as_integer_to_float(in), out,
                                                                 mapped);
}

// The product's view: the quantized A, scale and zero point at `a`, `scale` and `zero`.
NodeView product_view(const graph::KernelContext& ctx, std::span<std::byte> scratch,
                      graph::KernelState* state, const graph::TensorRef& a,
                      const graph::TensorRef& scale, const graph::TensorRef& zero) {
  NodeView v(ctx, scratch, state);
  for (size_t i = 0; i < kAsIntegerToFloat.size(); ++i) {
    const int from = kAsIntegerToFloat[i];
    v.set_input(i, from >= 0 ? ctx.input_or_null(static_cast<size_t>(from)) : nullptr);
  }
  v.set_input(0, &a);
  v.set_input(2, &scale);
  v.set_input(4, &zero);
  auto& outputs =
      const_cast<graph::KernelContext&>(ctx);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  v.set_output(0, outputs.output(0));
  return v;
}

std::unique_ptr<graph::KernelState> dynamic_prepare(const graph::KernelContext& ctx) {
  const graph::TensorRef& a = ctx.input(0);
  if (a.dtype != DType::float32) {
    ctx.fail("input 'A' is " + dtype_label(a.dtype) + ", not float32");
  }
  // Known only while running: A, its scale and zero point.
  const graph::TensorRef qa{DType::uint8, a.dims, nullptr};
  const graph::TensorRef scale{DType::float32, {}, nullptr};
  const graph::TensorRef zero{DType::uint8, {}, nullptr};
  const NodeView v = product_view(ctx, {}, nullptr, qa, scale, zero);
  return prepare_product(v, IntegerProduct::matmul_integer_to_float);
}

void dynamic_run(graph::KernelContext& ctx) {
  const graph::TensorRef& a = ctx.input(0);
  const QuantizedA layout = QuantizedA::of(static_cast<int64_t>(a.numel()));
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < layout.total()) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " bytes) is smaller than " +
             std::to_string(layout.total()) + " bytes");
  }
  const graph::TensorRef qa{DType::uint8, a.dims, ws.data()};
  const graph::TensorRef scale{DType::float32, {}, ws.data() + layout.a_bytes};
  const graph::TensorRef zero{DType::uint8, {}, ws.data() + layout.a_bytes + 64};
  NodeView quantize(ctx, {}, nullptr);
  quantize.set_input(0, &a);
  quantize.set_output(0, qa);
  quantize.set_output(1, scale);
  quantize.set_output(2, zero);
  dynamic_quantize_linear(quantize);
  // An infinite element makes the range, and so the scale, infinite: no quantized A.
  if (!std::isfinite(*scale.as<const float>())) {
    ctx.fail("input 'A' holds an infinite value: it has no quantization range");
  }
  NodeView product = product_view(ctx, ws.subspan(layout.total()), ctx.state(), qa, scale, zero);
  run_product(product);
}

}  // namespace

void register_integer_products(graph::OpRegistry& r) {
  const auto set = [&](std::string_view op, auto kOp) {
    constexpr IntegerProduct kind = decltype(kOp)::value;
    const bool contrib =
        kind == IntegerProduct::qgemm || kind == IntegerProduct::matmul_integer_to_float;
    graph::OpSchema& row = r.row(contrib ? "com.microsoft" : "", op);
    row.kernel = run_product;
    row.prepare = prepare<kind>;
    row.workspace = product_workspace<kind>;
    // The weights packed once where they are a constant; the kernel then reads only the copy.
    row.packed = product_packed<kind>;
    row.packed_inputs = 1U << static_cast<unsigned>(IntegerProductInputs::of(kind).b);
    // The kernels dispatch on uint8 and int8 operands (Int8Types); the operand dtypes of B and
    // the zero points are checked against A's when preparing.
    row.kernel_dtypes = dtypes_of(Int8Types{});
  };
  using Op = IntegerProduct;
  set("MatMulInteger", std::integral_constant<Op, Op::matmul_integer>{});
  set("ConvInteger", std::integral_constant<Op, Op::conv_integer>{});
  set("QLinearMatMul", std::integral_constant<Op, Op::qlinear_matmul>{});
  set("QLinearConv", std::integral_constant<Op, Op::qlinear_conv>{});
  // A 2-D QLinearConv runs channels-last (graph::to_channels_last), as a float Conv does: the
  // int8 kernels are oneDNN's channels-last ones either way, and a chain of them then changes
  // no layout between its convolutions.
  graph::OpSchema& qconv = r.row("", "QLinearConv");
  qconv.channels_last = "NhwcQLinearConv";
  qconv.channels_last_alone = true;
  qconv.channels_last_runs = qlinear_conv_runs_channels_last;
  // w, and its zero points where given (a dense grouped convolution's weights hold them).
  qconv.channels_last_constant_inputs =
      qconv.packed_inputs |
      1U << static_cast<unsigned>(IntegerProductInputs::of(Op::qlinear_conv).b_zero);
  graph::OpSchema& nhwc = r.row("footprint", "NhwcQLinearConv");
  nhwc.kernel = run_product;
  nhwc.prepare = prepare_nhwc_conv;
  nhwc.workspace = product_workspace<Op::qlinear_conv, true>;
  nhwc.packed = product_packed<Op::qlinear_conv, true>;
  nhwc.packed_inputs = qconv.packed_inputs;
  nhwc.kernel_dtypes = qconv.kernel_dtypes;
  // onnxruntime's QGemm and MatMulIntegerToFloat are rows of the matmul family
  // (graph/ops/matmul.cpp) that run on the same machinery.
  set("QGemm", std::integral_constant<Op, Op::qgemm>{});
  set("MatMulIntegerToFloat", std::integral_constant<Op, Op::matmul_integer_to_float>{});
  // DynamicQuantizeMatMul: A quantized into the step's workspace, then MatMulIntegerToFloat.
  graph::OpSchema& dynamic = r.row("com.microsoft", "DynamicQuantizeMatMul");
  dynamic.kernel = dynamic_run;
  dynamic.prepare = dynamic_prepare;
  dynamic.workspace = dynamic_workspace;
  dynamic.packed = dynamic_packed;
  dynamic.packed_inputs = 1U << 1;  // B
  dynamic.kernel_dtypes = DTypeSet{DType::float32};
}

}  // namespace footprint::runtime::kernels
