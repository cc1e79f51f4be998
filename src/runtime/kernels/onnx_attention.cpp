// Attention (opset 23; rows and inference in graph/ops/attention.cpp): for each query row, its
// scores over the past and current keys (scaled, softcapped, masked by attn_mask and is_causal),
// a softmax, and the weighted sum of the values. Grouped-query heads share their key/value head
// (q head h reads kv head h / (q_heads / kv_heads)). The scores of a block of query rows live in
// the step's planned workspace, one row each, the block's rows in parallel; 16-bit tensors
// compute in float and round once on store. A query row every key of which is masked out gives
// zeros (the spec's errata), not NaN.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {
namespace {

// Scores a block holds at most (1 MiB of floats), and at least one row.
constexpr int64_t kBlockScores = int64_t{1} << 18;

struct Dims {
  int64_t batch = 0, q_heads = 0, q_seq = 0, head = 0, kv_heads = 0, kv_seq = 0, v_head = 0,
          past = 0;
  bool three_d = false;
  int64_t total() const { return past + kv_seq; }
};

// A row's scratch: its scores, then the sum of values it weighs (at most V's last axis wide).
int64_t row_floats(const Dims& d, int64_t v_last) {
  return d.total() + v_last;
}

// The block's rows: all of a head's query rows, or as many as kBlockScores holds.
int64_t block_rows(const Dims& d, int64_t v_last) {
  return std::clamp<int64_t>(kBlockScores / std::max<int64_t>(1, row_floats(d, v_last)), 1,
                             std::max<int64_t>(1, d.q_seq));
}

Dims dims_of(const std::vector<int64_t>& q, const std::vector<int64_t>& k,
             const std::vector<int64_t>& v, const std::vector<int64_t>* past, int64_t qh,
             int64_t kvh) {
  Dims d;
  if (q.size() == 4) {
    d = {q[0], q[1], q[2], q[3], k[1], k[2], v[3], 0, false};
  } else {
    d = {q[0], qh, q[1], qh > 0 ? q[2] / qh : 0, kvh, k[1], kvh > 0 ? v[2] / kvh : 0, 0, true};
  }
  if (past != nullptr && past->size() == 4) d.past = (*past)[2];
  return d;
}

std::vector<int64_t> dims_vector(const graph::TensorRef& t) {
  return {t.dims.begin(), t.dims.end()};
}

Dims dims_of(const graph::KernelContext& ctx) {
  const graph::TensorRef* past = ctx.input_or_null(4);
  const std::vector<int64_t> p = past != nullptr ? dims_vector(*past) : std::vector<int64_t>{};
  const Dims d = dims_of(dims_vector(ctx.input(0)), dims_vector(ctx.input(1)),
                         dims_vector(ctx.input(2)), past != nullptr ? &p : nullptr,
                         ctx.attr_int("q_num_heads", 0), ctx.attr_int("kv_num_heads", 0));
  if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
    ctx.fail("q heads (" + std::to_string(d.q_heads) + ") are not a multiple of kv heads (" +
             std::to_string(d.kv_heads) + ")");
  }
  return d;
}

uint64_t attention_workspace(const graph::Node& /*node*/,
                             const std::vector<graph::ConcreteTensor>& in,
                             const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.size() < 3) return 0;
  const bool has_past = in.size() > 4 && in[4].dims.size() == 4;
  const Dims d = dims_of(in[0].dims, in[1].dims, in[2].dims, has_past ? &in[4].dims : nullptr, 1,
                         1);  // the head counts do not change the block's size
  if (d.q_seq <= 0 || d.total() <= 0 || in[2].dims.empty()) return 0;
  const int64_t v_last = in[2].dims.back();
  return static_cast<uint64_t>(block_rows(d, v_last) * row_floats(d, v_last)) * sizeof(float);
}

// attn_mask broadcast to [batch, q_heads, q_seq, total]: the offset of row (b, h, i) and the
// step between keys, numpy-aligned from the right (a size-1 axis repeats).
struct Mask {
  const graph::TensorRef* t = nullptr;
  std::vector<int64_t> strides;  // per axis of [batch, q_heads, q_seq, total]; 0 broadcasts

