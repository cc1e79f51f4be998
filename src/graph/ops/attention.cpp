// Attention (opset 23): scaled dot-product attention of Q over K and V, multi-head, grouped-query
// or multi-query, with an optional mask, causal masking, softcap and a key/value cache. Q, K and V
// are all 4-D [batch, heads, sequence, head] or all 3-D [batch, sequence, heads * head] (then
// q_num_heads and kv_num_heads say how many heads); past_key and past_value are 4-D.
//   Y              [batch, q_heads, q_seq, v_head] (3-D: [batch, q_seq, q_heads * v_head])
//   present_key    [batch, kv_heads, past + kv_seq, head]
//   present_value  [batch, kv_heads, past + kv_seq, v_head]
//   qk_matmul_output [batch, q_heads, q_seq, past + kv_seq]
#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

struct Heads {
  Dim batch, q_heads, q_seq, head, kv_heads, kv_seq, v_head;
};

// A 3-D tensor's last axis as `heads` heads: their size, known when the axis is.
Dim head_size(const InferContext& ctx, const Dim& hidden, int64_t heads, const char* what) {
  const auto h = hidden.value();
  if (!h) return Dim::unknown();
  if (*h % heads != 0) {
    ctx.fail(std::string(what) + "'s last axis (" + std::to_string(*h) + ") is not " +
             std::to_string(heads) + " heads of one size");
  }
  return Dim::known(*h / heads);
}

Heads heads_of(const InferContext& ctx, const Shape& q, const Shape& k, const Shape& v) {
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) {
    ctx.fail("Q, K and V have ranks " + std::to_string(q.rank()) + ", " + std::to_string(k.rank()) +
             " and " + std::to_string(v.rank()) + "; Attention takes all 3-D or all 4-D");
  }
  if (q.rank() == 4) {
    return {q.dims[0], q.dims[1], q.dims[2], q.dims[3], k.dims[1], k.dims[2], v.dims[3]};
  }
  const int64_t qh = ctx.attr_int("q_num_heads", 0);
  const int64_t kvh = ctx.attr_int("kv_num_heads", 0);
  if (qh <= 0 || kvh <= 0) ctx.fail("3-D Q, K and V need q_num_heads and kv_num_heads");
  return {q.dims[0],
          Dim::known(qh),
          q.dims[1],
          head_size(ctx, q.dims[2], qh, "Q"),
          Dim::known(kvh),
          k.dims[1],
          head_size(ctx, v.dims[2], kvh, "V")};
}

void infer_attention(const InferContext& ctx, InferResult& r) {
  const TensorType& q = ctx.input(0);
  const Shape &k = ctx.input(1).shape, &v = ctx.input(2).shape;
  if (!q.shape.ranked || !k.ranked || !v.ranked) {
    for (size_t i = 0; i < ctx.output_count(); ++i) set_output(r, i, q.dtype, Shape::unranked());
    return;
  }
  const Heads h = heads_of(ctx, q.shape, k, v);
  const auto qh = h.q_heads.value(), kvh = h.kv_heads.value();
  if (qh && kvh && (*kvh <= 0 || *qh % *kvh != 0)) {
    ctx.fail("q heads (" + std::to_string(*qh) + ") are not a multiple of kv heads (" +
             std::to_string(*kvh) + ")");
  }
  if (ctx.has_input(4) != ctx.has_input(5)) {
    ctx.fail("past_key and past_value are given together or not at all");
  }
  Dim past = Dim::known(0);
  if (ctx.has_input(4)) {
    const Shape& pk = ctx.input(4).shape;
    if (pk.ranked && pk.rank() != 4) ctx.fail("past_key is 4-D [batch, kv_heads, past, head]");
    past = pk.ranked ? pk.dims[2] : Dim::unknown();
  }
  const Dim total = past + h.kv_seq;
  const DType kv = ctx.input(1).dtype;
  if (q.shape.rank() == 4) {
    set_output(r, 0, q.dtype, ranked({h.batch, h.q_heads, h.q_seq, h.v_head}));
  } else {
    set_output(r, 0, q.dtype, ranked({h.batch, h.q_seq, h.q_heads * h.v_head}));
  }
  set_output(r, 1, kv, ranked({h.batch, h.kv_heads, total, h.head}));
  set_output(r, 2, kv, ranked({h.batch, h.kv_heads, total, h.v_head}));
  set_output(r, 3, q.dtype, ranked({h.batch, h.q_heads, h.q_seq, total}));
}

}  // namespace

void register_attention(OpRegistry& r) {
  r.add(op("Attention", 3, 6, infer_attention, 1, 4));
}

}  // namespace footprint::graph::ops
