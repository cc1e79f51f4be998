// The com.microsoft ops onnxruntime's transformers optimizer and model builder write where they
// fuse a transformer's pieces: SkipLayerNormalization and SkipSimplifiedLayerNormalization (a
// residual add, a bias and a layer or RMS norm), SimplifiedLayerNormalization (RMS norm, in the
// ONNX domain as onnxruntime registers it), BiasGelu, FastGelu, Gelu and QuickGelu (each output 0
// has input 0's type and shape), EmbedLayerNormalization and its Attention (BERT's embeddings and
// self-attention, without a key/value cache).
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

// EmbedLayerNormalization(input_ids [B, S], segment_ids, word_embedding [V, H], position_embedding,
// segment_embedding, gamma, beta, mask [B, S], position_ids) -> output [B, S, H], mask_index [B]
// (int32: the mask's non-zero count per batch), embedding_sum [B, S, H].
void infer_embed_layer_norm(const InferContext& ctx, InferResult& r) {
  const Shape& ids = ctx.input(0).shape;
  const TensorType& words = ctx.input(2);
  const Dim hidden =
      words.shape.ranked && words.shape.rank() == 2 ? words.shape.dims[1] : Dim::unknown();
  if (ids.ranked && ids.rank() != 2) ctx.fail("input_ids is [batch, sequence]");
  const Dim batch = ids.ranked ? ids.dims[0] : Dim::unknown();
  const Dim seq = ids.ranked ? ids.dims[1] : Dim::unknown();
  set_output(r, 0, words.dtype, ranked({batch, seq, hidden}));
  set_output(r, 1, DType::int32, ranked({batch}));
  set_output(r, 2, words.dtype, ranked({batch, seq, hidden}));
}

// com.microsoft Attention(input [B, S, D], weights [D, Q + K + V], bias, mask_index) ->
// output [B, S, V]: Q, K and V projected by one product, num_heads heads each. The sizes of Q,
// K and V are qkv_hidden_sizes, or a third of the weights' columns each.
void infer_ms_attention(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const Shape& w = ctx.input(1).shape;
  const int64_t heads = ctx.attr_int("num_heads", 0);
  if (heads <= 0) ctx.fail("num_heads is required");
  for (size_t i = 4; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i)) {
      ctx.fail("past, attention_bias and past_sequence_length (input " + std::to_string(i) +
               ") are not supported yet");
    }
  }
  Dim v_hidden = Dim::unknown();
  if (const auto sizes = ctx.attr_ints("qkv_hidden_sizes")) {
    if (sizes->size() != 3) ctx.fail("qkv_hidden_sizes has 3 entries");
    v_hidden = Dim::known((*sizes)[2]);
  } else if (w.ranked && w.rank() == 2) {
    if (const auto cols = w.dims[1].value()) {
      if (*cols % 3 != 0) ctx.fail("the weights' columns are not Q, K and V of one size");
      v_hidden = Dim::known(*cols / 3);
    }
  }
  if (!x.shape.ranked || x.shape.rank() != 3) {
    if (x.shape.ranked) ctx.fail("input is [batch, sequence, hidden]");
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  set_output(r, 0, x.dtype, ranked({x.shape.dims[0], x.shape.dims[1], v_hidden}));
  if (ctx.output_count() > 1) ctx.fail("present (a key/value cache) is not supported yet");
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
  r.add(contrib(op("EmbedLayerNormalization", 7, 9, infer_embed_layer_norm, 1, 3)));
  r.add(contrib(op("Attention", 2, 7, infer_ms_attention, 1, 2)));
}

}  // namespace footprint::graph::ops
