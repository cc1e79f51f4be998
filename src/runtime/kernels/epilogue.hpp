#pragma once
// Node::epilogues (graph/epilogue.hpp) in the kernels that take them (Conv, MatMul, Gemm): as
// oneDNN post-ops where oneDNN has every one of the node's epilogues, so they are applied while
// the output is in registers; else after the kernel's own work, vectorised, over the output
// (or over each plane as a kernel of ours writes it).
//
//   auto [pd, applied] = with_epilogues(node, [&](bool epilogues) { return make(epilogues); });
//   ...                                 // make() calls append_epilogues(node, ops) when asked
//   finish_epilogues(ctx, applied);     // after the primitive: applies what it did not
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "dnnl_util.hpp"
#include "footprint/graph/graph.hpp"
#include "simd_math.hpp"

namespace footprint::runtime::kernels {

// Whether oneDNN has every one of n's epilogues as a post-op.
bool epilogues_in_post_ops(const graph::Node& n);
// Appends n's epilogues to `ops` when epilogues_in_post_ops(n).
void append_epilogues(const graph::Node& n, dnnl::post_ops& ops);
// user_scratchpad() with n's epilogues as post-ops where they can be.
dnnl::primitive_attr epilogue_attr(const graph::Node& n);

// A primitive descriptor for node n, `build(true)` with its epilogues as post-ops, or
// `build(false)` without them where they cannot be, or where oneDNN would then run its gemm-based
// kernels: those apply post-ops in a slow pass of their own (a MobileNetV2 1x1 convolution with
// ReLU6 took 7 ms there, 0.5 ms and a 0.1 ms pass of ours apart). A pure function of the node and
// its extents, so the scratch sized when planning is the scratch of the primitive prepared.
// Returns the descriptor and whether it applies the epilogues.
template <class Build>
auto with_epilogues(const graph::Node& n, Build&& build) {
  using Pd = decltype(build(true));
  if (n.epilogues.empty() || !epilogues_in_post_ops(n))
    return std::pair<Pd, bool>(build(false), false);
  Pd pd = build(true);
  if (std::string_view(pd.impl_info_str()).find("gemm") == std::string_view::npos) {
    return std::pair<Pd, bool>(std::move(pd), true);
  }
  return std::pair<Pd, bool>(build(false), false);
}

// Epilogue op `Op` with parameters alpha and beta on a vector of floats (simd_math.hpp's): the
// one definition of what each op computes outside oneDNN.
template <graph::EpilogueOp Op, class V>
V apply_epilogue_as(V v, float alpha, float beta) {
  using graph::EpilogueOp;
  using simd::splat;
  if constexpr (Op == EpilogueOp::relu) {
    return v > splat<V>(0) ? v : splat<V>(0);
  } else if constexpr (Op == EpilogueOp::leaky_relu) {
    return v < splat<V>(0) ? v * alpha : v;
  } else if constexpr (Op == EpilogueOp::clip) {
    const V lo = v < splat<V>(alpha) ? splat<V>(alpha) : v;
    return lo > splat<V>(beta) ? splat<V>(beta) : lo;
  } else if constexpr (Op == EpilogueOp::sigmoid) {
    return simd::sigmoid(v);
  } else if constexpr (Op == EpilogueOp::tanh) {
    return simd::tanh(v);
  } else if constexpr (Op == EpilogueOp::swish) {
    return v * simd::sigmoid(v * alpha);
  } else if constexpr (Op == EpilogueOp::hard_sigmoid) {
    const V t = v * alpha + beta;
    const V lo = t < splat<V>(0) ? splat<V>(0) : t;
    return lo > splat<V>(1) ? splat<V>(1) : lo;
  } else if constexpr (Op == EpilogueOp::hard_swish) {
    const V t = v * (1.0F / 6) + 0.5F;
    const V lo = t < splat<V>(0) ? splat<V>(0) : t;
    return v * (lo > splat<V>(1) ? splat<V>(1) : lo);
  } else if constexpr (Op == EpilogueOp::gelu_erf) {
    return 0.5F * v * (1.0F + simd::erf(v * 0.7071067811865476F));
  } else {
    static_assert(Op == EpilogueOp::gelu_tanh);
    return 0.5F * v * (1.0F + simd::tanh(0.7978845608028654F * (v + 0.044715F * v * v * v)));
  }
}

// f(std::integral_constant<EpilogueOp, op>{}): a loop inside f applies apply_epilogue_as<op>
// without choosing the op at each vector.
template <class F>
decltype(auto) with_epilogue_op(graph::EpilogueOp op, F&& f) {
  using graph::EpilogueOp;
  switch (op) {
    case EpilogueOp::relu:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::relu>{});
    case EpilogueOp::leaky_relu:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::leaky_relu>{});
    case EpilogueOp::clip:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::clip>{});
    case EpilogueOp::sigmoid:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::sigmoid>{});
    case EpilogueOp::tanh:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::tanh>{});
    case EpilogueOp::swish:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::swish>{});
    case EpilogueOp::hard_sigmoid:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::hard_sigmoid>{});
    case EpilogueOp::hard_swish:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::hard_swish>{});
    case EpilogueOp::gelu_erf:
      return f(std::integral_constant<EpilogueOp, EpilogueOp::gelu_erf>{});
    case EpilogueOp::gelu_tanh:
      break;
  }
  return f(std::integral_constant<EpilogueOp, EpilogueOp::gelu_tanh>{});
}

// Epilogue e on a vector of floats.
template <class V>
V apply_epilogue(const graph::Epilogue& e, V v) {
  return with_epilogue_op(e.op,
                          [&](auto op) { return apply_epilogue_as<op.value>(v, e.alpha, e.beta); });
}

// y[i] = e_k(...e_1(y[i])) for n floats.
void apply_epilogues(std::span<const graph::Epilogue> epilogues, float* y, size_t n);
// Applies the node's epilogues to output 0 unless the primitive did (`applied`): a kernel's last
// call.
void finish_epilogues(graph::KernelContext& ctx, bool applied);

}  // namespace footprint::runtime::kernels
