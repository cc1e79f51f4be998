// Loss functions: per-element losses with reduction "none", a scalar otherwise.
#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

Shape reduced(const InferContext& ctx, const Shape& per_element) {
  return ctx.attr_string("reduction", "mean") == "none" ? per_element : ranked({});
}

// NegativeLogLikelihoodLoss(input [N, C, d...], target [N, d...], weight [C]).
void infer_nll(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, ctx.input(0).dtype, reduced(ctx, ctx.input(1).shape));
}

// SoftmaxCrossEntropyLoss(scores [N, C, d...], labels [N, d...], weights) -> loss, log_prob.
void infer_softmax_cross_entropy(const InferContext& ctx, InferResult& r) {
  const TensorType& scores = ctx.input(0);
  set_output(r, 0, scores.dtype, reduced(ctx, ctx.input(1).shape));
  set_output(r, 1, scores.dtype, scores.shape);
}

}  // namespace

void register_losses(OpRegistry& r) {
  r.add(op("NegativeLogLikelihoodLoss", 2, 3, infer_nll));
  r.add(op("SoftmaxCrossEntropyLoss", 2, 3, infer_softmax_cross_entropy, 1, 2));
}

}  // namespace footprint::graph::ops
