// com.microsoft MultiHeadAttention (row and inference in graph/ops/contrib_transformer.cpp), as
// onnxruntime's CPU kernel computes it:
//
// - Q, K and V per head: query [B, S, N H] and key/value [B, L, N H] (plus their parts of bias),
//   key/value already [B, N, L, H] (a cross-attention cache: no bias), or packed: query
//   [B, S, N, 3, H] or key [B, L, N, 2, H].
// - The keys and values are the past's P rows then the L new ones; present_key/present_value
//   hold them, [B, N, P + L, H].
// - Query row s of head h scores every key: q . k * scale (default 1/sqrt(H)), plus
//   attention_bias [B or 1, N or 1, S, T], plus mask_filter_value (default -10000) where the key
//   is masked: by key_padding_mask ([B] lengths, [B, T] or [B, S, T] with 0 for masked) or, with
//   unidirectional, for keys after the row's position (P + s); then a softmax and the weighted
//   values.
//
// The scores of a block of query rows live in the step's planned workspace, the rows in
// parallel (after them the keys and values, where the node does not output them); 16-bit
// tensors compute in float and round once on store.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention_row.hpp"
#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {
namespace {

constexpr int64_t kBlockScores = int64_t{1} << 18;

enum class Layout : uint8_t { bsd, bnsh, packed };

struct Sizes {
  int64_t batch = 0, seq = 0, heads = 0, head = 0, v_head = 0, kv_seq = 0, past = 0;
  Layout q = Layout::bsd, kv = Layout::bsd;
  int64_t total() const { return past + kv_seq; }
};

// From the extents alone (the workspace hook and the kernel agree).
Sizes sizes_of(const std::vector<int64_t>& q, const std::vector<int64_t>* k,
               const std::vector<int64_t>* v, const std::vector<int64_t>* past, int64_t heads) {
  Sizes z;
  z.heads = heads;
  if (q.size() == 5) {
    z = {q[0], q[1], heads, q[4], q[4], q[1], 0, Layout::packed, Layout::packed};
  } else if (q.size() == 3 && heads > 0) {
    z.batch = q[0];
    z.seq = q[1];
    z.head = q[2] / heads;
    if (k != nullptr && k->size() == 5) {
      z.kv = Layout::packed;
      z.kv_seq = (*k)[1];
      z.v_head = (*k)[4];
    } else if (k != nullptr && k->size() == 4) {
      z.kv = Layout::bnsh;
      z.kv_seq = (*k)[2];
      z.v_head = v != nullptr && v->size() == 4 ? (*v)[3] : 0;
    } else if (k != nullptr && k->size() == 3) {
      z.kv_seq = (*k)[1];
      z.v_head = v != nullptr && v->size() == 3 ? (*v)[2] / heads : 0;
    }
  }
  if (past != nullptr && past->size() == 4) z.past = (*past)[2];
  return z;
}

int64_t row_floats(const Sizes& z) {
  return z.total() + z.head + z.v_head;
}

int64_t block_rows(const Sizes& z) {
  return std::clamp<int64_t>(kBlockScores / std::max<int64_t>(1, row_floats(z)), 1,
                             std::max<int64_t>(1, z.seq));
}

const std::vector<int64_t>* dims_or_null(const std::vector<graph::ConcreteTensor>& in, size_t i) {
  return i < in.size() && !in[i].dims.empty() ? &in[i].dims : nullptr;
}

uint64_t scores_bytes(const Sizes& z) {
  return (static_cast<uint64_t>(block_rows(z) * row_floats(z)) * sizeof(float) + 63) / 64 * 64;
}

// The keys and values where the node has no present outputs: [B, N, T, H] each, in T.
uint64_t kv_bytes(const Sizes& z, DType t) {
  return static_cast<uint64_t>(z.batch * z.heads * z.total() * (z.head + z.v_head)) *
         static_cast<uint64_t>(dtype_bits(t) / 8);
}

uint64_t mha_workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& out) {
  if (in.empty()) return 0;
  const Sizes z = sizes_of(in[0].dims, dims_or_null(in, 1), dims_or_null(in, 2),
                           dims_or_null(in, 6), graph::attr_int(node, "num_heads", 0));
  if (z.seq <= 0 || z.total() <= 0) return 0;
  return scores_bytes(z) + (out.size() < 3 ? kv_bytes(z, in[0].dtype) : 0);
}

std::vector<int64_t> dims_of(const graph::TensorRef* t) {
  return t != nullptr ? std::vector<int64_t>(t->dims.begin(), t->dims.end())
                      : std::vector<int64_t>{};
}

