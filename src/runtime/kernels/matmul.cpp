// Matrix products on oneDNN's matmul primitive: Gemm (transposes as strides, alpha as an output
// scale, C as a bias or through the sum post-op), MatMul (numpy batching and 1-D operands) and
// footprint::MatMulAdd (graph::fuse's MatMul then Add of a bias: the primitive's bias).
//
// Operands are described where they lie: a transposed operand is the same bytes with swapped
// strides, so a Gemm over a 25088x4096 weight with transB reads the weight in place.
//
// A product whose gemm oneDNN's sgemm would run on copies of its operands, in memory of its own
// (sgemm_copies: a ConvNeXt's or a Swin's [3136, 96] x [96, 384] takes 880 KB each run with
// AVX2, outside any plan) runs as a 1x1 convolution instead: A's rows are the pixels of
// channels-last activations (the same bytes), B the weights, packed once into the convolution's
// layout (BlockedState), and every byte of its scratch is planned.
//
// Otherwise a weight matrix B (a Gemm's, or a MatMul's B of rank 2 once A's batch is folded into
// rows) is left to oneDNN's layout (format_tag::any) and packed into it once when preparing
// (PackedWeights; a computed B on every run): on B as stored its brgemm kernels copy blocks of B
// on every call, striding down K rows a page apart, 1.5-3.5x slower at a transformer's widths
// (docs/RUNTIME.md, "Matrix products"). A batched B (attention's keys) is read where it lies.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "blocked_layout.hpp"
#include "dnnl_util.hpp"
#include "dtype_dispatch.hpp"
#include "epilogue.hpp"
#include "families.hpp"
#include "float_matmul.hpp"
#include "half_gemv.hpp"
#include "through_float32.hpp"

