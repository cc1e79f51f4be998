// Sliding-window kernels: Conv and ConvTranspose (oneDNN convolution and deconvolution), MaxPool
// and AveragePool (oneDNN pooling, with a plain loop for what it cannot express), the global
// pools (plain loops: one reduction per plane) and LRN (oneDNN, across channels).
//
// Tensors stay in ONNX's plain layouts, so weights are read in place from the model and every
// byte of scratch is planned: oneDNN's user scratchpad, sized by the same descriptor the
// workspace hook builds (see dnnl_util.hpp), or the depthwise loop's packed blocks.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "blocked_layout.hpp"
#include "channel_means.hpp"
#include "depthwise_conv.hpp"
#include "dnnl_util.hpp"
#include "dtype_dispatch.hpp"
#include "epilogue.hpp"
#include "families.hpp"
#include "footprint/graph/ops/conv_window.hpp"
#include "parallel_for.hpp"
#include "tensor_reads.hpp"
#include "through_float32.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

using dnnl::memory;

// The window of a node's spatial dims as oneDNN takes it: dilations as ONNX gives them (oneDNN
// wants them minus one), and end padding chosen so that oneDNN's extent check holds.
struct Window {
  memory::dims kernel, strides, dilations, pad_begin, pad_end, onnx_pad_end;
};

int64_t effective_kernel(const Window& w, size_t i) {
  return (w.kernel[i] - 1) * w.dilations[i] + 1;
}

// The oneDNN window of a forward window from `in` to `out` spatial extents: ONNX's pads (see
// ConvWindow::forward_pads), and at the end the pad that gives exactly `out` windows.
Window forward_window(const graph::Node& n, const graph::ops::ConvWindow& cw,
                      const memory::dims& kernel, const memory::dims& in, const memory::dims& out) {
  Window w;
  const size_t nd = kernel.size();
  w.kernel = kernel;
  w.strides = cw.strides;
  w.dilations = cw.dilations;
  w.pad_begin.assign(nd, 0);
  w.onnx_pad_end.assign(nd, 0);
  w.pad_end.assign(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    if (w.kernel[i] <= 0) node_fail(n, "kernel, strides and dilations must be positive");
    const int64_t eff = effective_kernel(w, i);
    const graph::ops::Pads pads = cw.forward_pads(i, kernel[i], in[i], out[i]);
    w.pad_begin[i] = pads.begin;
    w.onnx_pad_end[i] = pads.end;
    // ceil_mode (and a stride that does not divide) give an extent the ONNX end pad does not:
    // oneDNN then needs the end pad that produces exactly `out` windows.
    const int64_t span = in[i] - eff + w.pad_begin[i] + w.onnx_pad_end[i];
    const bool exact = span >= 0 && span / w.strides[i] + 1 == out[i];
    w.pad_end[i] =
        exact ? w.onnx_pad_end[i] : (out[i] - 1) * w.strides[i] + eff - in[i] - w.pad_begin[i];
  }
  return w;
}

memory::dims minus_one(const memory::dims& d) {
  memory::dims r = d;
  for (auto& v : r) --v;
  return r;
}

memory::dims spatial(const std::vector<int64_t>& dims) {
  return {dims.begin() + 2, dims.end()};
}

void require_float(const graph::Node& n, const Extents& e, size_t inputs) {
  for (size_t i = 0; i < inputs; ++i) {
    if (e.has_in(i) && e.in_dtype[i] != DType::float32) {
      node_fail(n, "dtype " + dtype_label(e.in_dtype[i]) + " is not supported (float32 only)");
    }
  }
}

// oneDNN convolutions take 1 to 3 spatial dims.
void require_conv_rank(const graph::Node& n, const Extents& e) {
  const size_t rank = e.in[0].size();
  if (rank < 3 || rank > 5) {
    node_fail(n, "inputs of rank " + std::to_string(rank) + " are not supported (1 to 3 " +
                     "spatial dims)");
  }
  if (e.in[1].size() != rank) node_fail(n, "the weights' rank differs from the input's");
}

graph::ops::ConvWindow conv_window(const graph::Node& n, const Extents& e) {
  require_conv_rank(n, e);
  return graph::ops::ConvWindow::decode(n, -1, e.in[0].size() - 2);
}

// ---- Conv: x [N, C, D...] * w [M, C/group, k...] (+ b [M]) -> y [N, M, O...]

// Where a convolution's tensors lie: plain NCHW; the layouts oneDNN prefers (format_tag::any for
// the input, weights and output), reordered to and from inside the step; or channels-last input
// and output (NhwcConv) with weights as oneDNN prefers.
enum class ConvLayout : uint8_t { plain, preferred, channels_last };

// Weights as oneDNN sees them: grouped ones are the same bytes as [group, M/group, C/group, k...].
memory::dims conv_weight_dims(const std::vector<int64_t>& wt, int64_t group) {
  memory::dims wdims(wt.begin(), wt.end());
  if (group > 1) {
    wdims = {group, wt[0] / group};
    wdims.insert(wdims.end(), wt.begin() + 1, wt.end());
  }
  return wdims;
}

// The convolution of node `n` (extents `e` as NCHW) on `where`'s layouts; with the node's
// epilogues as post-ops or without.
dnnl::convolution_forward::primitive_desc conv_pd_on(
    const graph::Node& n, const Extents& e, ConvLayout where, bool epilogues,
    dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
  require_float(n, e, 3);
  require_conv_rank(n, e);
  const auto& x = e.in[0];
  const auto& wt = e.in[1];
  const auto& y = e.out[0];
  const graph::ops::ConvWindow cw = conv_window(n, e);
  const int64_t group = cw.group;
  if (wt[0] % group != 0 || wt[1] * group != x[1]) {
    node_fail(n, "group " + std::to_string(group) + " does not fit " + std::to_string(x[1]) +
                     " input and " + std::to_string(wt[0]) + " output channels");
  }
  const memory::dims wdims = conv_weight_dims(wt, group);
  const auto any = [](const memory::dims& d) {
    return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
  };
  const auto data = [&](const memory::dims& d) {
    if (where == ConvLayout::channels_last) return channels_last_desc(d);
    return where == ConvLayout::preferred ? any(d) : plain_desc(d);
  };
  const memory::desc weights = where == ConvLayout::plain ? plain_desc(wdims) : any(wdims);
  const Window w = forward_window(n, cw, spatial(wt), spatial(x), spatial(y));
  const memory::desc bias = e.has_in(2) ? plain_desc({wt[0]}) : memory::desc();
  return make_pd(n, "convolution", [&] {
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm, data(x),
                                            weights, bias, data(y), w.strides,
                                            minus_one(w.dilations), w.pad_begin, w.pad_end);
    const dnnl::primitive_attr attr = epilogues ? epilogue_attr(n) : user_scratchpad();
    return dnnl::convolution_forward::primitive_desc(d, attr, cpu_engine());
  });
}

// Winograd's F(2x2, 3x3), oneDNN's kernel for it, on its blocked layouts: a 3x3 convolution
// (stride 1, no dilation, no groups) from 4x4 input tiles to 2x2 output tiles with 16 products
// where the direct one takes 36. It costs memory twice: packed weights 16/9 the plain ones (the
// 4x4 transformed kernels), and blocked copies of the input and output in the step's workspace.
// The time saved grows with pixels x input channels x output channels; the weights' cost with
// the channels alone, the copies' with the pixels times the channels. So it is taken where
// both ratios are good: at least kWinogradMinPixels output pixels (the batch's images
// together) and kWinogradMinChannels channels on each side. Measured with AVX-512, one thread,
// the copies included: 64 channels at 56x56 1.32 -> 0.95 ms, 128 at 28x28 1.27 -> 0.79 for
// 115 and 460 KiB more weights, where 256 at 14x14 saves 0.24 ms for 1.8 MiB and 32 channels
// lose to the copies (docs/RUNTIME.md, "Winograd"). Only the 2x3 kernel: oneDNN's 4x3 one
// (F(4x4, 3x3), which it picks for 256 channels and some batches) packs 4x the weights and
// rounds further from the direct sums. nullopt where the node is not such a convolution or
// oneDNN has no such kernel here (it needs AVX-512).
constexpr int64_t kWinogradMinPixels = int64_t{28} * 28;
constexpr int64_t kWinogradMinChannels = 64;

std::optional<std::pair<dnnl::convolution_forward::primitive_desc, bool>> winograd_conv_pd(
    const graph::Node& n, const Extents& e) {
  if (e.in.size() < 2 || e.in[0].size() != 4 || e.in[1].size() != 4 || e.out.empty()) {
    return std::nullopt;
  }
  const auto& wt = e.in[1];  // [M, C, 3, 3]
  if (e.in_dtype[0] != DType::float32 || wt[2] != 3 || wt[3] != 3) return std::nullopt;
  if (wt[0] < kWinogradMinChannels || wt[1] < kWinogradMinChannels) return std::nullopt;
  const auto& y = e.out[0];
  if (y[0] * y[2] * y[3] < kWinogradMinPixels) return std::nullopt;
  const graph::ops::ConvWindow cw = conv_window(n, e);
  const auto ones = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  if (cw.group != 1 || !ones(cw.strides) || !ones(cw.dilations)) return std::nullopt;
  try {
    auto pd = with_epilogues(n, [&](bool epilogues) {
      return conv_pd_on(n, e, ConvLayout::preferred, epilogues,
                        dnnl::algorithm::convolution_winograd);
    });
    if (std::string_view(pd.first.impl_info_str()).find("wino_2x3") == std::string_view::npos) {
      return std::nullopt;
    }
    return pd;
  } catch (const Error&) {  // make_pd's: oneDNN has no such kernel for the node here
    return std::nullopt;
  }
}

