// The com.microsoft ops onnxruntime's transformers optimizer and model builder write where they
// fuse a transformer's pieces: SkipLayerNormalization and SkipSimplifiedLayerNormalization (a
// residual add, a bias and a layer or RMS norm), SimplifiedLayerNormalization (RMS norm, in the
// ONNX domain as onnxruntime registers it), BiasGelu, FastGelu, Gelu and QuickGelu (each output 0
// has input 0's type and shape), EmbedLayerNormalization and its Attention (BERT's embeddings and
// self-attention, without a key/value cache).
#include <array>

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

// com.microsoft Attention(input [B, S, D], weights [D, Q + K + V], bias, mask_index, past
// [2, B, N, P, H], attention_bias [B or 1, N or 1, S, P + S]) -> output [B, S, V] and present
// [2, B, N, P + S, H] (the past's keys and values, then the new ones): Q, K and V projected by
// one product, num_heads heads each. The sizes of Q, K and V are qkv_hidden_sizes, or a third
// of the weights' columns each; a cache needs K and V of one size. A past without a present, a
// shared past/present buffer (past_present_share_buffer, past_sequence_length) are refused.
void infer_ms_attention(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const Shape& w = ctx.input(1).shape;
  const int64_t heads = ctx.attr_int("num_heads", 0);
  if (heads <= 0) ctx.fail("num_heads is required");
  if (ctx.has_input(6) || ctx.attr_int("past_present_share_buffer", 0) != 0) {
    ctx.fail("a past and present sharing one buffer (past_sequence_length) is not supported yet");
  }
  const bool has_present = ctx.output_count() > 1;
  if (ctx.has_input(4) && !has_present) ctx.fail("a past needs the present output");
  Dim v_hidden = Dim::unknown();
  Dim k_hidden = Dim::unknown();
  if (const auto sizes = ctx.attr_ints("qkv_hidden_sizes")) {
    if (sizes->size() != 3) ctx.fail("qkv_hidden_sizes has 3 entries");
    k_hidden = Dim::known((*sizes)[1]);
    v_hidden = Dim::known((*sizes)[2]);
  } else if (w.ranked && w.rank() == 2) {
    if (const auto cols = w.dims[1].value()) {
      if (*cols % 3 != 0) ctx.fail("the weights' columns are not Q, K and V of one size");
      k_hidden = v_hidden = Dim::known(*cols / 3);
    }
  }
  if (!x.shape.ranked || x.shape.rank() != 3) {
    if (x.shape.ranked) ctx.fail("input is [batch, sequence, hidden]");
    set_output(r, 0, x.dtype, Shape::unranked());
    if (has_present) set_output(r, 1, x.dtype, Shape::unranked());
    return;
  }
  const Dim& batch = x.shape.dims[0];
  const Dim& seq = x.shape.dims[1];
  set_output(r, 0, x.dtype, ranked({batch, seq, v_hidden}));
  if (!has_present) return;
  const auto k = k_hidden.value();
  const auto v = v_hidden.value();
  if (k && v && *k != *v) ctx.fail("a key/value cache needs K and V of one size");
  if (k && *k % heads != 0) ctx.fail("K is not num_heads heads");
  const Dim head = k ? Dim::known(*k / heads) : Dim::unknown();
  Dim past = Dim::known(0);
  if (ctx.has_input(4)) {
    const Shape& p = ctx.input(4).shape;
    if (p.ranked && p.rank() != 5) ctx.fail("past is [2, batch, num_heads, past, head]");
    past = p.ranked ? p.dims[3] : Dim::unknown();
  }
  set_output(r, 1, x.dtype, ranked({Dim::known(2), batch, Dim::known(heads), past + seq, head}));
}