namespace footprint::runtime::kernels {
namespace {

using dnnl::memory;

void require_float(const graph::Node& n, const Extents& e) {
  for (size_t i = 0; i < e.in.size(); ++i) {
    if (e.has_in(i) && e.in_dtype[i] != DType::float32) {
      node_fail(n, "dtype " + dtype_label(e.in_dtype[i]) + " is not supported (float32 only)");
    }
  }
}

// [M, K] x [K, N] (B as stored: [K, N], or [N, K] with `b_transposed`) + an optional bias [N]
// as a 1x1 convolution over M pixels of K channels, channels last (A and Y as they lie), where
// the gemm would copy its operands; nullopt where it would not. The weights' own layout is returned
// beside it for BlockedState to pack them from.
struct ProductAsConv {
  dnnl::convolution_forward::primitive_desc pd;
  memory::desc src, weights, dst;
  bool bias = false;
};

std::optional<ProductAsConv> product_as_conv(const graph::Node& n, int64_t m, int64_t k, int64_t n_,
                                             bool b_transposed, bool bias) {
  // Only the copy path: the no-copy kernels' buffer past K = 2048 is a panel of B (k x 16
  // floats a thread) while packing B would hold a fully connected layer's weights twice while
  // preparing (AlexNet's 151 MB; VGG-19's 411 MB).
  if (!sgemm_copies(m, n_)) return std::nullopt;
  ProductAsConv c;
  c.bias = bias;
  c.src = memory::desc({1, k, 1, m}, memory::data_type::f32, memory::format_tag::nhwc);
  c.dst = memory::desc({1, n_, 1, m}, memory::data_type::f32, memory::format_tag::nhwc);
  // (n, k) of the weights is B[k][n] (iohw) or, transposed, B[n][k] (oihw).
  c.weights = memory::desc({n_, k, 1, 1}, memory::data_type::f32,
                           b_transposed ? memory::format_tag::oihw : memory::format_tag::iohw);
  const memory::desc any({n_, k, 1, 1}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc bias_desc = bias ? plain_desc({n_}) : memory::desc();
  const dnnl::primitive_attr attr = epilogues_in_post_ops(n) ? epilogue_attr(n) : user_scratchpad();
  c.pd = make_pd(n, "1x1 convolution", [&] {
    return dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, c.src, any, bias_desc,
                                        c.dst, {1, 1}, {0, 0}, {0, 0}),
        attr, cpu_engine());
  });
  return c;
}

std::unique_ptr<graph::KernelState> conv_state(const ProductAsConv& c,
                                               const graph::KernelContext& ctx) {
  const graph::TensorRef* b = ctx.input_or_null(1);
  return std::make_unique<BlockedState>(c.pd, c.src, c.weights, c.dst, c.bias,
                                        b != nullptr ? b->data : nullptr);
}

uint64_t conv_workspace(const ProductAsConv& c) {
  return BlockedState::workspace_bytes(c.pd, c.src, c.weights, c.dst);
}

// Runs a product prepared as a convolution; false for one prepared otherwise.
bool run_as_conv(graph::KernelContext& ctx) {
  auto* conv = dynamic_cast<BlockedState*>(ctx.state());
  if (conv == nullptr) return false;
  conv->run(ctx);
  finish_epilogues(ctx, epilogues_in_post_ops(ctx.node()));
  return true;
}

// ---- Gemm: Y = alpha * A' B' + beta * C, A' = transA ? A^T : A, B' likewise

// How C reaches Y. A row vector [1, N] with alpha = beta = 1 is the primitive's bias (the fast
// case: a fully connected layer); any other C is first broadcast into Y, which the sum post-op
// then scales by beta and adds to.
enum class GemmC { none, bias, summed };

struct GemmShape {
  int64_t m = 0, k = 0, n = 0;
  int64_t c_rows = 1, c_cols = 1;  // C seen as 2-D; 1 where it broadcasts
  GemmC c = GemmC::none;
  float alpha = 1, beta = 1;
};

GemmShape gemm_shape(const graph::Node& n, const Extents& e) {
  const auto& a = e.in[0];
  const auto& b = e.in[1];
  if (a.size() != 2 || b.size() != 2) node_fail(n, "Gemm operands must be matrices");
  const bool ta = node_int(n, "transA", 0) != 0;
  const bool tb = node_int(n, "transB", 0) != 0;
  GemmShape s;
  s.m = a[ta ? 1 : 0];
  s.k = a[ta ? 0 : 1];
  s.n = b[tb ? 0 : 1];
  if (b[tb ? 1 : 0] != s.k) node_fail(n, "inner dims of A and B differ");
  s.alpha = node_float(n, "alpha", 1.0f);
  s.beta = node_float(n, "beta", 1.0f);
  if (!e.has_in(2) || s.beta == 0.0f) return s;
  const auto& c = e.in[2];
  if (c.size() > 2) node_fail(n, "C must have rank 2 or less");
  s.c_cols = c.empty() ? 1 : c.back();
  s.c_rows = c.size() == 2 ? c[0] : 1;
  if ((s.c_rows != 1 && s.c_rows != s.m) || (s.c_cols != 1 && s.c_cols != s.n)) {
    node_fail(n,
              "C does not broadcast to [" + std::to_string(s.m) + "," + std::to_string(s.n) + "]");
  }
  const bool row = s.c_rows == 1 && s.c_cols == s.n;
  s.c = row && s.alpha == 1.0f && s.beta == 1.0f ? GemmC::bias : GemmC::summed;
  return s;
}

// The primitive `build` makes for B in the layout oneDNN prefers (format_tag::any), unless that
// layout pads B by more than an eighth (its blocks of 16-64 columns over a narrow B: [32, 5]
// would take 8 KiB for 640 B); then for B as stored (`plain`).
template <class Build>
dnnl::matmul::primitive_desc with_packed_b(const memory::desc& plain, Build build) {
  auto pd = build(memory::desc(plain.dims(), memory::data_type::f32, memory::format_tag::any));
  if (pd.weights_desc().get_size() * 8 > plain.get_size() * 9) return build(plain);
  return pd;
}

// B as the Gemm stores it: [K, N], or [N, K] read through swapped strides.
memory::desc gemm_plain_b(const graph::Node& n, const Extents& e) {
  const GemmShape s = gemm_shape(n, e);
  const bool tb = node_int(n, "transB", 0) != 0;
  return strided_desc({s.k, s.n}, tb ? memory::dims{1, s.k} : memory::dims{s.n, 1});
}

dnnl::matmul::primitive_desc gemm_pd_on(const graph::Node& n, const Extents& e, bool epilogues) {
  require_float(n, e);
  const GemmShape s = gemm_shape(n, e);
  const bool ta = node_int(n, "transA", 0) != 0;
  const memory::desc a = strided_desc({s.m, s.k}, ta ? memory::dims{1, s.m} : memory::dims{s.k, 1});
  const memory::desc bias = s.c == GemmC::bias ? plain_desc({1, s.n}) : memory::desc();
  dnnl::primitive_attr attr = user_scratchpad();
  if (s.alpha != 1.0f) attr.set_output_scales(0, {s.alpha});
  dnnl::post_ops ops;
  if (s.c == GemmC::summed) ops.append_sum(s.beta);
  if (epilogues) append_epilogues(n, ops);  // after the sum: Y = act(alpha A'B' + beta C)
  attr.set_post_ops(ops);
  return with_packed_b(gemm_plain_b(n, e), [&](const memory::desc& b) {
    return make_pd(n, "Gemm", [&] {
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, plain_desc({s.m, s.n})),
                                          attr, cpu_engine());
    });
  });
}

