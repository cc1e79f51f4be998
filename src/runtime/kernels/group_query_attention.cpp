// com.microsoft GroupQueryAttention (row and inference in graph/ops/contrib_transformer.cpp), the
// attention of onnxruntime's LLM model builder, as its CPU kernel computes it:
//
// - Sequence b holds total_b = seqlens_k[b] + 1 tokens after the step. A first prompt
//   (S == total_sequence_length) starts at 0; a later step's S tokens follow the past_b =
//   total_b - S tokens already cached (S is 1 when generating; a later prompt of S > 1 tokens
//   needs batch 1).
// - present_key/present_value [B, Nkv, L, H] are zeros but for the past's first past_b rows and the
//   S new ones after them (rotated keys where do_rotary); L = max(total_sequence_length, P).
// - With do_rotary, query and key are turned as com.microsoft's RotaryEmbedding turns them
//   (rotary.cpp: onnxruntime's fused multiply-adds in float32), token s of sequence b at position
//   past_b + s, the caches' width twice the rotated part.
// - Query row s of head h reads kv head h / (N / Nkv), keys [w, past_b + s] of the present cache
//   (w: the start of a local window of local_window_size keys, the token's own the last, as
//   onnxruntime 1.32 counts it; else 0): scaled, softcapped, a softmax (smooth: a zero logit
//   added to the denominator) and the weighted values.
//
// The scores and the turned query row of a block of query rows live in the step's planned
// workspace, the block's rows in parallel; 16-bit tensors compute in float and round once on
// store. The kernel checks every length against the tensors' extents before reading.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "attention_row.hpp"
#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {
namespace {

// Scores a block holds at most (1 MiB of floats), and at least one row.
constexpr int64_t kBlockScores = int64_t{1} << 18;

struct Sizes {
  int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head = 0, past = 0, present = 0;
  bool packed = false;
};

// A query row's scratch: its scores over the present cache, the row turned, the weighted sum.
int64_t row_floats(const Sizes& z) {
  return z.present + 2 * z.head;
}

int64_t block_rows(const Sizes& z) {
  return std::clamp<int64_t>(kBlockScores / std::max<int64_t>(1, row_floats(z)), 1,
                             std::max<int64_t>(1, z.seq));
}

// From the extents alone (the workspace hook and the kernel agree): query [B, S, D], past [B,
// Nkv, P, H] (none: P = 0), present [B, Nkv, L, H].
Sizes sizes_of(const std::vector<int64_t>& q, const std::vector<int64_t>* past,
               const std::vector<int64_t>& present, int64_t heads, int64_t kv_heads, bool packed) {
  Sizes z;
  if (q.size() != 3 || present.size() != 4) return z;
  z.batch = q[0];
  z.seq = q[1];
  z.heads = heads;
  z.kv_heads = kv_heads;
  z.packed = packed;
  const int64_t parts = packed ? heads + 2 * kv_heads : heads;
  z.head = parts > 0 ? q[2] / parts : 0;
  z.past = past != nullptr && past->size() == 4 ? (*past)[2] : 0;
  z.present = present[2];
  return z;
}

uint64_t gqa_workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& out) {
  if (in.empty() || out.size() < 2) return 0;
  const bool past = in.size() > 3 && !in[3].dims.empty();
  const bool packed = in.size() < 2 || in[1].dims.empty();
  const Sizes z = sizes_of(in[0].dims, past ? &in[3].dims : nullptr, out[1].dims,
                           graph::attr_int(node, "num_heads", 0),
                           graph::attr_int(node, "kv_num_heads", 0), packed);
  if (z.seq <= 0 || z.present <= 0 || z.head <= 0) return 0;
  return static_cast<uint64_t>(block_rows(z) * row_floats(z)) * sizeof(float);
}