// com.microsoft GroupQueryAttention (onnxruntime's LLM model builder): query [B, S, N H] with
// key and value [B, S, Nkv H] (or all three packed in query), the caches past_key/past_value
// [B, Nkv, P, H], seqlens_k [B] (each sequence's length less one) and total_sequence_length
// (one element) -> output [B, S, N H] and present_key/present_value [B, Nkv, max(total, P), H].
// The present length is the value of total_sequence_length, which models compute from the
// attention mask's extents; where nothing says it before running it stays unknown.
void infer_group_query_attention(const InferContext& ctx, InferResult& r) {
  const TensorType& q = ctx.input(0);
  const int64_t heads = ctx.attr_int("num_heads", 0);
  const int64_t kv_heads = ctx.attr_int("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0) ctx.fail("num_heads and kv_num_heads are required");
  if (heads % kv_heads != 0) {
    ctx.fail("num_heads (" + std::to_string(heads) + ") is not a multiple of kv_num_heads (" +
             std::to_string(kv_heads) + ")");
  }
  static constexpr std::array<const char*, 8> kLater = {
      "position_ids", "attention_bias", "head_sink",     "k_scale",
      "v_scale",      "q_norm_weight",  "k_norm_weight", "query_seqlens"};
  for (size_t i = 9; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i)) {
      ctx.fail(std::string("input ") + (i - 9 < kLater.size() ? kLater[i - 9] : "?") +
               " is not supported yet");
    }
  }
  for (const char* a : {"qk_output", "kv_cache_bit_width", "sliding_window_cache"}) {
    if (ctx.attr_int(a, 0) != 0) ctx.fail(std::string("attribute ") + a + " is not supported yet");
  }
  if (ctx.attr_int("causal", 1) != 1) ctx.fail("causal=0 (bidirectional) is not supported yet");
  if (ctx.output_count() > 3) ctx.fail("output_qk is not supported yet");
  if (ctx.output_count() < 3) ctx.fail("present_key and present_value are required outputs");
  if (ctx.has_input(1) != ctx.has_input(2)) ctx.fail("key and value come together or not at all");
  if (ctx.has_input(3) != ctx.has_input(4)) {
    ctx.fail("past_key and past_value come together or not at all");
  }
  if (ctx.has_input(7) != ctx.has_input(8)) {
    ctx.fail("cos_cache and sin_cache come together or not at all");
  }
  if (ctx.attr_int("do_rotary", 0) != 0 && !ctx.has_input(7)) {
    ctx.fail("do_rotary needs cos_cache and sin_cache");
  }
  if (!q.shape.ranked) {
    for (size_t i = 0; i < 3; ++i) set_output(r, i, q.dtype, Shape::unranked());
    return;
  }
  if (q.shape.rank() != 3) ctx.fail("query is [batch, sequence, hidden]");
  const Dim& batch = q.shape.dims[0];
  const Dim& seq = q.shape.dims[1];
  const bool packed = !ctx.has_input(1);
  const int64_t parts = packed ? heads + 2 * kv_heads : heads;
  Dim head = Dim::unknown();
  if (const auto hidden = q.shape.dims[2].value()) {
    if (*hidden % parts != 0) {
      ctx.fail("query's last axis (" + std::to_string(*hidden) + ") is not " +
               std::to_string(parts) + " heads of one size");
    }
    head = Dim::known(*hidden / parts);
  }
  Dim past = Dim::known(0);
  if (ctx.has_input(3)) {
    const Shape& pk = ctx.input(3).shape;
    if (pk.ranked && pk.rank() != 4) ctx.fail("past_key is [batch, kv_num_heads, length, head]");
    past = pk.ranked ? pk.dims[2] : Dim::unknown();
  }
  Dim total = Dim::unknown();
  if (const KnownValue* v = ctx.value(6); v != nullptr && v->is_integer() && v->ints.size() == 1) {
    total = v->ints[0];
  }
  set_output(r, 0, q.dtype, ranked({batch, seq, Dim::known(heads) * head}));
  const Dim present = max(total, past);
  for (size_t i = 1; i <= 2; ++i) {
    set_output(r, i, q.dtype, ranked({batch, Dim::known(kv_heads), present, head}));
  }
}