// With the node's epilogues as post-ops where they can be, and whether they are.
std::pair<dnnl::matmul::primitive_desc, bool> gemm_pd(const graph::Node& n, const Extents& e) {
  return with_epilogues(n, [&](bool epilogues) { return gemm_pd_on(n, e, epilogues); });
}

// The primitive plus how C is applied, which the run needs before executing.
class GemmState final : public DnnlState {
 public:
  GemmState(const dnnl::matmul::primitive_desc& pd, const GemmShape& s,
            const std::vector<std::pair<int, memory::desc>>& args)
      : DnnlState(pd, dnnl::matmul(pd), args), shape(s) {}
  GemmShape shape;
  std::optional<PackedWeights> packed;  // B in the primitive's layout, where it is not B's own

  uint64_t owned_bytes() const override { return packed ? packed->bytes() : 0; }
};

// The same for MatMul and footprint::MatMulAdd.
class MatMulState final : public DnnlState {
 public:
  MatMulState(const dnnl::matmul::primitive_desc& pd,
              const std::vector<std::pair<int, memory::desc>>& args)
      : DnnlState(pd, dnnl::matmul(pd), args) {}
  std::optional<PackedWeights> packed;

  uint64_t owned_bytes() const override { return packed ? packed->bytes() : 0; }
};

// B's layout in the primitive where it differs from B's own (`plain`), packed from the input's
// bytes now when they are a constant.
std::optional<PackedWeights> packed_b(const dnnl::matmul::primitive_desc& pd,
                                      const memory::desc& plain, const graph::KernelContext& ctx) {
  if (pd.weights_desc() == plain) return std::nullopt;
  const graph::TensorRef* b = ctx.input_or_null(1);
  return std::optional<PackedWeights>(std::in_place, plain, pd.weights_desc(),
                                      b != nullptr ? b->data : nullptr);
}

std::vector<std::pair<int, memory::desc>> matmul_args(const dnnl::matmul::primitive_desc& pd,
                                                      bool bias) {
  std::vector<std::pair<int, memory::desc>> args{{DNNL_ARG_SRC, pd.src_desc()},
                                                 {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                                 {DNNL_ARG_DST, pd.dst_desc()}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, pd.bias_desc());
  return args;
}

// A Gemm the convolution can run: A as stored (no transA), no scale, C absent or a bias.
std::optional<ProductAsConv> gemm_as_conv(const graph::Node& n, const Extents& e) {
  require_float(n, e);
  const GemmShape s = gemm_shape(n, e);
  const bool c_ok = s.c == GemmC::bias || !e.has_in(2);
  if (node_int(n, "transA", 0) != 0 || s.alpha != 1.0f || !c_ok) return std::nullopt;
  return product_as_conv(n, s.m, s.k, s.n, node_int(n, "transB", 0) != 0, s.c == GemmC::bias);
}

std::unique_ptr<graph::KernelState> gemm_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  if (const auto c = gemm_as_conv(ctx.node(), e)) return conv_state(*c, ctx);
  const GemmShape s = gemm_shape(ctx.node(), e);
  const auto [pd, applies_epilogues] = gemm_pd(ctx.node(), e);
  auto state = std::make_unique<GemmState>(pd, s, matmul_args(pd, s.c == GemmC::bias));
  state->applies_epilogues = applies_epilogues;
  state->packed = packed_b(pd, gemm_plain_b(ctx.node(), e), ctx);
  return state;
}