// Pair (a, b) of a head turned by (cos, sin) as com.microsoft's RotaryEmbedding turns it.
struct Rotary {
  const graph::TensorRef* cos = nullptr;
  const graph::TensorRef* sin = nullptr;
  int64_t half = 0;
  bool interleaved = false;

  template <class T>
  void turn(const T* in, int64_t position, int64_t head, float* out) const {
    for (int64_t c = 0; c < head; ++c) out[c] = static_cast<float>(widen(in[c]));
    if (cos == nullptr) return;
    const T* cr = cos->as<const T>() + position * half;
    const T* sr = sin->as<const T>() + position * half;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t ia = interleaved ? 2 * i : i;
      const int64_t ib = interleaved ? 2 * i + 1 : i + half;
      const float a = out[ia];
      const float b = out[ib];
      const auto c = static_cast<float>(widen(cr[i]));
      const auto s = static_cast<float>(widen(sr[i]));
      if constexpr (std::is_same_v<T, float>) {
        out[ia] = std::fma(a, c, -(b * s));
        out[ib] = std::fma(a, s, b * c);
      } else {
        out[ia] = static_cast<float>(widen(narrow<T>(a * c - b * s)));
        out[ib] = static_cast<float>(widen(narrow<T>(a * s + b * c)));
      }
    }
  }
};

// Where each sequence's tokens are: past_b cached before the step, total_b after it.
std::vector<int64_t> past_lengths(graph::KernelContext& ctx, const Sizes& z) {
  const graph::TensorRef& lens = ctx.input(5);
  const graph::TensorRef& total_t = ctx.input(6);
  if (lens.dtype != DType::int32 || lens.numel() != static_cast<size_t>(z.batch)) {
    ctx.fail("seqlens_k must be int32 [batch]");
  }
  if (total_t.dtype != DType::int32 || total_t.numel() != 1) {
    ctx.fail("total_sequence_length must be one int32");
  }
  const int32_t total = total_t.as<const int32_t>()[0];
  const bool later_prompt = z.seq > 1 && z.seq != total;
  if (later_prompt && z.batch != 1) {
    ctx.fail("a prompt of " + std::to_string(z.seq) +
             " tokens after others (total_sequence_length " + std::to_string(total) +
             ") needs batch 1");
  }
  const bool first_prompt = !later_prompt && z.seq == total;
  if (!first_prompt && !later_prompt && z.seq != 1) {
    ctx.fail("sequence_length is 1 when it is not a prompt");
  }
  std::vector<int64_t> past(static_cast<size_t>(z.batch));
  for (int64_t b = 0; b < z.batch; ++b) {
    const int64_t total_b = int64_t{lens.as<const int32_t>()[b]} + 1;
    const int64_t p = first_prompt ? 0 : total_b - z.seq;
    if (total_b < 1 || p < 0 || p > z.past || p + z.seq > z.present) {
      ctx.fail("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(total_b - 1) +
               " does not fit " + std::to_string(z.seq) + " new tokens after a past of " +
               std::to_string(z.past) + " in a present of " + std::to_string(z.present));
    }
    past[static_cast<size_t>(b)] = p;
  }
  return past;
}