// com.microsoft MultiHeadAttention (onnxruntime's transformers optimizer): query [B, S, D] with
// key [B, L, D] and value [B, L, Dv] (or key/value already [B, N, L, H], or packed: query
// [B, S, N, 3, H], or key [B, L, N, 2, H]), optional bias, key_padding_mask, attention_bias
// and past_key/past_value [B, N, P, H] -> output [B, S, Dv], present_key/present_value [B, N,
// P + L, H].
void infer_multihead_attention(const InferContext& ctx, InferResult& r) {
  const TensorType& q = ctx.input(0);
  const int64_t heads = ctx.attr_int("num_heads", 0);
  if (heads <= 0) ctx.fail("num_heads is required");
  for (const size_t i : {size_t{8}, size_t{9}}) {
    if (ctx.has_input(i)) {
      ctx.fail(std::string(i == 8 ? "past_sequence_length (a shared buffer)"
                                  : "cache_indirection (beam search)") +
               " is not supported yet");
    }
  }
  if (ctx.output_count() > 3) ctx.fail("output qk is not supported yet");
  if (ctx.output_count() == 2) ctx.fail("present_key and present_value come together");
  if (ctx.has_input(6) != ctx.has_input(7)) {
    ctx.fail("past_key and past_value come together or not at all");
  }
  if (!q.shape.ranked) {
    for (size_t i = 0; i < 3; ++i) set_output(r, i, q.dtype, Shape::unranked());
    return;
  }
  const bool packed_qkv = q.shape.rank() == 5;
  if (q.shape.rank() != 3 && !packed_qkv) {
    ctx.fail("query is [batch, sequence, hidden] or packed [batch, sequence, heads, 3, head]");
  }
  const Dim& batch = q.shape.dims[0];
  const Dim& seq = q.shape.dims[1];
  Dim head = Dim::unknown();
  Dim v_head = Dim::unknown();
  Dim kv_seq = seq;
  if (packed_qkv) {
    head = q.shape.dims[4];
    v_head = head;
  } else {
    if (!ctx.has_input(1)) ctx.fail("key is required unless query packs Q, K and V");
    if (const auto hidden = q.shape.dims[2].value()) {
      if (*hidden % heads != 0) ctx.fail("query's hidden size is not num_heads heads");
      head = Dim::known(*hidden / heads);
    }
    const Shape& k = ctx.input(1).shape;
    if (k.ranked && k.rank() == 5) {  // packed K and V
      kv_seq = k.dims[1];
      v_head = k.dims[4];
    } else if (k.ranked && k.rank() == 4) {  // [B, N, L, H]
      kv_seq = k.dims[2];
      const Shape& v = ctx.input(2).shape;
      v_head = v.ranked && v.rank() == 4 ? v.dims[3] : Dim::unknown();
    } else if (k.ranked && k.rank() == 3) {
      kv_seq = k.dims[1];
      const Shape& v = ctx.has_input(2) ? ctx.input(2).shape : Shape::unranked();
      if (v.ranked && v.rank() == 3) {
        if (const auto vh = v.dims[2].value()) {
          if (*vh % heads != 0) ctx.fail("value's hidden size is not num_heads heads");
          v_head = Dim::known(*vh / heads);
        }
      }
    } else if (k.ranked) {
      ctx.fail("key is [batch, kv_sequence, hidden], [batch, heads, kv_sequence, head] or packed");
    }
  }
  Dim past = Dim::known(0);
  if (ctx.has_input(6)) {
    const Shape& pk = ctx.input(6).shape;
    past = pk.ranked && pk.rank() == 4 ? pk.dims[2] : Dim::unknown();
  }
  set_output(r, 0, q.dtype, ranked({batch, seq, Dim::known(heads) * v_head}));
  const Dim total = past + kv_seq;
  set_output(r, 1, q.dtype, ranked({batch, Dim::known(heads), total, head}));
  set_output(r, 2, q.dtype, ranked({batch, Dim::known(heads), total, v_head}));
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
  r.add(contrib(op("GroupQueryAttention", 7, 17, infer_group_query_attention, 1, 4)));
  r.add(contrib(op("MultiHeadAttention", 1, 10, infer_multihead_attention, 1, 4)));
}

}  // namespace footprint::graph::ops