// Y = C broadcast, before the primitive adds alpha A'B' to beta Y.
void broadcast_c(const graph::TensorRef& c, const GemmShape& s, float* y) {
  const float* src = c.as<const float>();
  for (int64_t i = 0; i < s.m; ++i) {
    const float* row = src + (s.c_rows == 1 ? 0 : i * s.c_cols);
    float* out = y + i * s.n;
    for (int64_t j = 0; j < s.n; ++j) out[j] = row[s.c_cols == 1 ? 0 : j];
  }
}

void run_gemm(graph::KernelContext& ctx) {
  if (run_as_conv(ctx)) return;
  auto* st = dynamic_cast<GemmState*>(ctx.state());
  if (st == nullptr) {
    // Preparing built nothing for empty tensors; with an empty inner dim (K = 0) Y would be
    // beta C, a case no model needs.
    if (ctx.output(0).numel() > 0) ctx.fail("a Gemm with an empty operand is not supported");
    return;
  }
  float* y = ctx.output(0).as<float>();
  if (st->shape.c == GemmC::summed) broadcast_c(ctx.input(2), st->shape, y);
  st->bind(DNNL_ARG_SRC, ctx.input(0).data);
  st->bind(DNNL_ARG_WEIGHTS,
           st->packed ? st->packed->weights(ctx, ctx.input(1).data) : ctx.input(1).data);
  if (st->shape.c == GemmC::bias) st->bind(DNNL_ARG_BIAS, ctx.input(2).data);
  st->bind(DNNL_ARG_DST, y);
  st->execute(ctx);
  finish_epilogues(ctx, st->applies_epilogues);
}

// ---- MatMul: [..., M, K] x [..., K, N] -> [broadcast(...), M, N]; a 1-D operand is a row
// (first) or a column (second) whose added dim the output drops.

struct MatMulDims {
  memory::dims a, b, y;  // same rank, batch dims broadcast
};

// A batch of A against one B (a weight: [B, S, K] x [K, N]) is a single [B S, K] x [K, N]
// product over the same bytes, A and Y being dense. oneDNN would otherwise run B products of S
// rows each, reading all of B every time: a torchvision ViT's attention projects [197, 1, 384]
// (sequence first, batch 1) by one [384, 1152] weight, and ran as 197 one-row products at a
// tenth of the machine's speed.
MatMulDims fold_batch_into_rows(MatMulDims d) {
  const size_t rank = d.a.size();
  if (rank <= 2) return d;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (d.b[i] != 1) return d;
  }
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= d.a[i];
  const int64_t k = d.a[rank - 1];
  const int64_t n = d.y[rank - 1];
  d.a.assign(2, rows);
  d.a[1] = k;
  d.b.erase(d.b.begin(), d.b.end() - 2);
  d.y.assign(2, rows);
  d.y[1] = n;
  return d;
}

