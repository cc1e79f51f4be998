// The com.microsoft ops onnxruntime's transformers optimizer and model builder write where they
// fuse a transformer's pieces: SkipLayerNormalization and SkipSimplifiedLayerNormalization (a
// residual add, a bias and a layer or RMS norm), SimplifiedLayerNormalization (RMS norm, in the
// ONNX domain as onnxruntime registers it), BiasGelu, FastGelu, Gelu and QuickGelu. Each output 0
// has input 0's type and shape.
#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// The statistics of a norm over the last axis: input 0's shape with that axis 1, in float.
Shape row_statistics(const Shape& x) {
  Shape s = x;
  if (s.ranked && s.rank() > 0) s.dims.back() = Dim::known(1);
  return s;
}

// output, mean, inv_std_var, input_skip_bias_sum.
void infer_skip_norm(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  same_as_input(ctx, r);
  set_output(r, 1, DType::float32, row_statistics(x.shape));
  set_output(r, 2, DType::float32, row_statistics(x.shape));
  set_output(r, 3, x.dtype, x.shape);
}

// Y, then inv_std_var in stash_type (the normalised axes from `axis` kept as 1).
void infer_simplified_norm(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  same_as_input(ctx, r);
  Shape stats = x.shape;
  if (x.shape.ranked) {
    const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.shape.rank());
    for (size_t d = axis; d < x.shape.rank(); ++d) stats.dims[d] = Dim::known(1);
  }
  set_output(r, 1, static_cast<DType>(ctx.attr_int("stash_type", 1)), stats);
}

void infer_same(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

}  // namespace

void register_contrib_transformer(OpRegistry& r) {
  r.add(contrib(op("SkipLayerNormalization", 3, 5, infer_skip_norm, 1, 4)));
  r.add(contrib(op("SkipSimplifiedLayerNormalization", 3, 4, infer_skip_norm, 1, 4)));
  r.add(op("SimplifiedLayerNormalization", 2, 2, infer_simplified_norm, 1, 2));
  r.add(contrib(op("BiasGelu", 2, 2, infer_same)));
  r.add(contrib(op("FastGelu", 1, 2, infer_same)));
  r.add(contrib(op("Gelu", 1, 1, infer_same)));
  r.add(contrib(op("QuickGelu", 1, 1, infer_same)));
}

}  // namespace footprint::graph::ops
