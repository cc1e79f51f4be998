// RotaryEmbedding (opset 23, and com.microsoft's; rows and inference in graph/ops/rotary.cpp):
// each head's first `rotary` elements turned as pairs by the angles of its token's position, the
// rest copied. Pairs are (i, i + rotary/2), or (2i, 2i + 1) when interleaved; a pair (a, b)
// becomes (a cos - b sin, a sin + b cos). 16-bit heads compute in float and round once on store.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

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

// Where the two forms keep their inputs. com.microsoft's takes position_ids second and always,
// one element meaning the first token's position, and lets a 3-D input leave num_heads out (a
// head is then twice the caches' width).
struct Form {
  size_t cos = 1, sin = 2, positions = 3;
  bool microsoft = false;
};

constexpr Form kOnnx{};
constexpr Form kMicrosoft{2, 3, 1, true};

HeadLayout layout_of(const graph::KernelContext& ctx, const graph::TensorRef& x, const Form& f) {
  HeadLayout l;
  if (x.rank() == 4) {
    l = {x.dim(0), x.dim(1), x.dim(2), x.dim(3), true};
  } else if (x.rank() == 3 && f.microsoft && ctx.attr_int("num_heads", 0) == 0) {
    const graph::TensorRef& cos_t = ctx.input(f.cos);
    const int64_t head = cos_t.rank() == 2 ? 2 * cos_t.dim(1) : 0;
    if (ctx.attr_int("rotary_embedding_dim", 0) > 0) {
      ctx.fail("rotary_embedding_dim needs num_heads");
    }
    if (head <= 0 || x.dim(2) % head != 0) {
      ctx.fail("input's last axis (" + std::to_string(x.dim(2)) +
               ") is not heads of twice the caches' width (" + std::to_string(head) + ")");
    }
    l = {x.dim(0), x.dim(2) / head, x.dim(1), head, false};
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

// The first row of the caches each token reads: its position_ids element, or (com.microsoft's
// single element) the first position plus the token's place in its sequence; checked against
// the caches' `positions` rows.
class Positions {
 public:
  Positions(const graph::KernelContext& ctx, const graph::TensorRef* t, const Form& f,
            const HeadLayout& l, int64_t positions)
      : sequence_(l.sequence) {
    const int64_t tokens = l.batch * l.sequence;
    if (t == nullptr) return;
    if (t->dtype != DType::int64) ctx.fail("position_ids must be int64");
    ids_ = t->as<const int64_t>();
    if (f.microsoft && t->numel() == 1) {
      first_only_ = true;
      if (ids_[0] < 0 || ids_[0] + l.sequence > positions) {
        ctx.fail("position_ids (" + std::to_string(ids_[0]) + ") and " +
                 std::to_string(l.sequence) + " tokens reach past the caches' " +
                 std::to_string(positions) + " positions");
      }
      return;
    }
    if (t->numel() != static_cast<size_t>(tokens)) {
      ctx.fail("position_ids must be int64 [batch, sequence], one per token");
    }
    for (int64_t i = 0; i < tokens; ++i) {
      if (ids_[i] < 0 || ids_[i] >= positions) {
        ctx.fail("position_ids[" + std::to_string(i) + "] = " + std::to_string(ids_[i]) +
                 " is outside the caches' " + std::to_string(positions) + " positions");
      }
    }
  }

  bool given() const { return ids_ != nullptr; }

  // The caches' row of token t (batch-major).
  int64_t of(int64_t t) const {
    if (ids_ == nullptr) return t;
    return first_only_ ? ids_[0] + t % sequence_ : ids_[t];
  }

 private:
  const int64_t* ids_ = nullptr;
  bool first_only_ = false;
  int64_t sequence_ = 1;
};

template <class T>
void rotate(graph::KernelContext& ctx, const Form& f) {
  const graph::TensorRef& x = ctx.input(0);
  const HeadLayout l = layout_of(ctx, x, f);
  const int64_t rotary = ctx.attr_int("rotary_embedding_dim", 0) > 0
                             ? ctx.attr_int("rotary_embedding_dim", 0)
                             : l.head;
  if (rotary > l.head || rotary % 2 != 0) {
    ctx.fail("the rotated part of a head (" + std::to_string(rotary) +
             ") is odd or above the head size " + std::to_string(l.head));
  }
  const int64_t half = rotary / 2;
  const graph::TensorRef& cos_t = ctx.input(f.cos);
  const graph::TensorRef& sin_t = ctx.input(f.sin);
  const graph::TensorRef* pos_t = ctx.input_or_null(f.positions);
  if (f.microsoft && pos_t == nullptr) ctx.fail("position_ids is missing");
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
  const int64_t positions = static_cast<int64_t>(cos_t.numel()) / half;
  const Positions pos(ctx, pos_t, f, l, positions);
  const bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  // onnxruntime's float32 kernel for com.microsoft's op rounds each output once after a product
  // (a c - (b s) and a s + (b c) as fused multiply-adds): its bytes, found against onnxruntime
  // 1.32 on 3-D and 4-D inputs, interleaved or not, partial rotation; its 16-bit kernel rounds
  // as the plain form does.
  const bool fused = f.microsoft && std::is_same_v<T, float>;
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
          const int64_t row = pos.of(t) * half;
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
              if (fused) {
                dst[ia] = narrow<T>(std::fma(a, c, -(bv * sn)));
                dst[ib] = narrow<T>(std::fma(a, sn, bv * c));
              } else {
                dst[ia] = narrow<T>(a * c - bv * sn);
                dst[ib] = narrow<T>(a * sn + bv * c);
              }
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
                                    [&](auto tag) { rotate<decltype(tag)>(ctx, kOnnx); });
}

void run_ms_rotary_embedding(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { rotate<decltype(tag)>(ctx, kMicrosoft); });
}

}  // namespace

void register_rotary(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "RotaryEmbedding");
  row.kernel = run_rotary_embedding;
  row.kernel_dtypes = dtypes_with_16bit(Float32Types{});
  graph::OpSchema& ms = r.row("com.microsoft", "RotaryEmbedding");
  ms.kernel = run_ms_rotary_embedding;
  ms.kernel_dtypes = dtypes_with_16bit(Float32Types{});
}

}  // namespace footprint::runtime::kernels