// On plain layouts, and whether the primitive applies the node's epilogues.
std::pair<dnnl::convolution_forward::primitive_desc, bool> conv_pd(const graph::Node& n,
                                                                   const Extents& e) {
  return with_epilogues(
      n, [&](bool epilogues) { return conv_pd_on(n, e, ConvLayout::plain, epilogues); });
}

// A 2-D convolution with a window larger than 1x1 runs on blocked layouts when oneDNN has a
// direct kernel for them (BlockedState): on plain ones it is im2col and a gemm. A 1x1
// convolution is a gemm already (m = output pixels, n = output channels, k = input channels),
// which the two reorders would only slow down, so it stays plain unless that gemm would
// allocate memory the plan cannot see (ResNet-50's 128 -> 512 at 28x28 takes 620 KB each run
// with AVX2); a grouped one is left plain (its blocked kernels pad each group's channels).
std::optional<dnnl::convolution_forward::primitive_desc> blocked_conv_pd(const graph::Node& n,
                                                                         const Extents& e) {
  if (e.in.size() < 2 || e.in[0].size() != 4 || e.in[1].size() != 4) return std::nullopt;
  if (e.in_dtype[0] != DType::float32 || conv_window(n, e).group != 1) return std::nullopt;
  if (auto winograd = winograd_conv_pd(n, e)) return std::move(winograd->first);
  if (e.in[1][2] * e.in[1][3] == 1 &&
      sgemm_allocates_nothing(e.out[0][2] * e.out[0][3], e.in[1][0], e.in[1][1])) {
    return std::nullopt;
  }
  auto pd = conv_pd_on(n, e, ConvLayout::preferred, epilogues_in_post_ops(n));
  if (std::string_view(pd.impl_info_str()).find("gemm") != std::string_view::npos) {
    return std::nullopt;
  }
  if (pd.src_desc() == plain_desc(e.in[0]) && pd.dst_desc() == plain_desc(e.out[0])) {
    return std::nullopt;
  }
  return pd;
}

// Conv and ConvTranspose share their arguments: src, weights, optional bias, dst.
template <class Pd>
std::unique_ptr<DnnlState> weighted_state(const Pd& pd, dnnl::primitive prim, bool has_bias) {
  std::vector<std::pair<int, memory::desc>> args{{DNNL_ARG_SRC, pd.src_desc()},
                                                 {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                                 {DNNL_ARG_DST, pd.dst_desc()}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, pd.bias_desc());
  return std::make_unique<DnnlState>(pd, std::move(prim), args);
}

bool depthwise(const graph::ops::ConvWindow& cw, const Extents& e) {
  return e.in.size() > 1 && is_depthwise_2d(cw, e.in[0], e.in[1], e.in_dtype[0]);
}

std::unique_ptr<graph::KernelState> conv_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  if (const auto cw = conv_window(ctx.node(), e); depthwise(cw, e)) {
    return depthwise_conv_2d_prepare(cw, e.in[0], e.in[1], e.out[0]);
  }
  if (const auto pd = blocked_conv_pd(ctx.node(), e)) {
    return std::make_unique<BlockedState>(*pd, plain_desc(e.in[0]), plain_desc(e.in[1]),
                                          plain_desc(e.out[0]), e.has_in(2),
                                          ctx.input_or_null(1)->data);
  }
  const auto [pd, applies_epilogues] = conv_pd(ctx.node(), e);
  auto state = weighted_state(pd, dnnl::convolution_forward(pd), e.has_in(2));
  state->applies_epilogues = applies_epilogues;
  return state;
}

uint64_t blocked_or_plain_workspace(const graph::Node& n, const Extents& e) {
  if (const auto pd = blocked_conv_pd(n, e)) {
    return BlockedState::workspace_bytes(*pd, plain_desc(e.in[0]), plain_desc(e.in[1]),
                                         plain_desc(e.out[0]));
  }
  return conv_pd(n, e).first.scratchpad_desc().get_size();
}

uint64_t conv_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& out) {
  const Extents e = extents_of(in, out);
  // Only a 2-D convolution can be depthwise; an attribute that does not decode plans no scratch,
  // as in workspace_of.
  if (e.in.size() > 1 && e.in[0].size() == 4 && !out.empty()) {
    try {
      if (const auto cw = conv_window(n, e); depthwise(cw, e)) {
        return depthwise_conv_2d_workspace(cw, in[0].dims, in[1].dims, out[0].dims);
      }
    } catch (const Error&) {
      return 0;
    }
  }
  return workspace_of(blocked_or_plain_workspace, n, in, out);
}

// What conv_prepare's state keeps: a blocked convolution's packed weights (whether they are
// constants or packed on every run, BlockedState holds them); the depthwise and plain paths
// keep none.
uint64_t conv_packed(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                     const std::vector<graph::ConcreteTensor>& out,
                     const std::vector<bool>& /*constant*/) {
  return workspace_of(
      [](const graph::Node& node, const Extents& e) -> uint64_t {
        if (depthwise(conv_window(node, e), e)) return 0;
        const auto pd = blocked_conv_pd(node, e);
        return pd ? pd->weights_desc().get_size() : 0;
      },
      n, in, out);
}

void run_weighted(graph::KernelContext& ctx);

// Node::epilogues: post-ops of the primitive, else applied after it (epilogue.hpp); the
// depthwise kernel applies them to each plane as it writes it.
void run_conv(graph::KernelContext& ctx) {
  if (run_depthwise_conv_2d(ctx)) return;
  bool applied = false;
  if (auto* blocked = dynamic_cast<BlockedState*>(ctx.state())) {
    blocked->run(ctx);
    applied = epilogues_in_post_ops(ctx.node());  // as blocked_conv_pd built it
  } else {
    run_weighted(ctx);
    const auto* st = dynamic_cast<const DnnlState*>(ctx.state());
    applied = st != nullptr && st->applies_epilogues;
  }
  finish_epilogues(ctx, applied);
}

void run_weighted(graph::KernelContext& ctx) {
  DnnlState* st = prepared_state(ctx);
  if (st == nullptr) return;
  st->bind(DNNL_ARG_SRC, ctx.input(0).data);
  st->bind(DNNL_ARG_WEIGHTS, ctx.input(1).data);
  if (ctx.has_input(2)) st->bind(DNNL_ARG_BIAS, ctx.input(2).data);
  st->bind(DNNL_ARG_DST, ctx.output(0).data);
  st->execute(ctx);
}

// ---- NhwcConv: Conv on channels-last tensors x [N, H, W, C] -> y [N, OH, OW, M]
// (graph::to_channels_last). oneDNN's channels-last kernels (brgemm-based with AVX-512, jit
// ones with AVX2) read the tensors as they lie, 1x1 and depthwise convolutions included, with
// the epilogues as post-ops; the weights are packed once (BlockedState, no reorders). A
// Winograd convolution (winograd_conv_pd) reads and writes blocked copies in its workspace.

std::pair<dnnl::convolution_forward::primitive_desc, bool> nhwc_conv_pd(const graph::Node& n,
                                                                        const Extents& nchw) {
  if (auto winograd = winograd_conv_pd(n, nchw)) return std::move(*winograd);
  return with_epilogues(
      n, [&](bool epilogues) { return conv_pd_on(n, nchw, ConvLayout::channels_last, epilogues); });
}

memory::desc plain_weights_desc(const graph::Node& n, const Extents& nchw) {
  return plain_desc(conv_weight_dims(nchw.in[1], conv_window(n, nchw).group));
}

std::unique_ptr<graph::KernelState> nhwc_conv_prepare(const graph::KernelContext& ctx) {
  const Extents e = channels_first(extents_of(ctx));
  if (!all_positive(e)) return nullptr;
  const auto [pd, applied] = nhwc_conv_pd(ctx.node(), e);
  auto st = std::make_unique<BlockedState>(
      pd, channels_last_desc(e.in[0]), plain_weights_desc(ctx.node(), e),
      channels_last_desc(e.out[0]), e.has_in(2), ctx.input_or_null(1)->data);
  st->applies_epilogues = applied;
  return st;
}

uint64_t nhwc_conv_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                             const std::vector<graph::ConcreteTensor>& out) {
  return workspace_of(
      [](const graph::Node& node, const Extents& e) -> uint64_t {
        const Extents nchw = channels_first(e);
        return BlockedState::workspace_bytes(
            nhwc_conv_pd(node, nchw).first, channels_last_desc(nchw.in[0]),
            plain_weights_desc(node, nchw), channels_last_desc(nchw.out[0]));
      },
      n, in, out);
}

uint64_t nhwc_conv_packed(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                          const std::vector<graph::ConcreteTensor>& out,
                          const std::vector<bool>& /*constant*/) {
  return workspace_of(
      [](const graph::Node& node, const Extents& e) -> uint64_t {
        return nhwc_conv_pd(node, channels_first(e)).first.weights_desc().get_size();
      },
      n, in, out);
}

