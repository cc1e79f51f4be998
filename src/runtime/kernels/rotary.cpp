// RotaryEmbedding (opset 23; rows and inference in graph/ops/rotary.cpp): each head's first
// `rotary` elements turned as pairs by the angles of its token's position, the rest copied.
// Pairs are (i, i + rotary/2), or (2i, 2i + 1) when interleaved; a pair (a, b) becomes
// (a cos - b sin, a sin + b cos). 16-bit heads compute in float and round once on store.
#include <cstdint>
#include <string>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {
namespace {

// Where X's heads are: [batch, heads, sequence, head] or [batch, sequence, heads * head].
struct HeadLayout {
  int64_t batch = 0, heads = 0, sequence = 0, head = 0;
  bool heads_first = false;  // rank 4

  // The offset of head h of token s of batch b.
  int64_t at(int64_t b, int64_t s, int64_t h) const {
    return heads_first ? ((b * heads + h) * sequence + s) * head
                       : ((b * sequence + s) * heads + h) * head;
  }
};

HeadLayout layout_of(const graph::KernelContext& ctx, const graph::TensorRef& x) {
  HeadLayout l;
  if (x.rank() == 4) {
    l = {x.dim(0), x.dim(1), x.dim(2), x.dim(3), true};
  } else if (x.rank() == 3) {
    const int64_t heads = ctx.attr_int("num_heads", 0);
    if (heads <= 0 || x.dim(2) % heads != 0) {
      ctx.fail("X's last axis (" + std::to_string(x.dim(2)) + ") is not num_heads (" +
               std::to_string(heads) + ") heads of one size");
    }
    l = {x.dim(0), heads, x.dim(1), x.dim(2) / heads, false};
  } else {
    ctx.fail("X has rank " + std::to_string(x.rank()) + "; RotaryEmbedding takes 3 or 4");
  }
  return l;
}

template <class T>
void rotate(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const HeadLayout l = layout_of(ctx, x);
  const int64_t rotary = ctx.attr_int("rotary_embedding_dim", 0) > 0
                             ? ctx.attr_int("rotary_embedding_dim", 0)
                             : l.head;
  if (rotary > l.head || rotary % 2 != 0) {
    ctx.fail("the rotated part of a head (" + std::to_string(rotary) +
             ") is odd or above the head size " + std::to_string(l.head));
  }
  const int64_t half = rotary / 2;
  const graph::TensorRef& cos_t = ctx.input(1);
  const graph::TensorRef& sin_t = ctx.input(2);
  const graph::TensorRef* pos_t = ctx.input_or_null(3);
  if (cos_t.dtype != x.dtype || sin_t.dtype != x.dtype) {
    ctx.fail("cos_cache and sin_cache must have X's dtype");
  }
  if (cos_t.numel() != sin_t.numel() || cos_t.rank() == 0 || cos_t.dim(cos_t.rank() - 1) != half) {
    ctx.fail("cos_cache and sin_cache must be alike, their last axis half the rotated part (" +
             std::to_string(half) + ")");
  }
  const int64_t tokens = l.batch * l.sequence;
  if (pos_t == nullptr && cos_t.numel() != static_cast<size_t>(tokens * half)) {
    ctx.fail("without position_ids the caches are [batch, sequence, " + std::to_string(half) +
             "], one row per token");
  }
  if (pos_t != nullptr &&
      (pos_t->dtype != DType::int64 || pos_t->numel() != static_cast<size_t>(tokens))) {
    ctx.fail("position_ids must be int64 [batch, sequence], one per token");
  }
  const int64_t positions = static_cast<int64_t>(cos_t.numel()) / half;
  const int64_t* pos = pos_t != nullptr ? pos_t->as<const int64_t>() : nullptr;
  if (pos != nullptr) {
    for (int64_t t = 0; t < tokens; ++t) {
      if (pos[t] < 0 || pos[t] >= positions) {
        ctx.fail("position_ids[" + std::to_string(t) + "] = " + std::to_string(pos[t]) +
                 " is outside the caches' " + std::to_string(positions) + " positions");
      }
    }
  }
  const bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  const T* in = x.as<const T>();
  const T* cos_c = cos_t.as<const T>();
  const T* sin_c = sin_t.as<const T>();
  T* out = ctx.output(0).as<T>();
  // One token's heads a step: they share the token's angles. A pair is read whole before it is
  // written, so out may be X itself.
  parallel_for(
      ctx.threads(), static_cast<size_t>(tokens),
      [&](size_t begin, size_t end) {
        for (size_t tu = begin; tu < end; ++tu) {
          const auto t = static_cast<int64_t>(tu);
          const int64_t b = t / l.sequence;
          const int64_t s = t % l.sequence;
          const int64_t row = (pos != nullptr ? pos[t] : t) * half;
          for (int64_t h = 0; h < l.heads; ++h) {
            const T* src = in + l.at(b, s, h);
            T* dst = out + l.at(b, s, h);
            for (int64_t i = 0; i < half; ++i) {
              const int64_t ia = interleaved ? 2 * i : i;
              const int64_t ib = interleaved ? 2 * i + 1 : i + half;
              const auto a = static_cast<float>(widen(src[ia]));
              const auto bv = static_cast<float>(widen(src[ib]));
              const auto c = static_cast<float>(widen(cos_c[row + i]));
              const auto sn = static_cast<float>(widen(sin_c[row + i]));
              dst[ia] = narrow<T>(a * c - bv * sn);
              dst[ib] = narrow<T>(a * sn + bv * c);
            }
            if (dst != src) {
              for (int64_t i = rotary; i < l.head; ++i) dst[i] = src[i];
            }
          }
        }
      },
      1);
}

void run_rotary_embedding(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { rotate<decltype(tag)>(ctx); });
}

}  // namespace

void register_rotary(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "RotaryEmbedding");
  row.kernel = run_rotary_embedding;
  row.kernel_dtypes = dtypes_with_16bit(Float32Types{});
}

}  // namespace footprint::runtime::kernels