  Mask(const graph::KernelContext& ctx, const graph::TensorRef* m, const Dims& d) : t(m) {
    if (m == nullptr) return;
    const int64_t want[4] = {d.batch, d.q_heads, d.q_seq, d.total()};
    if (m->rank() > 4) ctx.fail("attn_mask has rank " + std::to_string(m->rank()) + "; at most 4");
    strides.assign(4, 0);
    int64_t step = 1;
    for (size_t i = 0; i < m->rank(); ++i) {
      const size_t axis = m->rank() - 1 - i;  // from the right
      const size_t to = 3 - i;
      const int64_t extent = m->dim(axis);
      if (extent != 1 && extent != want[to]) {
        ctx.fail("attn_mask's axis " + std::to_string(axis) + " (" + std::to_string(extent) +
                 ") does not broadcast to " + std::to_string(want[to]));
      }
      strides[to] = extent == 1 ? 0 : step;
      step *= extent;
    }
  }
  int64_t row(int64_t b, int64_t h, int64_t i) const {
    return b * strides[0] + h * strides[1] + i * strides[2];
  }
};

template <class T>
void attend(graph::KernelContext& ctx) {
  const Dims d = dims_of(ctx);
  const graph::TensorRef &q_t = ctx.input(0), &k_t = ctx.input(1), &v_t = ctx.input(2);
  const graph::TensorRef* past_k = ctx.input_or_null(4);
  const graph::TensorRef* past_v = ctx.input_or_null(5);
  if ((past_k == nullptr) != (past_v == nullptr)) {
    ctx.fail("past_key and past_value are given together or not at all");
  }
  for (const graph::TensorRef* t : {&k_t, &v_t, past_k, past_v}) {
    if (t != nullptr && t->dtype != q_t.dtype) ctx.fail("Q, K, V and the caches differ in dtype");
  }
  const int64_t total = d.total(), hd = d.head, vd = d.v_head;
  const int64_t group = d.q_heads / d.kv_heads;
  const T* q = q_t.as<const T>();
  const T* k = k_t.as<const T>();
  const T* v = v_t.as<const T>();
  // Key j of kv head g in batch b: from the cache, then from K (3-D: heads interleaved).
  auto key = [&](const T* cur, const graph::TensorRef* past, int64_t width, int64_t b, int64_t g,
                 int64_t j) -> const T* {
    if (past != nullptr && j < d.past) {
      return past->as<const T>() + ((b * d.kv_heads + g) * d.past + j) * width;
    }
    j -= d.past;
    return d.three_d ? cur + ((b * d.kv_seq + j) * d.kv_heads + g) * width
                     : cur + ((b * d.kv_heads + g) * d.kv_seq + j) * width;
  };
  // present_key / present_value: the caches with the current keys after them.
  for (int out = 1; out <= 2; ++out) {
    graph::TensorRef* present = ctx.output_or_null(static_cast<size_t>(out));
    if (present == nullptr) continue;
    const int64_t width = out == 1 ? hd : vd;
    T* p = present->as<T>();
    for (int64_t b = 0; b < d.batch; ++b) {
      for (int64_t g = 0; g < d.kv_heads; ++g) {
        for (int64_t j = 0; j < total; ++j) {
          const T* src = key(out == 1 ? k : v, out == 1 ? past_k : past_v, width, b, g, j);
          std::copy(src, src + width, p + ((b * d.kv_heads + g) * total + j) * width);
        }
      }
    }
  }
  const graph::TensorRef* mask_t = ctx.input_or_null(3);
  const Mask mask(ctx, mask_t, d);
  const bool bool_mask = mask_t != nullptr && mask_t->dtype == DType::boolean;
  if (mask_t != nullptr && !bool_mask && mask_t->dtype != q_t.dtype) {
    ctx.fail("a float attn_mask must have Q's dtype");
  }
  const bool causal = ctx.attr_int("is_causal", 0) != 0;
  const float softcap = ctx.attr_float("softcap", 0.0f);
  const float scale = ctx.attribute("scale") != nullptr ? ctx.attr_float("scale", 1.0f)
                                                        : 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t mode = ctx.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    ctx.fail("qk_matmul_output_mode " + std::to_string(mode) + " is not 0-3");
  graph::TensorRef* qk_t = ctx.output_or_null(3);
  T* y = ctx.output(0).as<T>();
  const int64_t v_last = v_t.dim(v_t.rank() - 1);
  const int64_t rows = block_rows(d, v_last);
  const int64_t stride = row_floats(d, v_last);
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < static_cast<size_t>(rows * stride) * sizeof(float)) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " B) holds no block of scores");
  }
  auto* scores = reinterpret_cast<float*>(ws.data());
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.q_heads; ++h) {
      const int64_t g = h / group;
      for (int64_t r0 = 0; r0 < d.q_seq; r0 += rows) {
        const int64_t n = std::min(rows, d.q_seq - r0);
        parallel_for(
            ctx.threads(), static_cast<size_t>(n),
            [&](size_t begin, size_t end) {
              for (size_t ru = begin; ru < end; ++ru) {
                const int64_t i = r0 + static_cast<int64_t>(ru);
                float* s = scores + static_cast<int64_t>(ru) * stride;
                float* acc = s + total;
                const T* qi = d.three_d ? q + ((b * d.q_seq + i) * d.q_heads + h) * hd
                                        : q + ((b * d.q_heads + h) * d.q_seq + i) * hd;
                T* qk = qk_t != nullptr
                            ? qk_t->as<T>() + ((b * d.q_heads + h) * d.q_seq + i) * total
                            : nullptr;
                const int64_t m_row = mask.t != nullptr ? mask.row(b, h, i) : 0;
                float best = kMinusInf;
                for (int64_t j = 0; j < total; ++j) {
                  const T* kj = key(k, past_k, hd, b, g, j);
                  float dot = 0;
                  for (int64_t c = 0; c < hd; ++c) {
                    dot += static_cast<float>(widen(qi[c])) * static_cast<float>(widen(kj[c]));
                  }
                  float x = dot * scale;
                  if (qk != nullptr && mode == 0) qk[j] = narrow<T>(x);
                  if (softcap > 0) x = softcap * std::tanh(x / softcap);
                  if (qk != nullptr && mode == 1) qk[j] = narrow<T>(x);
                  if (mask.t != nullptr) {
                    const int64_t at = m_row + j * mask.strides[3];
                    if (bool_mask) {
                      if (!mask.t->as<const bool>()[at]) x = kMinusInf;
                    } else {
                      x += static_cast<float>(widen(mask.t->as<const T>()[at]));
                    }
                  }
                  if (causal && j > i + d.past) x = kMinusInf;
                  if (qk != nullptr && mode == 2) qk[j] = narrow<T>(x);
                  s[j] = x;
                  best = std::max(best, x);
                }
                float sum = 0;
                if (best != kMinusInf) {
                  for (int64_t j = 0; j < total; ++j) {
                    s[j] = std::exp(s[j] - best);
                    sum += s[j];
                  }
                }
                const float inv = sum > 0 ? 1.0f / sum : 0.0f;  // fully masked: zeros
                for (int64_t j = 0; j < total; ++j) {
                  s[j] = sum > 0 ? s[j] * inv : 0.0f;
                  if (qk != nullptr && mode == 3) qk[j] = narrow<T>(s[j]);
                }
                T* yi = d.three_d ? y + ((b * d.q_seq + i) * d.q_heads + h) * vd
                                  : y + ((b * d.q_heads + h) * d.q_seq + i) * vd;
                std::fill(acc, acc + vd, 0.0f);
                for (int64_t j = 0; j < total; ++j) {
                  if (s[j] == 0.0f) continue;
                  const T* vj = key(v, past_v, vd, b, g, j);
                  for (int64_t c = 0; c < vd; ++c)
                    acc[c] += s[j] * static_cast<float>(widen(vj[c]));
                }
                for (int64_t c = 0; c < vd; ++c) yi[c] = narrow<T>(acc[c]);
              }
            },
            1);
      }
    }
  }
}

void run_attention(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { attend<decltype(tag)>(ctx); });
}

}  // namespace

void register_onnx_attention(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "Attention");
  row.kernel = run_attention;
  row.workspace = attention_workspace;
  row.kernel_dtypes = dtypes_with_16bit(Float32Types{});
}

}  // namespace footprint::runtime::kernels