void run_nhwc_conv(graph::KernelContext& ctx) {
  auto* st = prepared_state<BlockedState>(ctx);
  if (st == nullptr) return;
  st->run(ctx);
  finish_epilogues(ctx, st->applies_epilogues);
}

// ---- ConvTranspose: x [N, C, D...] * w [C, M/group, k...] (+ b [M]) -> y [N, M, O...]

// The window of a ConvTranspose. Only the begin pads place the output; oneDNN wants the end pads
// that make its extent check exact, which may be negative (output_padding) but above -stride.
Window transposed_window(const graph::Node& n, const graph::ops::ConvWindow& cw,
                         const memory::dims& kernel, const memory::dims& in,
                         const memory::dims& out) {
  Window w;
  const size_t nd = kernel.size();
  w.kernel = kernel;
  w.strides = cw.strides;
  w.dilations = cw.dilations;
  w.pad_begin.assign(nd, 0);
  w.pad_end.assign(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    w.pad_begin[i] = cw.transposed_pad_begin(i, kernel[i], in[i], out[i]);
    w.pad_end[i] = w.strides[i] * (in[i] - 1) + effective_kernel(w, i) - out[i] - w.pad_begin[i];
    if (w.pad_begin[i] < 0 || w.pad_end[i] <= -w.strides[i]) {
      node_fail(n, "an output of extent " + std::to_string(out[i]) + " on axis " +
                       std::to_string(i + 2) + " (pads/output_shape) is not supported");
    }
  }
  return w;
}

dnnl::deconvolution_forward::primitive_desc deconv_pd(const graph::Node& n, const Extents& e) {
  require_float(n, e, 3);
  require_conv_rank(n, e);
  const auto& x = e.in[0];
  const auto& wt = e.in[1];
  const auto& y = e.out[0];
  const graph::ops::ConvWindow cw = conv_window(n, e);
  const int64_t group = cw.group;
  if (wt[0] != x[1] || x[1] % group != 0 || wt[1] * group != y[1]) {
    node_fail(n, "group " + std::to_string(group) + " does not fit " + std::to_string(x[1]) +
                     " input and " + std::to_string(y[1]) + " output channels");
  }
  // ONNX stores [C, M/group, k...]; oneDNN reads [group, M/group, C/group, k...] through strides,
  // so the weights stay where they are.
  const memory::dims k = spatial(wt);
  const memory::dims ks = row_major(k);
  const int64_t kernel_size = ks.empty() ? 1 : ks[0] * k[0];
  const int64_t m = wt[1];
  const int64_t c = x[1] / group;
  memory::dims wdims{group, m, c};
  memory::dims wstrides{c * m * kernel_size, kernel_size, m * kernel_size};
  if (group == 1) {
    wdims.erase(wdims.begin());
    wstrides.erase(wstrides.begin());
  }
  wdims.insert(wdims.end(), k.begin(), k.end());
  wstrides.insert(wstrides.end(), ks.begin(), ks.end());
  const Window w = transposed_window(n, cw, k, spatial(x), spatial(y));
  const memory::desc bias = e.has_in(2) ? plain_desc({y[1]}) : memory::desc();
  return make_pd(n, "transposed convolution", [&] {
    const dnnl::deconvolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, plain_desc(x),
        strided_desc(wdims, wstrides), bias, plain_desc(y), w.strides, minus_one(w.dilations),
        w.pad_begin, w.pad_end);
    return dnnl::deconvolution_forward::primitive_desc(d, user_scratchpad(), cpu_engine());
  });
}

std::unique_ptr<graph::KernelState> deconv_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  const auto pd = deconv_pd(ctx.node(), e);
  return weighted_state(pd, dnnl::deconvolution_forward(pd), e.has_in(2));
}

uint64_t deconv_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                          const std::vector<graph::ConcreteTensor>& out) {
  return scratchpad_of(deconv_pd, n, in, out);
}

// ---- MaxPool, AveragePool, LpPool

enum class PoolKind : uint8_t { max, average, lp };

// A pooling decoded once: what the node asks for, and its window as oneDNN takes it.
struct Pooling {
  PoolKind kind = PoolKind::max;
  graph::ops::PoolWindow decoded;
  Window w;

  // ONNX counts padding only in an average, and only with count_include_pad.
  bool counts_padding() const { return kind == PoolKind::average && decoded.count_include_pad; }
};

Pooling pooling(const graph::Node& n, const Extents& e, PoolKind kind) {
  const size_t rank = e.in[0].size();
  if (rank < 3) node_fail(n, "the input must have rank 3 or more");
  Pooling p{kind, graph::ops::PoolWindow::decode(n, -1, rank - 2), {}};
  p.w = forward_window(n, p.decoded.window, p.decoded.window.kernel_shape, spatial(e.in[0]),
                       spatial(e.out[0]));
  return p;
}

// oneDNN pools float32 over 1 to 3 spatial dims without indices. An average that counts padding
// must not count the end padding ceil_mode adds (ONNX counts only the pads given).
bool pool_uses_onednn(const Extents& e, const Pooling& p) {
  const Window& w = p.w;
  if (p.kind == PoolKind::lp || e.in_dtype[0] != DType::float32 || e.has_out(1)) return false;
  if (w.kernel.empty() || w.kernel.size() > 3) return false;
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    if (p.counts_padding() && w.pad_end[i] > w.onnx_pad_end[i]) return false;
  }
  return true;
}

// Throws dnnl::error where oneDNN refuses; the caller then uses the loop.
dnnl::pooling_v2_forward::primitive_desc pool_pd(const Extents& e, const Pooling& p,
                                                 bool channels_last = false) {
  const Window& w = p.w;
  const dnnl::algorithm alg = p.kind == PoolKind::max ? dnnl::algorithm::pooling_max
                              : p.counts_padding()    ? dnnl::algorithm::pooling_avg_include_padding
                                                   : dnnl::algorithm::pooling_avg_exclude_padding;
  // Bytes only channels-last (NhwcMaxPool on a quantized model's activations).
  const DType t = e.in_dtype[0];
  const auto desc = [&](const std::vector<int64_t>& dims) {
    if (channels_last && (t == DType::int8 || t == DType::uint8)) {
      return memory::desc(dims, t == DType::uint8 ? memory::data_type::u8 : memory::data_type::s8,
                          memory::format_tag::nhwc);
    }
    return channels_last ? channels_last_desc(dims) : plain_desc(dims);
  };
  const dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, desc(e.in[0]),
                                         desc(e.out[0]), w.strides, w.kernel,
                                         minus_one(w.dilations), w.pad_begin, w.pad_end);
  return {d, user_scratchpad(), cpu_engine()};
}

constexpr size_t kMaxSpatial = 8;
using Coords = std::array<int64_t, kMaxSpatial>;

// A pooling the plain loop runs: any spatial rank up to kMaxSpatial, indices, any end padding.
struct PoolGeometry {
  size_t nd = 0;
  int64_t planes = 0, in_size = 1, out_size = 1, kernel_size = 1;
  Coords in{}, out{}, kernel{}, stride{}, dilation{}, pad_begin{}, pad_end{};
  Coords column_stride{};  // strides of a column-major plane, for storage_order 1 indices
  bool is_max = false, include_pad = false, column_major = false;
  int64_t lp = 0;  // LpPool's p: each tap adds |x|^p and the output is the sum's p-th root
};

// One tap's term of a window's sum: the value (an average) or |value|^p (LpPool).
double pool_term(const PoolGeometry& g, double v) {
  if (g.lp == 0) return v;
  return g.lp == 1   ? std::abs(v)
         : g.lp == 2 ? v * v
                     : std::pow(std::abs(v), static_cast<double>(g.lp));
}

// A window's output from its sum: the average over `count` taps, or the sum's p-th root.
double pool_result(const PoolGeometry& g, double sum, int64_t count) {
  if (g.lp != 0)
    return g.lp == 1   ? sum
           : g.lp == 2 ? std::sqrt(sum)
                       : std::pow(sum, 1.0 / static_cast<double>(g.lp));
  return sum / static_cast<double>(count);
}

class PoolLoopState final : public graph::KernelState {
 public:
  explicit PoolLoopState(const PoolGeometry& g) : geometry(g) {}
  PoolGeometry geometry;
};

PoolGeometry pool_geometry(const graph::Node& n, const Extents& e, const Pooling& p) {
  const Window& w = p.w;
  PoolGeometry g;
  g.nd = w.kernel.size();
  if (g.nd > kMaxSpatial) node_fail(n, "more than 8 spatial dims are not supported");
  g.planes = e.in[0][0] * e.in[0][1];
  for (size_t i = 0; i < g.nd; ++i) {
    g.in[i] = e.in[0][i + 2];
    g.out[i] = e.out[0][i + 2];
    g.kernel[i] = w.kernel[i];
    g.stride[i] = w.strides[i];
    g.dilation[i] = w.dilations[i];
    g.pad_begin[i] = w.pad_begin[i];
    g.pad_end[i] = w.onnx_pad_end[i];
    g.column_stride[i] = i == 0 ? 1 : g.column_stride[i - 1] * g.in[i - 1];
    g.in_size *= g.in[i];
    g.out_size *= g.out[i];
    g.kernel_size *= g.kernel[i];
  }
  g.is_max = p.kind == PoolKind::max;
  g.include_pad = p.counts_padding();
  if (p.kind == PoolKind::lp) {
    g.lp = node_int(n, "p", 2);
    if (g.lp <= 0) node_fail(n, "p must be positive");
  }
  g.column_major = p.decoded.column_major;
  return g;
}