template <class T>
void mha(graph::KernelContext& ctx) {
  const graph::TensorRef& q_t = ctx.input(0);
  const graph::TensorRef* k_t = ctx.input_or_null(1);
  const graph::TensorRef* v_t = ctx.input_or_null(2);
  const graph::TensorRef* bias_t = ctx.input_or_null(3);
  const graph::TensorRef* pad_t = ctx.input_or_null(4);
  const graph::TensorRef* ab_t = ctx.input_or_null(5);
  const graph::TensorRef* past_k = ctx.input_or_null(6);
  const graph::TensorRef* past_v = ctx.input_or_null(7);
  const std::vector<int64_t> qd = dims_of(&q_t), kd = dims_of(k_t), vd = dims_of(v_t),
                             pd = dims_of(past_k);
  const Sizes z = sizes_of(qd, k_t != nullptr ? &kd : nullptr, v_t != nullptr ? &vd : nullptr,
                           past_k != nullptr ? &pd : nullptr, ctx.attr_int("num_heads", 0));
  if (z.heads <= 0 || z.head <= 0 || z.v_head <= 0 || z.kv_seq <= 0) {
    ctx.fail("query, key and value do not make num_heads heads of one size");
  }
  const int64_t hd = z.head, vh = z.v_head, total = z.total();
  for (const graph::TensorRef* t : {k_t, v_t, bias_t, ab_t, past_k, past_v}) {
    if (t != nullptr && t->dtype != q_t.dtype) ctx.fail("the float inputs differ in dtype");
  }
  if (bias_t != nullptr && (z.kv != Layout::bsd || z.q != Layout::bsd ||
                            static_cast<int64_t>(bias_t->numel()) != z.heads * (2 * hd + vh))) {
    ctx.fail("bias is [hidden + hidden + v_hidden], for query, key and value [batch, seq, hidden]");
  }
  for (const graph::TensorRef* t : {past_k, past_v}) {
    if (t != nullptr && (t->rank() != 4 || t->dim(0) != z.batch || t->dim(1) != z.heads ||
                         t->dim(2) != z.past || t->dim(3) != (t == past_k ? hd : vh))) {
      ctx.fail("past_key and past_value are [batch, num_heads, past, head]");
    }
  }
  const T* q = q_t.as<const T>();
  const T* bias = bias_t != nullptr ? bias_t->as<const T>() : nullptr;
  // Element c of new key (part 1) or value (part 2) row j, head h of batch b, as float.
  const auto fresh = [&](int part, int64_t b, int64_t h, int64_t j, int64_t c) -> float {
    const int64_t width = part == 1 ? hd : vh;
    float x = 0;
    if (z.q == Layout::packed) {
      x = static_cast<float>(widen(q[(((b * z.kv_seq + j) * z.heads + h) * 3 + part) * hd + c]));
    } else if (z.kv == Layout::packed) {
      x = static_cast<float>(
          widen(k_t->as<const T>()[(((b * z.kv_seq + j) * z.heads + h) * 2 + part - 1) * hd + c]));
    } else if (z.kv == Layout::bnsh) {
      const T* t = (part == 1 ? k_t : v_t)->as<const T>();
      x = static_cast<float>(widen(t[((b * z.heads + h) * z.kv_seq + j) * width + c]));
    } else {
      const T* t = (part == 1 ? k_t : v_t)->as<const T>();
      x = static_cast<float>(widen(t[(b * z.kv_seq + j) * z.heads * width + h * width + c]));
      if (bias != nullptr) {
        x += static_cast<float>(
            widen(bias[(part == 1 ? z.heads * hd : 2 * z.heads * hd) + h * width + c]));
      }
    }
    return x;
  };
  const int64_t rows = block_rows(z);
  const int64_t stride = row_floats(z);
  const std::span<std::byte> ws = ctx.workspace();
  const bool presents = ctx.output_or_null(1) != nullptr && ctx.output_or_null(2) != nullptr;
  if (ws.size() < scores_bytes(z) + (presents ? 0 : kv_bytes(z, q_t.dtype))) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " B) holds no block of scores");
  }
  auto* scratch = reinterpret_cast<float*>(ws.data());
  // The keys and values: present_key / present_value, or the workspace after the scores.
  T* own = reinterpret_cast<T*>(ws.data() + scores_bytes(z));
  T* cached_keys = presents ? ctx.output(1).as<T>() : own;
  T* cached_values = presents ? ctx.output(2).as<T>() : own + z.batch * z.heads * total * hd;
  // The past's rows, then the new ones (bias added).
  for (int part = 1; part <= 2; ++part) {
    const graph::TensorRef* past = part == 1 ? past_k : past_v;
    const int64_t width = part == 1 ? hd : vh;
    T* p = part == 1 ? cached_keys : cached_values;
    for (int64_t b = 0; b < z.batch; ++b) {
      for (int64_t h = 0; h < z.heads; ++h) {
        T* cache = p + (b * z.heads + h) * total * width;
        if (past != nullptr) {
          std::copy_n(past->as<const T>() + (b * z.heads + h) * z.past * width, z.past * width,
                      cache);
        }
        for (int64_t j = 0; j < z.kv_seq; ++j) {
          for (int64_t c = 0; c < width; ++c) {
            cache[(z.past + j) * width + c] = narrow<T>(fresh(part, b, h, j, c));
          }
        }
      }
    }
  }
  // Masks: [B] lengths, [B, T] or [B, S, T] zeros; attention_bias broadcast over B and N.
  int64_t pad_kind = 0;  // 0 none, 1 lengths, 2 [B, T], 3 [B, S, T]
  if (pad_t != nullptr) {
    if (pad_t->dtype != DType::int32) ctx.fail("key_padding_mask is int32");
    if (pad_t->rank() == 1 && pad_t->dim(0) == z.batch) {
      pad_kind = 1;
    } else if (pad_t->rank() == 2 && pad_t->dim(0) == z.batch && pad_t->dim(1) == total) {
      pad_kind = 2;
    } else if (pad_t->rank() == 3 && pad_t->dim(0) == z.batch && pad_t->dim(1) == z.seq &&
               pad_t->dim(2) == total) {
      pad_kind = 3;
    } else {
      ctx.fail("key_padding_mask is [batch], [batch, total] or [batch, sequence, total]");
    }
  }
  if (ab_t != nullptr && (ab_t->rank() != 4 || (ab_t->dim(0) != 1 && ab_t->dim(0) != z.batch) ||
                          (ab_t->dim(1) != 1 && ab_t->dim(1) != z.heads) || ab_t->dim(2) != z.seq ||
                          ab_t->dim(3) != total)) {
    ctx.fail("attention_bias is [batch or 1, num_heads or 1, sequence, total]");
  }
  const int32_t* pad = pad_t != nullptr ? pad_t->as<const int32_t>() : nullptr;
  const T* ab = ab_t != nullptr ? ab_t->as<const T>() : nullptr;
  const bool causal = ctx.attr_int("unidirectional", 0) != 0;
  const float filter = ctx.attr_float("mask_filter_value", -10000.0F);
  const float given = ctx.attr_float("scale", 0.0F);
  const float scale = given == 0.0F ? 1.0F / std::sqrt(static_cast<float>(hd)) : given;
  const T* keys = cached_keys;
  const T* values = cached_values;
  T* y = ctx.output(0).as<T>();
  for (int64_t b = 0; b < z.batch; ++b) {
    for (int64_t h = 0; h < z.heads; ++h) {
      const T* kh = keys + (b * z.heads + h) * total * hd;
      const T* vhp = values + (b * z.heads + h) * total * vh;
      for (int64_t r0 = 0; r0 < z.seq; r0 += rows) {
        const int64_t n = std::min(rows, z.seq - r0);
        parallel_for(
            ctx.threads(), static_cast<size_t>(n),
            [&](size_t begin, size_t end) {
              for (size_t ru = begin; ru < end; ++ru) {
                const int64_t s = r0 + static_cast<int64_t>(ru);
                float* scores = scratch + static_cast<int64_t>(ru) * stride;
                float* qi = scores + total;
                float* acc = qi + hd;
                for (int64_t c = 0; c < hd; ++c) {
                  float x = z.q == Layout::packed
                                ? static_cast<float>(
                                      widen(q[(((b * z.seq + s) * z.heads + h) * 3) * hd + c]))
                                : static_cast<float>(
                                      widen(q[(b * z.seq + s) * z.heads * hd + h * hd + c]));
                  if (bias != nullptr) x += static_cast<float>(widen(bias[h * hd + c]));
                  qi[c] = static_cast<float>(widen(narrow<T>(x)));  // stored as T, as the keys
                }
                const T* abr = ab != nullptr ? ab + (((ab_t->dim(0) == 1 ? 0 : b) * ab_t->dim(1) +
                                                      (ab_t->dim(1) == 1 ? 0 : h)) *
                                                         z.seq +
                                                     s) *
                                                        total
                                             : nullptr;
                float best = -std::numeric_limits<float>::infinity();
                for (int64_t j = 0; j < total; ++j) {
                  float x = row_dot(qi, kh + j * hd, hd) * scale;
                  bool masked = causal && j > z.past + s;
                  if (pad_kind == 1) masked = masked || j >= pad[b];
                  if (pad_kind == 2) masked = masked || pad[b * total + j] == 0;
                  if (pad_kind == 3) masked = masked || pad[(b * z.seq + s) * total + j] == 0;
                  if (masked) x += filter;
                  if (abr != nullptr) x += static_cast<float>(widen(abr[j]));
                  scores[j] = x;
                  best = std::max(best, x);
                }
                softmax_weigh(scores, 0, total, best, 0.0F, vhp, vh, acc,
                              y + (b * z.seq + s) * z.heads * vh + h * vh);
              }
            },
            1);
      }
    }
  }
}

void run_multihead_attention(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { mha<decltype(tag)>(ctx); });
}

}  // namespace

void register_multihead_attention(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("com.microsoft", "MultiHeadAttention");
  row.kernel = run_multihead_attention;
  row.workspace = mha_workspace;
  row.kernel_dtypes = dtypes_with_16bit(Float32Types{});
}

}  // namespace footprint::runtime::kernels
