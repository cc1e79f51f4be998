#include "epilogue.hpp"

#include <algorithm>

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
  if (epilogues.size() == 1) {  // the usual: the op chosen once, not at each vector
    const graph::Epilogue& e = epilogues[0];
    with_epilogue_op(e.op, [&](auto op) {
      simd::map(y, y, n, [&](auto v) { return apply_epilogue_as<op.value>(v, e.alpha, e.beta); });
    });
    return;
  }
  simd::map(y, y, n, [&](auto v) {
    for (const graph::Epilogue& e : epilogues) v = apply_epilogue(e, v);
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