// Row-major coordinates of `flat` in `extents`.
void unflatten(int64_t flat, const Coords& extents, size_t nd, Coords& c) {
  for (size_t i = nd; i-- > 0;) {
    c[i] = flat % extents[i];
    flat /= extents[i];
  }
}

// One output element of a pooling over one plane: the max (and where it is, row- and
// column-major) or the average over the window's counted positions.
template <class T>
struct PoolCell {
  T best{};
  int64_t best_at = -1, best_column = -1, counted = 0;
  double sum = 0;
};

template <class T>
PoolCell<T> pool_cell(const PoolGeometry& g, const T* x, const Coords& o) {
  PoolCell<T> cell;
  Coords k{};
  for (int64_t ki = 0; ki < g.kernel_size; ++ki) {
    unflatten(ki, g.kernel, g.nd, k);
    bool inside = true;
    bool in_padded = true;
    int64_t at = 0;
    int64_t column = 0;
    for (size_t d = 0; d < g.nd; ++d) {
      const int64_t p = o[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
      inside = inside && p >= 0 && p < g.in[d];
      in_padded = in_padded && p < g.in[d] + g.pad_end[d];
      at = at * g.in[d] + p;
      column += p * g.column_stride[d];
    }
    if (g.include_pad ? in_padded : inside) ++cell.counted;
    if (!inside) continue;
    const T v = x[at];
    if (!g.is_max) {
      cell.sum += pool_term(g, static_cast<double>(widen(v)));
    } else if (cell.best_at < 0 || v > cell.best) {
      cell.best = v;
      cell.best_at = at;
      cell.best_column = column;
    }
  }
  return cell;
}

// Where the window of output position `o` on `axis` meets the input: the kernel taps [lo, hi)
// that land inside it, and how many land before its end padding (what count_include_pad counts;
// taps never land before the begin padding).
struct Taps {
  int64_t lo = 0, hi = 0, padded = 0;
};

int64_t ceil_div_positive(int64_t a, int64_t b) {
  return a <= 0 ? 0 : (a + b - 1) / b;
}

Taps taps(const PoolGeometry& g, size_t axis, int64_t o) {
  const int64_t start = o * g.stride[axis] - g.pad_begin[axis];
  const int64_t d = g.dilation[axis];
  const int64_t k = g.kernel[axis];
  Taps t;
  t.lo = start >= 0 ? 0 : std::min(k, ceil_div_positive(-start, d));
  t.hi = std::max(t.lo, std::min(k, ceil_div_positive(g.in[axis] - start, d)));
  t.padded = std::min(k, ceil_div_positive(g.in[axis] + g.pad_end[axis] - start, d));
  return t;
}

// The largest input in a window (the first of the window where it is NaN, as the loop with
// indices keeps it), T{} for a window with no input. Without a position to track, one compare
// and move a tap, which compiles to a max instruction rather than a branch a tap.
template <class T>
T window_max(const T* x, int64_t width, int64_t h0, int64_t w0, const Taps& th, const Taps& tw,
             int64_t dh, int64_t dw) {
  if (th.lo >= th.hi || tw.lo >= tw.hi) return T{};
  T best = x[(h0 + th.lo * dh) * width + w0 + tw.lo * dw];
  for (int64_t kh = th.lo; kh < th.hi; ++kh) {
    const T* row = x + (h0 + kh * dh) * width + w0;
    for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
      const T v = row[kw * dw];
      best = v > best ? v : best;
    }
  }
  return best;
}

// The 2-D case without per-tap coordinate arithmetic: the taps of each axis are a range.
template <class T>
void pool_plane_2d(const PoolGeometry& g, const T* x, T* y, int64_t* indices, int64_t plane) {
  const int64_t width = g.in[1];
  for (int64_t oh = 0; oh < g.out[0]; ++oh) {
    const Taps th = taps(g, 0, oh);
    const int64_t h0 = oh * g.stride[0] - g.pad_begin[0];
    for (int64_t ow = 0; ow < g.out[1]; ++ow) {
      const Taps tw = taps(g, 1, ow);
      const int64_t w0 = ow * g.stride[1] - g.pad_begin[1];
      const int64_t oi = oh * g.out[1] + ow;
      if (!g.is_max) {
        double sum = 0;
        for (int64_t kh = th.lo; kh < th.hi; ++kh) {
          const T* row = x + (h0 + kh * g.dilation[0]) * width + w0;
          for (int64_t kw = tw.lo; kw < tw.hi; ++kw)
            sum += pool_term(g, static_cast<double>(widen(row[kw * g.dilation[1]])));
        }
        const int64_t count =
            g.include_pad ? th.padded * tw.padded : (th.hi - th.lo) * (tw.hi - tw.lo);
        y[oi] = count > 0 || g.lp != 0 ? narrow<T>(pool_result(g, sum, count)) : T{};
        continue;
      }
      T best{};
      int64_t best_h = -1, best_w = -1;
      for (int64_t kh = th.lo; kh < th.hi; ++kh) {
        const int64_t h = h0 + kh * g.dilation[0];
        for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
          const int64_t w = w0 + kw * g.dilation[1];
          const T v = x[h * width + w];
          if (best_h < 0 || v > best) {
            best = v;
            best_h = h;
            best_w = w;
          }
        }
      }
      y[oi] = best;
      if (indices == nullptr) continue;
      const int64_t within = g.column_major ? best_w * g.in[0] + best_h : best_h * width + best_w;
      indices[oi] = best_h < 0 ? -1 : plane * g.in_size + within;
    }
  }
}

// A 2-D max without indices, an output row at a time: its taps in the loop's order (row-major,
// so the same value wins, NaN included), each one pass over the row's inner outputs (every tap
// inside the input), which vectorises even with a stride; the outputs near the edges one by one.
template <class T>
void max_plane_2d(const PoolGeometry& g, const T* x, T* y) {
  const int64_t width = g.in[1], stride = g.stride[1], dw = g.dilation[1], kw = g.kernel[1];
  const int64_t out_w = g.out[1], pad = g.pad_begin[1];
  // Inner outputs: the window starts at or after column 0 and ends before `width`.
  const int64_t lo = std::min(out_w, ceil_div_positive(pad, stride));
  const int64_t last_start = width - 1 - (kw - 1) * dw + pad;  // the last inner ow * stride
  const int64_t hi = std::max(lo, last_start < 0 ? 0 : std::min(out_w, last_start / stride + 1));
  for (int64_t oh = 0; oh < g.out[0]; ++oh) {
    const Taps th = taps(g, 0, oh);
    const int64_t h0 = oh * g.stride[0] - g.pad_begin[0];
    T* row_out = y + oh * out_w;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      if (ow == lo) ow = hi;  // the inner ones below
      if (ow >= out_w) break;
      row_out[ow] =
          window_max(x, width, h0, ow * stride - pad, th, taps(g, 1, ow), g.dilation[0], dw);
    }
    if (lo == hi) continue;
    if (th.lo >= th.hi) {
      std::fill(row_out + lo, row_out + hi, T{});
      continue;
    }
    for (int64_t kh = th.lo; kh < th.hi; ++kh) {
      const int64_t row = (h0 + kh * g.dilation[0]) * width - pad;
      for (int64_t k = 0; k < kw; ++k) {
        // in[ow * stride] is inside for every inner ow. The output never overlaps the input,
        // which `omp simd` and restrict tell GCC: a byte store could alias anything, and it
        // vectorises no strided loop it would have to check for that first.
        const T* __restrict in = x + row + k * dw;
        T* __restrict out = row_out;
        if (kh == th.lo && k == 0) {
#pragma omp simd
          for (int64_t ow = lo; ow < hi; ++ow) out[ow] = in[ow * stride];
          continue;
        }
#pragma omp simd
        for (int64_t ow = lo; ow < hi; ++ow) {
          const T v = in[ow * stride];
          out[ow] = v > out[ow] ? v : out[ow];
        }
      }
    }
  }
}