MatMulDims matmul_dims(const graph::Node& n, const Extents& e) {
  const std::vector<int64_t>& a = e.in[0];
  const std::vector<int64_t>& b = e.in[1];
  if (a.empty() || b.empty()) node_fail(n, "MatMul operands must not be scalars");
  const size_t rank = std::max({a.size(), b.size(), size_t{2}});
  if (rank > DNNL_MAX_NDIMS) node_fail(n, "rank " + std::to_string(rank) + " is not supported");
  // Both to `rank` dims, leading 1s added; a 1-D A is the row [1, K], a 1-D B the column [K, 1].
  MatMulDims d;
  d.a.assign(rank, 1);
  d.b.assign(rank, 1);
  std::copy(a.begin(), a.end(), d.a.end() - static_cast<std::ptrdiff_t>(a.size()));
  if (b.size() == 1) {
    d.b[rank - 2] = b[0];
  } else {
    std::copy(b.begin(), b.end(), d.b.end() - static_cast<std::ptrdiff_t>(b.size()));
  }
  if (d.a[rank - 1] != d.b[rank - 2]) node_fail(n, "inner dims of A and B differ");
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (d.a[i] != d.b[i] && d.a[i] != 1 && d.b[i] != 1) node_fail(n, "batch dims do not broadcast");
    d.y.push_back(std::max(d.a[i], d.b[i]));
  }
  d.y.push_back(d.a[rank - 2]);
  d.y.push_back(d.b[rank - 1]);
  // The output arrives allocated with the inferred extents; the promoted ones must fill it.
  int64_t elements = 1;
  for (int64_t v : d.y) elements *= v;
  int64_t allocated = 1;
  for (int64_t v : e.out[0]) allocated *= v;
  if (elements != allocated) node_fail(n, "the output's extents do not match the operands'");
  return d;
}

// footprint::MatMulAdd's C, added to every row of Y: [1, ..., 1, N] in Y's rank, the same bytes
// as C's [N].
memory::desc bias_desc(const MatMulDims& d, const Extents& e) {
  if (!e.has_in(2)) return {};
  memory::dims dims(d.y.size(), 1);
  dims.back() = d.y.back();
  return plain_desc(dims);
}

// B as stored, once A's batch is folded into rows.
memory::desc matmul_plain_b(const graph::Node& n, const Extents& e) {
  return plain_desc(fold_batch_into_rows(matmul_dims(n, e)).b);
}

std::pair<dnnl::matmul::primitive_desc, bool> matmul_pd(const graph::Node& n, const Extents& e) {
  require_float(n, e);
  const MatMulDims d = fold_batch_into_rows(matmul_dims(n, e));
  return with_epilogues(n, [&](bool epilogues) {
    auto build = [&](const memory::desc& b) {
      return make_pd(n, "MatMul", [&] {
        return dnnl::matmul::primitive_desc(
            dnnl::matmul::desc(plain_desc(d.a), b, bias_desc(d, e), plain_desc(d.y)),
            epilogues ? epilogue_attr(n) : user_scratchpad(), cpu_engine());
      });
    };
    // A matrix B in the primitive's layout (packed); a batched one where it lies.
    return d.b.size() == 2 ? with_packed_b(plain_desc(d.b), build) : build(plain_desc(d.b));
  });
}

// A MatMul the convolution can run: B a matrix (A's batch folded into its rows).
std::optional<ProductAsConv> matmul_as_conv(const graph::Node& n, const Extents& e) {
  require_float(n, e);
  const MatMulDims d = fold_batch_into_rows(matmul_dims(n, e));
  if (d.a.size() != 2) return std::nullopt;
  return product_as_conv(n, d.a[0], d.a[1], d.b[1], false, e.has_in(2));
}

std::unique_ptr<graph::KernelState> matmul_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  if (const auto c = matmul_as_conv(ctx.node(), e)) return conv_state(*c, ctx);
  const auto [pd, applies_epilogues] = matmul_pd(ctx.node(), e);
  auto state = std::make_unique<MatMulState>(pd, matmul_args(pd, e.has_in(2)));
  state->applies_epilogues = applies_epilogues;
  state->packed = packed_b(pd, matmul_plain_b(ctx.node(), e), ctx);
  return state;
}

// The workspace and the packed bytes of a Gemm or MatMul, from the descriptors its prepare
// builds: the convolution's (its scratch, and its weights, which BlockedState holds constant or
// not) or the matmul's (its scratch, shared with the reorder that packs a computed B, and B in
// the primitive's layout where that is not B's own, packed constant or not).
using AsConv = std::optional<ProductAsConv> (*)(const graph::Node&, const Extents&);
using MatmulPd = std::pair<dnnl::matmul::primitive_desc, bool> (*)(const graph::Node&,
                                                                   const Extents&);
using PlainB = memory::desc (*)(const graph::Node&, const Extents&);

