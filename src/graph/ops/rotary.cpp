// RotaryEmbedding (opset 23): rotary position embeddings applied to the heads of X, which keeps
// its type and shape. X is [batch, heads, sequence, head] or [batch, sequence, heads * head]
// (then num_heads says how many); the caches hold cos and sin of each position's angles, half
// the rotated part wide: [positions, half] read through position_ids, or [batch, sequence, half]
// without them.
//
// com.microsoft's RotaryEmbedding (onnxruntime's transformers optimizer and model builder) is the
// same rotation with its inputs in another order, (input, position_ids, cos_cache, sin_cache):
// position_ids always given, [batch, sequence] or one element, the first token's position (the
// others follow it), and the caches always [positions, half]. A 3-D input may leave num_heads
// out: a head is then twice the caches' width, all of it rotated (rotary_embedding_dim then
// needs num_heads).
#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// The extents the caches' last axis must have: half the rotated part of a head.
std::optional<int64_t> rotated_half(const InferContext& ctx, const Shape& x) {
  const int64_t heads = ctx.attr_int("num_heads", 0);
  const int64_t rotary = ctx.attr_int("rotary_embedding_dim", 0);
  std::optional<int64_t> head;
  if (x.rank() == 4) {
    head = x.dims[3].value();
  } else if (heads <= 0) {
    ctx.fail("a 3-D X needs num_heads (its last axis holds them all)");
  } else if (const auto hidden = x.dims[2].value()) {
    if (*hidden % heads != 0) {
      ctx.fail("X's last axis (" + std::to_string(*hidden) + ") is not num_heads (" +
               std::to_string(heads) + ") heads of one size");
    }
    head = *hidden / heads;
  }
  if (rotary < 0) ctx.fail("rotary_embedding_dim is negative");
  if (head && rotary > *head) {
    ctx.fail("rotary_embedding_dim " + std::to_string(rotary) + " is above the head size " +
             std::to_string(*head));
  }
  const std::optional<int64_t> rotated = rotary > 0 ? std::optional(rotary) : head;
  if (rotated && *rotated % 2 != 0) {
    ctx.fail("the rotated part of a head (" + std::to_string(*rotated) + ") is not even");
  }
  if (!rotated) return std::nullopt;
  return *rotated / 2;
}

// Fails unless a ranked cache's last axis is half the rotated part of a head (where known).
void check_cache_width(const InferContext& ctx, const char* name, const Shape& cache,
                       std::optional<int64_t> half) {
  const auto last = cache.ranked && cache.rank() > 0 ? cache.dims.back().value() : std::nullopt;
  if (half && last && *last != *half) {
    ctx.fail(std::string(name) + "'s last axis is " + std::to_string(*last) +
             ", not half the rotated part of a head (" + std::to_string(*half) + ")");
  }
}

void infer_rotary_embedding(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  same_as_input(ctx, r);
  if (!x.ranked) return;
  if (x.rank() != 3 && x.rank() != 4) {
    ctx.fail("X has rank " + std::to_string(x.rank()) + "; RotaryEmbedding takes 3 or 4");
  }
  const std::optional<int64_t> half = rotated_half(ctx, x);
  const bool positions = ctx.has_input(3);
  for (size_t i = 1; i <= 2; ++i) {
    const Shape& cache = ctx.input(i).shape;
    if (!cache.ranked) continue;
    const size_t want = positions ? 2 : 3;
    const char* name = i == 1 ? "cos_cache" : "sin_cache";
    if (cache.rank() != want) {
      ctx.fail(std::string(name) + " has rank " + std::to_string(cache.rank()) + "; it is " +
               (positions ? "[positions, half] with position_ids"
                          : "[batch, sequence, half] without position_ids"));
    }
    check_cache_width(ctx, name, cache, half);
  }
}

void infer_ms_rotary_embedding(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  same_as_input(ctx, r);
  if (!x.ranked) return;
  if (x.rank() != 3 && x.rank() != 4) {
    ctx.fail("input has rank " + std::to_string(x.rank()) + "; RotaryEmbedding takes 3 or 4");
  }
  const int64_t heads = ctx.attr_int("num_heads", 0);
  const int64_t rotary = ctx.attr_int("rotary_embedding_dim", 0);
  if (heads < 0 || rotary < 0) ctx.fail("num_heads and rotary_embedding_dim cannot be negative");
  if (rotary > 0 && heads == 0) ctx.fail("rotary_embedding_dim needs num_heads");
  for (size_t i = 2; i <= 3; ++i) {
    const Shape& cache = ctx.input(i).shape;
    if (cache.ranked && cache.rank() != 2) {
      ctx.fail(std::string(i == 2 ? "cos_cache" : "sin_cache") + " has rank " +
               std::to_string(cache.rank()) + "; it is [positions, half the rotated part]");
    }
  }
  const Shape& positions = ctx.input(1).shape;
  if (positions.ranked && positions.rank() > 2) {
    ctx.fail("position_ids has rank " + std::to_string(positions.rank()) +
             "; it is [batch, sequence] or one element (the first position)");
  }
  // With num_heads the rotated half follows from X as for the ONNX op; without it a head is the
  // caches' width twice, whatever X's last axis.
  if (heads > 0 || x.rank() == 4) {
    const std::optional<int64_t> half = rotated_half(ctx, x);
    check_cache_width(ctx, "cos_cache", ctx.input(2).shape, half);
    check_cache_width(ctx, "sin_cache", ctx.input(3).shape, half);
  }
}

}  // namespace

void register_rotary(OpRegistry& r) {
  r.add(op("RotaryEmbedding", 3, 4, infer_rotary_embedding));
  r.add(contrib(op("RotaryEmbedding", 4, 4, infer_ms_rotary_embedding)));
}

}  // namespace footprint::graph::ops