// The same on 16-bit floats, each input row widened once into float (F16C where the CPU has it)
// rather than each compare converting both sides: the taps in the same order, compared as the
// same values, so the same element wins; false where a row is wider than the stack buffers.
template <class H>
bool max_plane_2d_16(const PoolGeometry& g, const H* x, H* y) {
  constexpr int64_t kMaxWidth = 2048;
  const int64_t width = g.in[1], out_w = g.out[1];
  if (width > kMaxWidth || out_w > kMaxWidth) return false;
  // Left uninitialised: each call is one plane, and clearing 40 KiB a plane cost more than
  // the pooling; every element read was written first (row, best and columns up to width and
  // out_w).
  std::array<float, kMaxWidth> row;   // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<float, kMaxWidth> best;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  // Each output column's taps, the same on every row: worked out once, not per row and tap.
  struct Columns {
    int32_t lo, hi;
  };
  std::array<Columns, kMaxWidth> columns;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  for (int64_t ow = 0; ow < out_w; ++ow) {
    const Taps t = taps(g, 1, ow);
    columns[static_cast<size_t>(ow)] = {static_cast<int32_t>(t.lo), static_cast<int32_t>(t.hi)};
  }
  const int64_t dw = g.dilation[1], stride = g.stride[1], pad = g.pad_begin[1];
  const int64_t kernel = g.kernel[1];
  // Inner outputs, every tap inside the row (as max_plane_2d): a pass over them per tap, which
  // vectorises; the outputs near the edges one by one.
  const int64_t lo = std::min(out_w, ceil_div_positive(pad, stride));
  const int64_t last_start = width - 1 - (kernel - 1) * dw + pad;
  const int64_t hi = std::max(lo, last_start < 0 ? 0 : std::min(out_w, last_start / stride + 1));
  for (int64_t oh = 0; oh < g.out[0]; ++oh) {
    const Taps th = taps(g, 0, oh);
    const int64_t h0 = oh * g.stride[0] - g.pad_begin[0];
    for (int64_t kh = th.lo; kh < th.hi; ++kh) {
      widen_row(x + (h0 + kh * g.dilation[0]) * width, row.data(), static_cast<size_t>(width));
      for (int64_t k = 0; k < kernel && lo < hi; ++k) {
        const float* __restrict in = row.data() + k * dw - pad;
        float* __restrict b = best.data();
        if (kh == th.lo && k == 0) {
#pragma omp simd
          for (int64_t ow = lo; ow < hi; ++ow) b[ow] = in[ow * stride];
          continue;
        }
#pragma omp simd
        for (int64_t ow = lo; ow < hi; ++ow) {
          const float v = in[ow * stride];
          b[ow] = v > b[ow] ? v : b[ow];
        }
      }
      for (int64_t ow = 0; ow < out_w; ++ow) {
        if (ow == lo) ow = hi;
        if (ow >= out_w) break;
        const Columns tw = columns[static_cast<size_t>(ow)];
        if (tw.lo >= tw.hi) continue;
        const float* taps_in = row.data() + ow * g.stride[1] - g.pad_begin[1];
        float b = kh == th.lo ? taps_in[tw.lo * dw] : best[static_cast<size_t>(ow)];
        for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
          const float v = taps_in[kw * dw];
          b = v > b ? v : b;
        }
        best[static_cast<size_t>(ow)] = b;
      }
    }
    // A window with no input gives +0, H{}.
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const Columns tw = columns[static_cast<size_t>(ow)];
      if (th.lo >= th.hi || tw.lo >= tw.hi) best[static_cast<size_t>(ow)] = 0.0F;
    }
    narrow_row(best.data(), y + oh * out_w, static_cast<size_t>(out_w));
  }
  return true;
}

template <class T>
void pool_plane(const PoolGeometry& g, const T* x, T* y, int64_t* indices, int64_t plane) {
  if constexpr (is_16bit_float<T>) {
    if (g.nd == 2 && g.is_max && indices == nullptr) {
      bool done = false;
      with_wide_vectors([&] { done = max_plane_2d_16(g, x, y); });
      if (done) return;
    }
  }
  if (g.nd == 2 && g.is_max && indices == nullptr) {
    return with_wide_vectors([&] { max_plane_2d(g, x, y); });
  }
  if (g.nd == 2) return pool_plane_2d(g, x, y, indices, plane);
  Coords o{};
  for (int64_t oi = 0; oi < g.out_size; ++oi) {
    unflatten(oi, g.out, g.nd, o);
    const PoolCell<T> cell = pool_cell(g, x, o);
    if (!g.is_max) {
      y[oi] =
          cell.counted > 0 || g.lp != 0 ? narrow<T>(pool_result(g, cell.sum, cell.counted)) : T{};
      continue;
    }
    y[oi] = cell.best;
    if (indices != nullptr) {
      const int64_t within = g.column_major ? cell.best_column : cell.best_at;
      indices[oi] = cell.best_at < 0 ? -1 : plane * g.in_size + within;
    }
  }
}

template <class T>
void pool_loop(graph::KernelContext& ctx, const PoolGeometry& g) {
  const T* x = ctx.input(0).as<const T>();
  T* y = ctx.output(0).as<T>();
  graph::TensorRef* idx = ctx.output_or_null(1);
  int64_t* indices = idx != nullptr ? idx->as<int64_t>() : nullptr;
  parallel_for(
      ctx.threads(), static_cast<size_t>(g.planes),
      [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) {
          const auto plane = static_cast<int64_t>(p);
          pool_plane(g, x + plane * g.in_size, y + plane * g.out_size,
                     indices != nullptr ? indices + plane * g.out_size : nullptr, plane);
        }
      },
      1);
}

// The loop's element types: the 16-bit floats compare as the values they hold and average in
// double, rounded once on store (oneDNN 2.6 has no float16 pooling on CPUs without AVX512-FP16);
// MaxPool also takes 8-bit integers.
bool pool_loop_supports(PoolKind kind, DType t) {
  if (t == DType::float32 || t == DType::float64) return true;
  if (t == DType::float16 || t == DType::bfloat16) return true;
  return kind == PoolKind::max && (t == DType::int8 || t == DType::uint8);
}

// The oneDNN pooling for the node, where oneDNN has one worth using: in 2-D only its JIT kernels
// beat the loop (its generic simple_nchw took 5x the loop's time on VGG-19's 224x224 pool).
std::optional<dnnl::pooling_v2_forward::primitive_desc> onednn_pool(const Extents& e,
                                                                    const Pooling& p) {
  if (!pool_uses_onednn(e, p)) return std::nullopt;
  try {
    auto pd = pool_pd(e, p);
    const bool jit = std::string_view(pd.impl_info_str()).starts_with("jit");
    if (p.w.kernel.size() == 2 && !jit) return std::nullopt;
    return pd;
  } catch (const dnnl::error&) {
    return std::nullopt;  // beyond oneDNN's padding limits: the loop computes it
  }
}

// ---- 8-bit MaxPool through channels-last: oneDNN 2.6 pools int8 and uint8 with a jit kernel only
// channels-last (its NCHW one is the reference loop, 600x slower), and the plain loop's strided
// byte reads do not vectorise. So a 2-D 8-bit max without indices is reordered to [N, H, W, C]
// in the step's workspace, pooled there and reordered back: three oneDNN jit steps, a fifth of
// the loop's time on ResNet-18's first pool. The plan comes from the extents alone, so the
// workspace hook and prepare agree.
struct BytePool {
  dnnl::pooling_v2_forward::primitive_desc pool;
  dnnl::reorder::primitive_desc to_last, from_last;
  uint64_t src_offset = 0, dst_offset = 0, total = 0;
};

uint64_t aligned64(uint64_t bytes) {
  return (bytes + 63) / 64 * 64;
}

std::optional<BytePool> byte_pool(const Extents& e, const Pooling& p) {
  const DType t = e.in_dtype[0];
  if ((t != DType::int8 && t != DType::uint8) || p.kind != PoolKind::max || e.has_out(1) ||
      p.w.kernel.size() != 2 || e.in[0].size() != 4) {
    return std::nullopt;
  }
  const auto dt = t == DType::uint8 ? memory::data_type::u8 : memory::data_type::s8;
  const auto plain = [&](const std::vector<int64_t>& d) {
    return memory::desc(d, dt, memory::format_tag::nchw);
  };
  const auto last = [&](const std::vector<int64_t>& d) {
    return memory::desc(d, dt, memory::format_tag::nhwc);
  };
  try {
    const Window& w = p.w;
    BytePool b{dnnl::pooling_v2_forward::primitive_desc(
                   dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                                  dnnl::algorithm::pooling_max, last(e.in[0]),
                                                  last(e.out[0]), w.strides, w.kernel,
                                                  minus_one(w.dilations), w.pad_begin, w.pad_end),
                   user_scratchpad(), cpu_engine()),
               {},
               {}};
    if (!std::string_view(b.pool.impl_info_str()).starts_with("jit")) return std::nullopt;
    b.to_last = dnnl::reorder::primitive_desc(cpu_engine(), plain(e.in[0]), cpu_engine(),
                                              b.pool.src_desc(), user_scratchpad());
    b.from_last = dnnl::reorder::primitive_desc(cpu_engine(), b.pool.dst_desc(), cpu_engine(),
                                                plain(e.out[0]), user_scratchpad());
    const uint64_t scratch =
        std::max({b.pool.scratchpad_desc().get_size(), b.to_last.scratchpad_desc().get_size(),
                  b.from_last.scratchpad_desc().get_size()});
    b.src_offset = aligned64(scratch);
    b.dst_offset = b.src_offset + aligned64(b.pool.src_desc().get_size());
    b.total = b.dst_offset + aligned64(b.pool.dst_desc().get_size());
    return b;
  } catch (const dnnl::error&) {
    return std::nullopt;  // beyond oneDNN's padding limits: the loop computes it
  }
}

class BytePoolState final : public graph::KernelState {
 public:
  explicit BytePoolState(const BytePool& b)
      : plan(b),
        to_last(b.to_last, dnnl::reorder(b.to_last),
                {{DNNL_ARG_FROM, b.to_last.src_desc()}, {DNNL_ARG_TO, b.to_last.dst_desc()}}),
        pool(b.pool, dnnl::pooling_v2_forward(b.pool),
             {{DNNL_ARG_SRC, b.pool.src_desc()}, {DNNL_ARG_DST, b.pool.dst_desc()}}),
        from_last(
            b.from_last, dnnl::reorder(b.from_last),
            {{DNNL_ARG_FROM, b.from_last.src_desc()}, {DNNL_ARG_TO, b.from_last.dst_desc()}}) {}