template <AsConv kAsConv, MatmulPd kPd, PlainB kPlainB>
uint64_t product_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                           const std::vector<graph::ConcreteTensor>& out) {
  return workspace_of(
      [](const graph::Node& node, const Extents& e) -> uint64_t {
        if (const auto c = kAsConv(node, e)) return conv_workspace(*c);
        const auto pd = kPd(node, e).first;
        const uint64_t scratch = pd.scratchpad_desc().get_size();
        const memory::desc plain = kPlainB(node, e);
        if (pd.weights_desc() == plain) return scratch;
        return std::max(scratch, PackedWeights::scratch_bytes(plain, pd.weights_desc()));
      },
      n, in, out);
}

template <AsConv kAsConv, MatmulPd kPd, PlainB kPlainB>
uint64_t product_packed(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& out,
                        const std::vector<bool>& /*constant*/) {
  return workspace_of(
      [](const graph::Node& node, const Extents& e) -> uint64_t {
        if (const auto c = kAsConv(node, e)) return c->pd.weights_desc().get_size();
        const auto pd = kPd(node, e).first;
        return pd.weights_desc() == kPlainB(node, e) ? 0 : pd.weights_desc().get_size();
      },
      n, in, out);
}

// Y = 0 (an empty inner dim), plus footprint::MatMulAdd's C in every row.
void add_bias_rows(const graph::TensorRef* c, const graph::TensorRef& y) {
  const std::span<float> out = y.span<float>();
  if (c == nullptr) {
    std::fill(out.begin(), out.end(), 0.0F);
    return;
  }
  const std::span<const float> bias(c->as<const float>(), c->numel());
  for (size_t i = 0; i < out.size(); ++i) out[i] = bias[i % bias.size()];
}

void run_matmul(graph::KernelContext& ctx) {
  if (run_as_conv(ctx)) return;
  auto* st = dynamic_cast<DnnlState*>(ctx.state());
  if (st == nullptr) {
    // Preparing built nothing for empty tensors. With an empty inner dim (K = 0) the output
    // still has elements: the product of nothing is zeros.
    const graph::TensorRef& y = ctx.output(0);
    if (y.numel() == 0) return;
    if (ctx.input(0).numel() != 0 && ctx.input(1).numel() != 0) {
      ctx.fail("the kernel's state was not prepared");
    }
    if (y.dtype != DType::float32) ctx.fail("dtype " + dtype_label(y.dtype) + " is not supported");
    add_bias_rows(ctx.input_or_null(2), y);
    apply_epilogues(ctx.node().epilogues, y.as<float>(), y.numel());  // no primitive ran
    return;
  }
  st->bind(DNNL_ARG_SRC, ctx.input(0).data);
  auto* packed = dynamic_cast<MatMulState*>(st);
  st->bind(DNNL_ARG_WEIGHTS, packed != nullptr && packed->packed
                                 ? packed->packed->weights(ctx, ctx.input(1).data)
                                 : ctx.input(1).data);
  if (ctx.has_input(2)) st->bind(DNNL_ARG_BIAS, ctx.input(2).data);
  st->bind(DNNL_ARG_DST, ctx.output(0).data);
  st->execute(ctx);
  finish_epilogues(ctx, st->applies_epilogues);
}

// A 16-bit Gemm of a few rows streams its 16-bit weights (half_gemv.hpp); every other 16-bit
// Gemm runs the float32 kernel on float32 copies (through_float32.hpp), float32 ones as they are.
namespace float32_copies = through_float32_detail;

void run_gemm_any(graph::KernelContext& ctx) {
  if (half_gemv::prepared(ctx)) return half_gemv::run(ctx);
  float32_copies::kernel<run_gemm>(ctx);
}

std::unique_ptr<graph::KernelState> gemm_prepare_any(const graph::KernelContext& ctx) {
  if (half_gemv::takes(ctx)) return half_gemv::prepare(ctx);
  return float32_copies::prepare_hook<gemm_prepare, 0b110>(ctx);
}

uint64_t gemm_workspace_any(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                            const std::vector<graph::ConcreteTensor>& out) {
  if (half_gemv::takes(n, in, out)) return half_gemv::workspace(n, in, out);
  return float32_copies::workspace_hook<product_workspace<gemm_as_conv, gemm_pd, gemm_plain_b>,
                                        0b110>(n, in, out);
}

