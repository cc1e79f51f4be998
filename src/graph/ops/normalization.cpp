// Normalisations (Batch, Instance, Layer, RMS, Group, Lp, MeanVariance), the Softmax family and
// Dropout: the main output keeps the input's type and shape; statistics outputs are per channel.
#include "families.hpp"
#include "footprint/graph/ops/dropout_mode.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

void infer_same(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

// Y, then running (opset 14+) or saved (before) statistics of shape [C].
void infer_batch_norm(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
  const Shape& x = ctx.input(0).shape;
  const Dim channels = x.ranked && x.rank() > 1 ? x.dims[1] : Dim::unknown();
  const DType stats = ctx.opset >= 14 && ctx.has_input(3) ? ctx.input(3).dtype : ctx.input(0).dtype;
  for (size_t i = 1; i < ctx.output_count(); ++i) set_output(r, i, stats, ranked({channels}));
}

// footprint::FoldBatchNorm (graph::fuse, a Conv then a BatchNormalization;
// fold_channel_affine.cpp): W's shape, then the bias, one entry per output channel (W's first
// axis).
void infer_fold_batch_norm(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
  const Shape& w = ctx.input(0).shape;
  const Dim channels = w.ranked && w.rank() > 0 ? w.dims[0] : Dim::unknown();
  set_output(r, 1, ctx.input(0).dtype, ranked({channels}));
}

// Y, then Mean and InvStdDev in stash_type, reduced over the axes from `axis` on.
void infer_layer_norm(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
  const Shape& x = ctx.input(0).shape;
  const auto stash = static_cast<DType>(ctx.attr_int("stash_type", 1));
  Shape stats = x;
  if (x.ranked) {
    const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank());
    for (size_t d = axis; d < x.rank(); ++d) stats.dims[d] = Dim::known(1);
  }
  set_output(r, 1, stash, stats);
  set_output(r, 2, stash, stats);
}

// RMSNormalization (opset 23): Y has X's shape and Scale's type (ONNX's V, which may differ
// from X's T); the axis must be one of X's.
void infer_rms_norm(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  if (x.ranked) normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank());
  set_output(r, 0, ctx.input(1).dtype, x);
}

// Output, then the mask: bool from opset 10, the input's dtype before.
void infer_dropout(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
  const TensorType& x = ctx.input(0);
  set_output(r, 1, ctx.opset >= 10 ? DType::boolean : x.dtype, x.shape);
  // In inference Dropout is the identity (a known input stays known); in training it drops at
  // random, and its outputs are never constants.
  const DropoutMode mode = DropoutMode::decode(ctx.opset);
  std::optional<int64_t> training = 0;
  if (mode.training_input >= 0 && ctx.has_input(static_cast<size_t>(mode.training_input))) {
    const auto t = ctx.input_ints(static_cast<size_t>(mode.training_input));
    training = t && t->size() == 1 ? std::optional((*t)[0]) : std::nullopt;
  }
  if (DropoutMode::training(training)) {
    r.random = true;
  } else if (const KnownValue* v = ctx.value(0)) {
    set_value(r, 0, *v);
  }
}

void infer_softmax(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  const int64_t fallback = ctx.opset >= 13 ? -1 : 1;
  if (x.ranked && x.rank() > 0) normalize_axis(ctx, ctx.attr_int("axis", fallback), x.rank());
  same_as_input(ctx, r);
}

}  // namespace

void register_normalization(OpRegistry& r) {
  r.add(op("BatchNormalization", 5, 5, infer_batch_norm, 1, 5));
  // Inference on channels-last tensors [N, H, W, C] (graph::to_channels_last).
  OpSchema nhwc_bn =
      op("NhwcBatchNormalization", 5, 5, [](const InferContext& ctx, InferResult& out) {
        infer_channels_last(ctx, out, infer_batch_norm, 1);
      });
  nhwc_bn.domain = "footprint";
  r.add(nhwc_bn);
  // W, scale, B, mean, var and the convolution's bias if it has one -> W', bias'.
  OpSchema fold_bn = op("FoldBatchNorm", 5, 6, infer_fold_batch_norm, 2, 2);
  fold_bn.domain = "footprint";
  r.add(fold_bn);
  // X [M, ...] * scale + shift, both per slice of X's first axis ([M] in any shape, or one
  // element), each optional: a folded Mul or Add's effect on a host's weights or bias.
  OpSchema affine = op("ChannelAffine", 1, 3, infer_same);
  affine.domain = "footprint";
  r.add(affine);
  r.add(op("InstanceNormalization", 3, 3, infer_same));
  r.add(op("LayerNormalization", 2, 3, infer_layer_norm, 1, 3));
  r.add(op("RMSNormalization", 2, 2, infer_rms_norm));
  r.add(op("GroupNormalization", 3, 3, infer_same));
  r.add(op("LpNormalization", 1, 1, infer_same));
  r.add(op("MeanVarianceNormalization", 1, 1, infer_same));
  r.add(op("Softmax", 1, 1, infer_softmax));
  r.add(op("LogSoftmax", 1, 1, infer_softmax));
  r.add(op("Hardmax", 1, 1, infer_softmax));
  OpSchema dropout = view("Dropout", 1, 3, infer_dropout);
  dropout.max_outputs = 2;
  dropout.elementwise = true;  // y = x * mask
  r.add(dropout);
}

}  // namespace footprint::graph::ops