  void run(graph::KernelContext& ctx) {
    const std::span<std::byte> ws = ctx.workspace();
    if (ws.size() < plan.total) {
      ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " bytes) is smaller than " +
               std::to_string(plan.total) + " bytes");
    }
    std::byte* src = ws.data() + plan.src_offset;
    std::byte* dst = ws.data() + plan.dst_offset;
    to_last.bind(DNNL_ARG_FROM, ctx.input(0).data);
    to_last.bind(DNNL_ARG_TO, src);
    to_last.execute(ctx);
    pool.bind(DNNL_ARG_SRC, src);
    pool.bind(DNNL_ARG_DST, dst);
    pool.execute(ctx);
    from_last.bind(DNNL_ARG_FROM, dst);
    from_last.bind(DNNL_ARG_TO, ctx.output(0).data);
    from_last.execute(ctx);
  }

 private:
  BytePool plan;
  DnnlState to_last, pool, from_last;
};

// A primitive reading DNNL_ARG_SRC and writing DNNL_ARG_DST (pooling, LRN).
template <class Pd, class Primitive>
std::unique_ptr<DnnlState> src_dst_state(const Pd& pd) {
  return std::make_unique<DnnlState>(
      pd, Primitive(pd),
      std::vector<std::pair<int, memory::desc>>{{DNNL_ARG_SRC, pd.src_desc()},
                                                {DNNL_ARG_DST, pd.dst_desc()}});
}

template <PoolKind kKind>
std::unique_ptr<graph::KernelState> pool_prepare(const graph::KernelContext& ctx) {
  const graph::Node& n = ctx.node();
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  const Pooling p = pooling(n, e, kKind);
  if (const auto pd = onednn_pool(e, p)) {
    return src_dst_state<dnnl::pooling_v2_forward::primitive_desc, dnnl::pooling_v2_forward>(*pd);
  }
  if (const auto b = byte_pool(e, p)) return std::make_unique<BytePoolState>(*b);
  if (!pool_loop_supports(kKind, e.in_dtype[0])) {
    ctx.fail("dtype " + dtype_label(e.in_dtype[0]) + " is not supported");
  }
  return std::make_unique<PoolLoopState>(pool_geometry(n, e, p));
}

template <PoolKind kKind>
uint64_t pool_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& out) {
  const Extents e = extents_of(in, out);
  if (!all_positive(e)) return 0;
  try {
    const Pooling p = pooling(n, e, kKind);
    if (const auto b = byte_pool(e, p)) return b->total;
    const auto pd = onednn_pool(e, p);
    return pd ? pd->scratchpad_desc().get_size() : 0;  // the loop needs no scratch
  } catch (const Error&) {
    return 0;
  }
}

// The 16-bit floats channels-last (oneDNN 2.6 pools no float16): a block of channels at a time,
// combined as pool_plane_2d combines them: the taps in row-major order, the first one kept where
// a NaN is (max compares the 16-bit patterns, which it need not widen), the average widened and
// summed in double and rounded once, so the bytes are the NCHW loop's.
class NhwcPool16State final : public graph::KernelState {
 public:
  explicit NhwcPool16State(const PoolGeometry& g) : geometry(g) {}
  PoolGeometry geometry;
};

// `x > best ? x : best` for the 16-bit floats, on their patterns (exact, so nothing to widen):
// the magnitudes order as integers, a negative one below the positives (-magnitude), the two
// zeros alike, and a NaN (a magnitude above the infinity's) neither greater nor smaller than
// anything, so the earlier element stays. Sixteen lanes as a vector of the compiler's (two of
// SSE2's, one of AVX2's, whatever the copy): a loop over plain integers vectorised into 32-bit
// lanes.
using HalfLanes = int16_t __attribute__((vector_size(32)));

template <class H>
HalfLanes max_patterns(HalfLanes x, HalfLanes best) {
  constexpr int16_t kInfinity = std::is_same_v<H, Float16> ? 0x7C00 : 0x7F80;
  const HalfLanes mx = x & 0x7FFF;
  const HalfLanes mb = best & 0x7FFF;
  const HalfLanes kx = x < 0 ? -mx : mx;
  const HalfLanes kb = best < 0 ? -mb : mb;
  return (mx <= kInfinity) & (mb <= kInfinity) & (kx > kb) ? x : best;
}

template <class H>
uint16_t max_patterns(uint16_t x, uint16_t best) {
  constexpr int kInfinity = std::is_same_v<H, Float16> ? 0x7C00 : 0x7F80;
  const int mx = x & 0x7FFF;
  const int mb = best & 0x7FFF;
  const int kx = (x & 0x8000) != 0 ? -mx : mx;
  const int kb = (best & 0x8000) != 0 ? -mb : mb;
  return mx <= kInfinity && mb <= kInfinity && kx > kb ? x : best;
}

// A kept NaN as the widening loop stores it (core's conversions: float16's one quiet NaN of
// that sign, bfloat16's pattern with the quiet bit set), any other element as it is.
template <class H>
HalfLanes stored(HalfLanes x) {
  constexpr int16_t kInfinity = std::is_same_v<H, Float16> ? 0x7C00 : 0x7F80;
  const HalfLanes quiet = std::is_same_v<H, Float16>
                              ? HalfLanes((x & static_cast<int16_t>(0x8000)) | 0x7E00)
                              : HalfLanes(x | 0x0040);
  return (x & 0x7FFF) > kInfinity ? quiet : x;
}

template <class H>
uint16_t stored(uint16_t x) {
  constexpr int kInfinity = std::is_same_v<H, Float16> ? 0x7C00 : 0x7F80;
  if ((x & 0x7FFF) <= kInfinity) return x;
  return std::is_same_v<H, Float16> ? static_cast<uint16_t>((x & 0x8000) | 0x7E00)
                                    : static_cast<uint16_t>(x | 0x0040);
}

// One output pixel's C channels of a max pool: sixteen channels at a time over every tap (the
// running maximum in a register), in the taps' row-major order. False where the window has more
// taps than the list holds (the widening loop takes those).
template <class H>
bool nhwc_max_pixel_16(const PoolGeometry& g, const H* image, const Taps& th, const Taps& tw,
                       int64_t h0, int64_t w0, int64_t c, H* out) {
  std::array<const uint16_t*, 64> tap;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  size_t taps = 0;
  if ((th.hi - th.lo) * (tw.hi - tw.lo) > static_cast<int64_t>(tap.size())) return false;
  for (int64_t kh = th.lo; kh < th.hi; ++kh) {
    const H* row = image + (h0 + kh * g.dilation[0]) * g.in[1] * c;
    for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
      tap[taps++] = &row[(w0 + kw * g.dilation[1]) * c].bits;
    }
  }
  auto* y = &out->bits;
  if (taps == 0) {  // no input: +0
    std::fill(y, y + c, uint16_t{0});
    return true;
  }
  constexpr int64_t kLanes = sizeof(HalfLanes) / sizeof(int16_t);
  int64_t j = 0;
  for (; j + kLanes <= c; j += kLanes) {
    HalfLanes best;
    std::memcpy(&best, tap[0] + j, sizeof best);
    for (size_t t = 1; t < taps; ++t) {
      HalfLanes x;
      std::memcpy(&x, tap[t] + j, sizeof x);
      best = max_patterns<H>(x, best);
    }
    best = stored<H>(best);
    std::memcpy(y + j, &best, sizeof best);
  }
  for (; j < c; ++j) {
    uint16_t best = tap[0][j];
    for (size_t t = 1; t < taps; ++t) best = max_patterns<H>(tap[t][j], best);
    y[j] = stored<H>(best);
  }
  return true;
}

// One output pixel's C channels, kBlock at a time.
template <class H>
void nhwc_pool_pixel_16(const PoolGeometry& g, const H* image, const Taps& th, const Taps& tw,
                        int64_t h0, int64_t w0, int64_t c, H* out) {
  constexpr int64_t kBlock = 256;
  std::array<float, kBlock> in;    // NOLINT(cppcoreguidelines-pro-type-member-init): written first
  std::array<float, kBlock> best;  // NOLINT(cppcoreguidelines-pro-type-member-init): written first
  std::array<double, kBlock> sum;  // NOLINT(cppcoreguidelines-pro-type-member-init): zeroed first
  const int64_t count = g.include_pad ? th.padded * tw.padded : (th.hi - th.lo) * (tw.hi - tw.lo);
  for (int64_t c0 = 0; c0 < c; c0 += kBlock) {
    const auto w = static_cast<size_t>(std::min(kBlock, c - c0));
    bool first = true;
    std::fill(sum.begin(), sum.begin() + static_cast<ptrdiff_t>(w), 0.0);
    for (int64_t kh = th.lo; kh < th.hi; ++kh) {
      const H* row = image + (h0 + kh * g.dilation[0]) * g.in[1] * c;
      for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
        widen_row(row + (w0 + kw * g.dilation[1]) * c + c0, in.data(), w);
        if (!g.is_max) {
          for (size_t j = 0; j < w; ++j) sum[j] += static_cast<double>(in[j]);
        } else if (first) {
          std::copy(in.begin(), in.begin() + static_cast<ptrdiff_t>(w), best.begin());
        } else {
          for (size_t j = 0; j < w; ++j) best[j] = in[j] > best[j] ? in[j] : best[j];
        }
        first = false;
      }
    }
    if (!g.is_max) {
      for (size_t j = 0; j < w; ++j)
        best[j] = count > 0 ? static_cast<float>(sum[j] / static_cast<double>(count)) : 0.0F;
    } else if (first) {
      std::fill(best.begin(), best.begin() + static_cast<ptrdiff_t>(w), 0.0F);  // no input: +0
    }
    narrow_row(best.data(), out + c0, w);
  }
}