uint64_t gemm_packed_any(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                         const std::vector<graph::ConcreteTensor>& out,
                         const std::vector<bool>& constant) {
  if (half_gemv::takes(n, in, out)) return half_gemv::packed(n, in, out);
  return float32_copies::packed_hook<product_packed<gemm_as_conv, gemm_pd, gemm_plain_b>>(
      n, in, out, constant);
}

void set(graph::OpSchema& row, graph::KernelFn kernel, graph::PrepareFn prepare,
         graph::WorkspaceFn workspace) {
  row.kernel = kernel;
  row.prepare = prepare;
  row.workspace = workspace;
}

}  // namespace

std::unique_ptr<graph::KernelState> float_matmul_prepare(const graph::KernelContext& ctx) {
  return matmul_prepare(ctx);
}

void float_matmul_run(graph::KernelContext& ctx) {
  run_matmul(ctx);
}

uint64_t float_matmul_workspace(const graph::Node& node,
                                const std::vector<graph::ConcreteTensor>& in,
                                const std::vector<graph::ConcreteTensor>& out) {
  return product_workspace<matmul_as_conv, matmul_pd, matmul_plain_b>(node, in, out);
}

uint64_t float_matmul_packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                             const std::vector<graph::ConcreteTensor>& out,
                             const std::vector<bool>& constant) {
  return product_packed<matmul_as_conv, matmul_pd, matmul_plain_b>(node, in, out, constant);
}

void register_matmul(graph::OpRegistry& r) {
  set(r.row("", "Gemm"), run_gemm, gemm_prepare,
      product_workspace<gemm_as_conv, gemm_pd, gemm_plain_b>);
  r.row("", "Gemm").epilogue_dtypes = DTypeSet{DType::float32};
  r.row("", "Gemm").packed = product_packed<gemm_as_conv, gemm_pd, gemm_plain_b>;
  r.row("", "Gemm").packed_inputs = 0b10;  // B
  // A row of A makes the same row of Y (B and C do not vary: the runtime checks).
  r.row("", "Gemm").rows_at_bound = true;
  for (graph::OpSchema* row : {&r.row("", "MatMul"), &r.row("footprint", "MatMulAdd")}) {
    set(*row, run_matmul, matmul_prepare,
        product_workspace<matmul_as_conv, matmul_pd, matmul_plain_b>);
    row->epilogue_dtypes = DTypeSet{DType::float32};
    row->packed = product_packed<matmul_as_conv, matmul_pd, matmul_plain_b>;
    row->packed_inputs = 0b10;  // B
    row->rows_at_bound = true;
  }
  // oneDNN's products here are built for float32 (require_float).
  for (graph::OpSchema* row :
       {&r.row("", "Gemm"), &r.row("", "MatMul"), &r.row("footprint", "MatMulAdd")})
    row->kernel_dtypes = DTypeSet{DType::float32};
  // Float16 and bfloat16 products run the float32 kernels on float32 copies
  // (through_float32.hpp: oneDNN 2.6 has no float16 matmul without AVX512-FP16). Gemm's B and C
  // must be constants, converted once when preparing; MatMul's B may be computed (attention's
  // keys), so it has a float32 copy in the step's scratch unless it is a constant.
  graph::OpSchema& gemm = r.row("", "Gemm");
  through_float32<run_gemm, gemm_prepare, product_workspace<gemm_as_conv, gemm_pd, gemm_plain_b>,
                  product_packed<gemm_as_conv, gemm_pd, gemm_plain_b>, 0b110>(gemm);
  set(gemm, run_gemm_any, gemm_prepare_any, gemm_workspace_any);
  gemm.packed = gemm_packed_any;
  for (graph::OpSchema* row : {&r.row("", "MatMul"), &r.row("footprint", "MatMulAdd")}) {
    through_float32<run_matmul, matmul_prepare,
                    product_workspace<matmul_as_conv, matmul_pd, matmul_plain_b>,
                    product_packed<matmul_as_conv, matmul_pd, matmul_plain_b>, 0>(*row);
  }
}

}  // namespace footprint::runtime::kernels