template <class T>
void gqa(graph::KernelContext& ctx) {
  const graph::TensorRef& q_t = ctx.input(0);
  const graph::TensorRef* k_t = ctx.input_or_null(1);
  const graph::TensorRef* v_t = ctx.input_or_null(2);
  const graph::TensorRef* past_k = ctx.input_or_null(3);
  const graph::TensorRef* past_v = ctx.input_or_null(4);
  graph::TensorRef& present_k = ctx.output(1);
  graph::TensorRef& present_v = ctx.output(2);
  const std::vector<int64_t> q_dims(q_t.dims.begin(), q_t.dims.end());
  const std::vector<int64_t> pk_dims =
      past_k != nullptr ? std::vector<int64_t>(past_k->dims.begin(), past_k->dims.end())
                        : std::vector<int64_t>{};
  const Sizes z =
      sizes_of(q_dims, past_k != nullptr ? &pk_dims : nullptr,
               {present_k.dims.begin(), present_k.dims.end()}, ctx.attr_int("num_heads", 0),
               ctx.attr_int("kv_num_heads", 0), k_t == nullptr);
  if (z.head <= 0 || z.kv_heads <= 0 || z.heads % z.kv_heads != 0) {
    ctx.fail(
        "query's last axis is not num_heads heads (with kv_num_heads each for key and value "
        "where packed) of one size");
  }
  for (const graph::TensorRef* t : {k_t, v_t}) {
    if (t != nullptr && (t->dtype != q_t.dtype || t->rank() != 3 || t->dim(0) != z.batch ||
                         t->dim(1) != z.seq || t->dim(2) != z.kv_heads * z.head)) {
      ctx.fail("key and value must be query's dtype, [batch, sequence, kv_num_heads * head]");
    }
  }
  for (const graph::TensorRef* t : {past_k, past_v}) {
    if (t != nullptr && (t->dtype != q_t.dtype || t->rank() != 4 || t->dim(0) != z.batch ||
                         t->dim(1) != z.kv_heads || t->dim(2) != z.past || t->dim(3) != z.head)) {
      ctx.fail(
          "past_key and past_value must be query's dtype, [batch, kv_num_heads, length, head]");
    }
  }
  const std::vector<int64_t> past = past_lengths(ctx, z);
  Rotary rot;
  if (ctx.attr_int("do_rotary", 0) != 0) {
    rot.cos = &ctx.input(7);
    rot.sin = &ctx.input(8);
    rot.interleaved = ctx.attr_int("rotary_interleaved", 0) != 0;
    const graph::TensorRef& c = *rot.cos;
    if (c.rank() != 2 || rot.sin->rank() != 2 || c.dtype != q_t.dtype ||
        rot.sin->dtype != q_t.dtype || c.dim(0) != rot.sin->dim(0) || c.dim(1) != rot.sin->dim(1) ||
        2 * c.dim(1) > z.head) {
      ctx.fail(
          "cos_cache and sin_cache must be query's dtype, alike, [positions, at most head / 2]");
    }
    rot.half = c.dim(1);
    for (int64_t b = 0; b < z.batch; ++b) {
      if (past[static_cast<size_t>(b)] + z.seq > c.dim(0)) {
        ctx.fail("sequence " + std::to_string(b) + "'s positions reach past the caches' " +
                 std::to_string(c.dim(0)) + " rows");
      }
    }
  }
  const int64_t hd = z.head;
  const T* q = q_t.as<const T>();
  // Token s of sequence b, head n of `heads` heads at `first` of query's parts (packed) or of
  // its own tensor.
  const int64_t q_width = z.packed ? (z.heads + 2 * z.kv_heads) * hd : z.heads * hd;
  auto new_row = [&](const graph::TensorRef* own, int64_t first, int64_t width, int64_t b,
                     int64_t s, int64_t n) -> const T* {
    if (own == nullptr) return q + (b * z.seq + s) * q_width + (first + n) * hd;
    return own->as<const T>() + (b * z.seq + s) * width + n * hd;
  };
  const int64_t rows = block_rows(z);
  const int64_t stride = row_floats(z);
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < static_cast<size_t>(rows * stride) * sizeof(float)) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " B) holds no block of scores");
  }
  auto* scratch = reinterpret_cast<float*>(ws.data());
  // The present caches: the past's first rows, the new tokens after them, zeros elsewhere (a
  // turned key passes through the workspace's first row).
  float* turned = scratch;
  for (int out = 1; out <= 2; ++out) {
    graph::TensorRef& present = out == 1 ? present_k : present_v;
    const graph::TensorRef* from = out == 1 ? past_k : past_v;
    const graph::TensorRef* own = out == 1 ? k_t : v_t;
    const int64_t first = out == 1 ? z.heads : z.heads + z.kv_heads;
    T* p = present.as<T>();
    std::memset(static_cast<void*>(p), 0, present.bytes());
    for (int64_t b = 0; b < z.batch; ++b) {
      const int64_t pb = past[static_cast<size_t>(b)];
      for (int64_t g = 0; g < z.kv_heads; ++g) {
        T* cache = p + (b * z.kv_heads + g) * z.present * hd;
        if (from != nullptr) {
          std::copy_n(from->as<const T>() + (b * z.kv_heads + g) * z.past * hd, pb * hd, cache);
        }
        for (int64_t s = 0; s < z.seq; ++s) {
          const T* src = new_row(own, first, z.kv_heads * hd, b, s, g);
          T* dst = cache + (pb + s) * hd;
          if (out == 1 && rot.cos != nullptr) {
            rot.turn(src, pb + s, hd, turned);
            for (int64_t c = 0; c < hd; ++c) dst[c] = narrow<T>(turned[c]);
          } else {
            std::copy_n(src, hd, dst);
          }
        }
      }
    }
  }
  const float softcap = ctx.attr_float("softcap", 0.0F);
  const float given = ctx.attr_float("scale", 0.0F);
  const float scale = given == 0.0F ? 1.0F / std::sqrt(static_cast<float>(hd)) : given;
  const int64_t window = ctx.attr_int("local_window_size", -1);
  const bool smooth = ctx.attr_int("smooth_softmax", 0) != 0;
  const T* keys = present_k.as<const T>();
  const T* values = present_v.as<const T>();
  T* y = ctx.output(0).as<T>();
  const int64_t group = z.heads / z.kv_heads;
  for (int64_t b = 0; b < z.batch; ++b) {
    const int64_t pb = past[static_cast<size_t>(b)];
    for (int64_t h = 0; h < z.heads; ++h) {
      const int64_t g = h / group;
      const T* kg = keys + (b * z.kv_heads + g) * z.present * hd;
      const T* vg = values + (b * z.kv_heads + g) * z.present * hd;
      for (int64_t r0 = 0; r0 < z.seq; r0 += rows) {
        const int64_t n = std::min(rows, z.seq - r0);
        parallel_for(
            ctx.threads(), static_cast<size_t>(n),
            [&](size_t begin, size_t end) {
              for (size_t ru = begin; ru < end; ++ru) {
                const int64_t s = r0 + static_cast<int64_t>(ru);
                float* scores = scratch + static_cast<int64_t>(ru) * stride;
                float* qi = scores + z.present;
                float* acc = qi + hd;
                rot.turn(new_row(k_t == nullptr ? nullptr : &q_t, 0, z.heads * hd, b, s, h), pb + s,
                         hd, qi);
                const int64_t causal = pb + s + 1;  // keys [0, causal)
                const int64_t from = window > 0 && causal > window ? causal - window : 0;
                float best = smooth ? 0.0F : -std::numeric_limits<float>::infinity();
                for (int64_t j = from; j < causal; ++j) {
                  float x = row_dot(qi, kg + j * hd, hd) * scale;
                  if (softcap > 0) x = softcap * std::tanh(x / softcap);
                  scores[j] = x;
                  best = std::max(best, x);
                }
                softmax_weigh(scores, from, causal, best, smooth ? std::exp(-best) : 0.0F, vg, hd,
                              acc, y + ((b * z.seq + s) * z.heads + h) * hd);
              }
            },
            1);
      }
    }
  }
}

void run_group_query_attention(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { gqa<decltype(tag)>(ctx); });
}

}  // namespace

void register_group_query_attention(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("com.microsoft", "GroupQueryAttention");
  row.kernel = run_group_query_attention;
  row.workspace = gqa_workspace;
  row.kernel_dtypes = dtypes_with_16bit(Float32Types{});
}

}  // namespace footprint::runtime::kernels