template <class H>
void nhwc_pool_16(graph::KernelContext& ctx, const NhwcPool16State& st) {
  const PoolGeometry& g = st.geometry;
  const graph::TensorRef& xt = ctx.input(0);  // [N, H, W, C]
  const int64_t c = xt.dim(3);
  const H* x = xt.as<const H>();
  H* y = ctx.output(0).as<H>();
  parallel_for(
      ctx.threads(), static_cast<size_t>(xt.dim(0) * g.out[0]),
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          for (size_t r = begin; r < end; ++r) {
            const int64_t n = static_cast<int64_t>(r) / g.out[0];
            const int64_t oh = static_cast<int64_t>(r) % g.out[0];
            const Taps th = taps(g, 0, oh);
            const int64_t h0 = oh * g.stride[0] - g.pad_begin[0];
            for (int64_t ow = 0; ow < g.out[1]; ++ow) {
              const H* image = x + n * g.in_size * c;
              const Taps tw = taps(g, 1, ow);
              const int64_t w0 = ow * g.stride[1] - g.pad_begin[1];
              H* out = y + (static_cast<int64_t>(r) * g.out[1] + ow) * c;
              // Direct calls, which `flatten` inlines into the wide copies.
              if (!g.is_max || !nhwc_max_pixel_16(g, image, th, tw, h0, w0, c, out)) {
                nhwc_pool_pixel_16(g, image, th, tw, h0, w0, c, out);
              }
            }
          }
        });
      },
      1);
}

void run_nhwc_pool_16(graph::KernelContext& ctx, const NhwcPool16State& st) {
  const DType t = ctx.input(0).dtype;
  if (t == DType::float16) return nhwc_pool_16<Float16>(ctx, st);
  if (t == DType::bfloat16) return nhwc_pool_16<BFloat16>(ctx, st);
  fail_dtype(ctx, t);
}

void run_pool(graph::KernelContext& ctx) {
  if (auto* h = dynamic_cast<NhwcPool16State*>(ctx.state())) return run_nhwc_pool_16(ctx, *h);
  if (auto* bytes = dynamic_cast<BytePoolState*>(ctx.state())) return bytes->run(ctx);
  if (auto* st = dynamic_cast<DnnlState*>(ctx.state())) {
    st->bind(DNNL_ARG_SRC, ctx.input(0).data);
    st->bind(DNNL_ARG_DST, ctx.output(0).data);
    st->execute(ctx);
    return;
  }
  auto* loop = prepared_state<PoolLoopState>(ctx);
  if (loop == nullptr) return;
  const PoolGeometry& g = loop->geometry;
  switch (ctx.input(0).dtype) {
    case DType::float32:
      return pool_loop<float>(ctx, g);
    case DType::float64:
      return pool_loop<double>(ctx, g);
    case DType::float16:
      return pool_loop<Float16>(ctx, g);
    case DType::bfloat16:
      return pool_loop<BFloat16>(ctx, g);
    case DType::int8:
      return pool_loop<int8_t>(ctx, g);
    case DType::uint8:
      return pool_loop<uint8_t>(ctx, g);
    default:
      ctx.fail("dtype " + dtype_label(ctx.input(0).dtype) + " is not supported");
  }
}

// ---- MaxUnpool: X's values written where MaxPool's indices say, zeros elsewhere. The indices
// are flat positions in the unpooled tensor the window attributes give ([N, C, (in - 1) stride
// + kernel - pads...]); with an output_shape input that tensor sits at the start of each axis of
// the output, as ONNX's reference pads it. An index outside it fails naming the element.

template <class T>
void max_unpool(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& idx = ctx.input(1);
  graph::TensorRef& y = ctx.output(0);
  if (idx.dtype != DType::int64 || idx.numel() != x.numel()) {
    ctx.fail("I must be int64 with X's extents");
  }
  const size_t nd = x.rank() >= 2 ? x.rank() - 2 : 0;
  if (nd == 0 || nd > kMaxSpatial || y.rank() != x.rank()) {
    ctx.fail("X and Y must be [N, C, spatial...] alike, at most 8 spatial axes");
  }
  // Fixed arrays: a kernel run allocates nothing.
  Coords kernel{}, strides{}, plain{}, out{};
  std::array<int64_t, 2 * kMaxSpatial> pads{};
  if (attr_ints_into(ctx, "kernel_shape", kernel).value_or(0) != nd) {
    ctx.fail("kernel_shape must give every spatial axis");
  }
  if (attr_ints_into(ctx, "strides", strides).value_or(nd) != nd ||
      attr_ints_into(ctx, "pads", pads).value_or(2 * nd) != 2 * nd) {
    ctx.fail("strides or pads of the wrong length");
  }
  if (ctx.attribute("strides") == nullptr) std::fill_n(strides.begin(), nd, 1);
  // The unpooled plane's extents, and the output's.
  int64_t plain_size = 1, out_size = 1;
  for (size_t d = 0; d < nd; ++d) {
    plain[d] = (x.dim(d + 2) - 1) * strides[d] + kernel[d] - pads[d] - pads[d + nd];
    out[d] = y.dim(d + 2);
    if (plain[d] <= 0 || plain[d] > out[d]) {
      ctx.fail("the output's axis " + std::to_string(d + 2) + " (" + std::to_string(out[d]) +
               ") is smaller than the unpooled " + std::to_string(plain[d]));
    }
    plain_size *= plain[d];
    out_size *= out[d];
  }
  const int64_t planes = x.dim(0) * x.dim(1);
  const T* in = x.as<const T>();
  const int64_t* at = idx.as<const int64_t>();
  T* dst = y.as<T>();
  std::fill(dst, dst + y.numel(), T{});
  for (size_t i = 0; i < x.numel(); ++i) {
    if (at[i] < 0 || at[i] >= planes * plain_size) {
      ctx.fail("I[" + std::to_string(i) + "] = " + std::to_string(at[i]) +
               " is outside the unpooled tensor's " + std::to_string(planes * plain_size) +
               " elements");
    }
    int64_t within = at[i] % plain_size;
    int64_t flat = 0, scale = 1;
    for (size_t d = nd; d-- > 0;) {
      flat += (within % plain[d]) * scale;
      within /= plain[d];
      scale *= out[d];
    }
    dst[at[i] / plain_size * out_size + flat] = in[i];
  }
}

void run_max_unpool(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { max_unpool<decltype(tag)>(ctx); });
}

// ---- NhwcMaxPool, NhwcAveragePool: the pools on channels-last tensors [N, H, W, C]
// (graph::to_channels_last), oneDNN's kernels on the layout as it lies. The plain loop has no
// such layout, so the runtime moves only the pools oneDNN takes (nhwc_pool_runs).

dnnl::pooling_v2_forward::primitive_desc nhwc_pool_pd(const graph::Node& n, const Extents& e,
                                                      PoolKind kind) {
  const Extents nchw = channels_first(e);
  const Pooling p = pooling(n, nchw, kind);
  const bool bytes = kind == PoolKind::max && !e.has_out(1) &&
                     (e.in_dtype[0] == DType::int8 || e.in_dtype[0] == DType::uint8);
  if (!bytes && !pool_uses_onednn(nchw, p)) {
    node_fail(n, "oneDNN cannot pool this window channels-last");
  }
  return make_pd(n, "pooling", [&] { return pool_pd(nchw, p, true); });
}

// An average that counts padding, with ceil_mode, would count the end padding oneDNN adds.
bool nhwc_pool_runs(const graph::Node& n) {
  return node_int(n, "count_include_pad", 0) == 0 || node_int(n, "ceil_mode", 0) == 0;
}

template <PoolKind kKind>
std::unique_ptr<graph::KernelState> nhwc_pool_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  if (is_16bit(e.in_dtype[0])) {
    const Extents nchw = channels_first(e);
    if (nchw.in[0].size() != 4 || e.has_out(1)) {
      ctx.fail("pools 16-bit floats channels-last in 2-D without indices only");
    }
    return std::make_unique<NhwcPool16State>(
        pool_geometry(ctx.node(), nchw, pooling(ctx.node(), nchw, kKind)));
  }
  return src_dst_state<dnnl::pooling_v2_forward::primitive_desc, dnnl::pooling_v2_forward>(
      nhwc_pool_pd(ctx.node(), e, kKind));
}

template <PoolKind kKind>
uint64_t nhwc_pool_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                             const std::vector<graph::ConcreteTensor>& out) {
  if (!in.empty() && is_16bit(in[0].dtype)) return 0;  // NhwcPool16State needs none
  return scratchpad_of(
      [](const graph::Node& node, const Extents& e) { return nhwc_pool_pd(node, e, kKind); }, n, in,
      out);
}

