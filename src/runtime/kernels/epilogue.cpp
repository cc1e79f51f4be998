#include "epilogue.hpp"

#include <algorithm>

#include "simd_math.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::EpilogueOp;

// oneDNN 2.6 has no hard sigmoid, and clips as max(lo, min(hi, x)), which differs from ONNX's
// min(max(x, lo), hi) when lo > hi.
bool has_post_op(const graph::Epilogue& e) {
  if (e.op == EpilogueOp::hard_sigmoid) return false;
  return e.op != EpilogueOp::clip || e.alpha <= e.beta;
}

dnnl::algorithm algorithm_of(EpilogueOp op) {
  switch (op) {
    case EpilogueOp::relu:
    case EpilogueOp::leaky_relu:
      return dnnl::algorithm::eltwise_relu;
    case EpilogueOp::clip:
      return dnnl::algorithm::eltwise_clip;
    case EpilogueOp::sigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case EpilogueOp::tanh:
      return dnnl::algorithm::eltwise_tanh;
    case EpilogueOp::swish:
      return dnnl::algorithm::eltwise_swish;
    case EpilogueOp::hard_swish:
      return dnnl::algorithm::eltwise_hardswish;
    case EpilogueOp::gelu_erf:
      return dnnl::algorithm::eltwise_gelu_erf;
    case EpilogueOp::gelu_tanh:
      return dnnl::algorithm::eltwise_gelu_tanh;
    case EpilogueOp::hard_sigmoid:
      break;
  }
  return dnnl::algorithm::undef;
}

template <class V>
V apply_vector(const graph::Epilogue& e, V v) {
  using simd::splat;
  switch (e.op) {
    case EpilogueOp::relu:
      return v > splat<V>(0) ? v : splat<V>(0);
    case EpilogueOp::leaky_relu:
      return v < splat<V>(0) ? v * e.alpha : v;
    case EpilogueOp::clip: {
      const V lo = v < splat<V>(e.alpha) ? splat<V>(e.alpha) : v;
      return lo > splat<V>(e.beta) ? splat<V>(e.beta) : lo;
    }
    case EpilogueOp::sigmoid:
      return simd::sigmoid(v);
    case EpilogueOp::tanh:
      return simd::tanh(v);
    case EpilogueOp::swish:
      return v * simd::sigmoid(v * e.alpha);
    case EpilogueOp::hard_sigmoid: {
      const V t = v * e.alpha + e.beta;
      const V lo = t < splat<V>(0) ? splat<V>(0) : t;
      return lo > splat<V>(1) ? splat<V>(1) : lo;
    }
    case EpilogueOp::hard_swish: {
      const V t = v * (1.0F / 6) + 0.5F;
      const V lo = t < splat<V>(0) ? splat<V>(0) : t;
      return v * (lo > splat<V>(1) ? splat<V>(1) : lo);
    }
    case EpilogueOp::gelu_erf:
      return 0.5F * v * (1.0F + simd::erf(v * 0.7071067811865476F));
    case EpilogueOp::gelu_tanh:
      return 0.5F * v * (1.0F + simd::tanh(0.7978845608028654F * (v + 0.044715F * v * v * v)));
  }
  return v;
}

}  // namespace

bool epilogues_in_post_ops(const graph::Node& n) {
  return std::all_of(n.epilogues.begin(), n.epilogues.end(), has_post_op);
}

void append_epilogues(const graph::Node& n, dnnl::post_ops& ops) {
  if (!epilogues_in_post_ops(n)) return;
  for (const graph::Epilogue& e : n.epilogues) {
    ops.append_eltwise(1.0F, algorithm_of(e.op), e.alpha, e.beta);
  }
}

dnnl::primitive_attr epilogue_attr(const graph::Node& n) {
  dnnl::primitive_attr attr = user_scratchpad();
  if (n.epilogues.empty()) return attr;
  dnnl::post_ops ops;
  append_epilogues(n, ops);
  attr.set_post_ops(ops);
  return attr;
}

void apply_epilogues(std::span<const graph::Epilogue> epilogues, float* y, size_t n) {
  if (epilogues.empty() || n == 0) return;
  simd::map(y, y, n, [&](auto v) {
    for (const graph::Epilogue& e : epilogues) v = apply_vector(e, v);
    return v;
  });
}

void finish_epilogues(graph::KernelContext& ctx, bool applied) {
  const graph::Node& n = ctx.node();
  if (n.epilogues.empty() || applied) return;
  graph::TensorRef& y = ctx.output(0);
  apply_epilogues(n.epilogues, y.as<float>(), y.numel());
}

}  // namespace footprint::runtime::kernels