// ---- GlobalAveragePool, GlobalMaxPool: one reduction per (n, c) plane

template <class T>
void global_pool(graph::KernelContext& ctx, bool is_max) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail("the input must have rank 2 or more");
  const size_t planes = static_cast<size_t>(x.dim(0) * x.dim(1));
  if (planes == 0) return;
  const size_t size = x.numel() / planes;
  const T* in = x.as<const T>();
  T* out = ctx.output(0).as<T>();
  parallel_for(
      ctx.threads(), planes,
      [&](size_t begin, size_t end) {
        if (is_max) {
          for (size_t p = begin; p < end; ++p) {
            const T* plane = in + p * size;
            out[p] = size == 0 ? T{} : *std::max_element(plane, plane + size);
          }
          return;
        }
        // Each mean rounded once (channel_means.hpp's plane_total).
        with_wide_vectors([&] {
          for (size_t p = begin; p < end; ++p) {
            const double sum = plane_total(in + p * size, size);
            out[p] = size == 0 ? T{} : narrow<T>(sum / static_cast<double>(size));
          }
        });
      },
      1);
}

template <bool kMax>
void run_global_pool(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { global_pool<decltype(tag)>(ctx, kMax); });
}

// NhwcGlobalAveragePool: x [N, H, W, C] -> y [N, 1, 1, C], each channel's mean
// (channel_means.hpp), in float32 or a 16-bit float.
template <class T>
void nhwc_global_average_pool(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  nhwc_channel_means(ctx.threads(), x.as<const T>(), x.dim(0), x.dim(1) * x.dim(2), x.dim(3),
                     ctx.output(0).as<T>());
}

void run_nhwc_global_average_pool(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() != 4) ctx.fail("reads [N, H, W, C] tensors");
  dispatch_with_16bit<Float32Types>(
      ctx, x.dtype, [&](auto tag) { nhwc_global_average_pool<decltype(tag)>(ctx); });
}

// ---- LRN across channels: x [N, C, D...] seen as [N, C, prod(D), 1]; the window over channels
// does not care how the rest is shaped.

dnnl::lrn_forward::primitive_desc lrn_pd(const graph::Node& n, const Extents& e) {
  require_float(n, e, 1);
  const auto& x = e.in[0];
  if (x.size() < 2) node_fail(n, "the input must have rank 2 or more");
  int64_t rest = 1;
  for (size_t i = 2; i < x.size(); ++i) rest *= x[i];
  const int64_t size = node_int(n, "size", 0);
  if (size <= 0) node_fail(n, "attribute 'size' must be positive");
  const memory::desc data = plain_desc({x[0], x[1], rest, 1});
  return make_pd(n, "LRN", [&] {
    const dnnl::lrn_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels, data, size,
        node_float(n, "alpha", 1e-4f), node_float(n, "beta", 0.75f), node_float(n, "bias", 1.0f));
    return dnnl::lrn_forward::primitive_desc(d, user_scratchpad(), cpu_engine());
  });
}

std::unique_ptr<graph::KernelState> lrn_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  return src_dst_state<dnnl::lrn_forward::primitive_desc, dnnl::lrn_forward>(lrn_pd(ctx.node(), e));
}

uint64_t lrn_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& out) {
  return scratchpad_of(lrn_pd, n, in, out);
}

void run_src_dst(graph::KernelContext& ctx) {
  DnnlState* st = prepared_state(ctx);
  if (st == nullptr) return;
  st->bind(DNNL_ARG_SRC, ctx.input(0).data);
  st->bind(DNNL_ARG_DST, ctx.output(0).data);
  st->execute(ctx);
}

void set(graph::OpSchema& row, graph::KernelFn kernel, graph::PrepareFn prepare = nullptr,
         graph::WorkspaceFn workspace = nullptr) {
  row.kernel = kernel;
  row.prepare = prepare;
  row.workspace = workspace;
}

}  // namespace

void register_conv_pool(graph::OpRegistry& r) {
  set(r.row("", "Conv"), run_conv, conv_prepare, conv_workspace);
  r.row("", "Conv").epilogue_dtypes = DTypeSet{DType::float32};
  r.row("", "Conv").packed = conv_packed;
  r.row("", "Conv").packed_inputs = 0b10;  // W
  // Every 2-D convolution runs channels-last (graph::to_channels_last): oneDNN's kernels there
  // beat both its plain ones and the reorders of the preferred layouts, and keep a chain of
  // convolutions in one layout.
  r.row("", "Conv").channels_last = "NhwcConv";
  r.row("", "Conv").channels_last_alone = true;
  graph::OpSchema& nhwc_conv = r.row("footprint", "NhwcConv");
  set(nhwc_conv, run_nhwc_conv, nhwc_conv_prepare, nhwc_conv_workspace);
  nhwc_conv.packed = nhwc_conv_packed;
  nhwc_conv.packed_inputs = 0b10;
  nhwc_conv.epilogue_dtypes = DTypeSet{DType::float32};
  nhwc_conv.rows_at_bound = true;
  set(r.row("", "ConvTranspose"), run_weighted, deconv_prepare, deconv_workspace);
  set(r.row("", "MaxPool"), run_pool, pool_prepare<PoolKind::max>, pool_workspace<PoolKind::max>);
  set(r.row("", "LpPool"), run_pool, pool_prepare<PoolKind::lp>, pool_workspace<PoolKind::lp>);
  r.row("", "MaxUnpool").kernel = run_max_unpool;
  set(r.row("", "AveragePool"), run_pool, pool_prepare<PoolKind::average>,
      pool_workspace<PoolKind::average>);
  set(r.row("", "GlobalAveragePool"), run_global_pool<false>);
  set(r.row("", "GlobalMaxPool"), run_global_pool<true>);
  set(r.row("", "LRN"), run_src_dst, lrn_prepare, lrn_workspace);
  set(r.row("footprint", "NhwcMaxPool"), run_pool, nhwc_pool_prepare<PoolKind::max>,
      nhwc_pool_workspace<PoolKind::max>);
  set(r.row("footprint", "NhwcAveragePool"), run_pool, nhwc_pool_prepare<PoolKind::average>,
      nhwc_pool_workspace<PoolKind::average>);
  set(r.row("footprint", "NhwcGlobalAveragePool"), run_nhwc_global_average_pool);
  // Float32 carriers of 16-bit values: each mean is the same double sum, narrowed through float
  // as the 16-bit kernel narrows it (float16.hpp's narrow), then rounded by the runtime.
  r.row("footprint", "NhwcGlobalAveragePool").float32_carriers = graph::Float32Carriers::whole;
  r.row("", "MaxPool").channels_last = "NhwcMaxPool";
  r.row("", "AveragePool").channels_last = "NhwcAveragePool";
  r.row("", "AveragePool").channels_last_runs = nhwc_pool_runs;
  r.row("", "GlobalAveragePool").channels_last = "NhwcGlobalAveragePool";
  // Each image of the batch is computed from that image alone.
  for (const char* op : {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LRN"})
    r.row("", op).rows_at_bound = true;
  for (const char* op : {"NhwcMaxPool", "NhwcAveragePool"})
    r.row("footprint", op).rows_at_bound = true;
  // oneDNN's primitives here are built for float32 (require_float); the pooling loops also take
  // float64, and MaxPool's 8-bit integers (pool_loop_supports).
  const DTypeSet f32{DType::float32};
  for (const char* op : {"Conv", "ConvTranspose", "LRN"}) r.row("", op).kernel_dtypes = f32;
  r.row("footprint", "NhwcConv").kernel_dtypes = f32;
  // Channels-last pools: oneDNN's on float32, their own loops on the 16-bit floats
  // (NhwcPool16State, nhwc_channel_means), oneDNN's 8-bit max pooling a jit kernel channels-last
  // only (BytePool).
  const DTypeSet f32_16 = dtypes_with_16bit(Float32Types{});
  for (const char* op : {"NhwcAveragePool", "NhwcGlobalAveragePool"})
    r.row("footprint", op).kernel_dtypes = f32_16;
  r.row("footprint", "NhwcMaxPool").kernel_dtypes = f32_16 | DTypeSet{DType::int8, DType::uint8};
  const DTypeSet reals = dtypes_with_16bit(RealTypes{});
  for (const char* op :
       {"AveragePool", "LpPool", "MaxUnpool", "GlobalAveragePool", "GlobalMaxPool"})
    r.row("", op).kernel_dtypes = reals;
  r.row("", "MaxPool").kernel_dtypes = reals | DTypeSet{DType::int8, DType::uint8};
  // Float16 and bfloat16 convolutions run the float32 kernels on float32 copies
  // (through_float32.hpp: oneDNN 2.6 has no float16 convolution without AVX512-FP16); the
  // weights and bias must be constants, converted once when preparing.
  through_float32<run_conv, conv_prepare, conv_workspace, conv_packed, 0b110>(r.row("", "Conv"));
  through_float32<run_nhwc_conv, nhwc_conv_prepare, nhwc_conv_workspace, nhwc_conv_packed, 0b110>(
      nhwc_conv);
}

}  // namespace footprint::runtime::kernels
