// com.microsoft's fused transformer pieces (rows and inference in
// graph/ops/contrib_transformer.cpp; SimplifiedLayerNormalization runs as RMSNormalization, in
// normalization.cpp), each over rows of input 0's last axis:
//   SkipLayerNormalization          s = input + skip + bias, then LayerNorm(s) * gamma + beta
//   SkipSimplifiedLayerNormalization  the same with RMS norm (no mean, no beta)
//   BiasGelu, FastGelu, Gelu, QuickGelu  an activation of input + bias (erf Gelu; tanh Gelu;
//                                   erf Gelu; x * sigmoid(alpha x))
// skip broadcasts over the leading axes (onnxruntime takes [batch, seq, hidden] or [seq, hidden]);
// rows compute in float (16-bit ones widened, rounded once on store), as onnxruntime does.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "dtype_dispatch.hpp"
#include "epilogue.hpp"
#include "families.hpp"
#include "float_matmul.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "parallel_for.hpp"
#include "row_dots.hpp"
#include "simd_math.hpp"
#include "through_float32.hpp"

namespace footprint::runtime::kernels {
namespace {

// The longest row a 16-bit norm widens on the stack.
constexpr int64_t kMaxRow = 16384;

enum class Norm { layer, rms };

// input + skip + bias, normalised, of rows of `width` elements; `skip` repeats every
// skip_rows rows. The optional statistics and the sum go where given.
template <class T, Norm N>
void skip_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& x_t = ctx.input(0);
  const graph::TensorRef& skip_t = ctx.input(1);
  const graph::TensorRef& gamma_t = ctx.input(2);
  // Layer norm: gamma, beta, bias; RMS norm: gamma, bias.
  const graph::TensorRef* beta_t = N == Norm::layer ? ctx.input_or_null(3) : nullptr;
  const graph::TensorRef* bias_t = ctx.input_or_null(N == Norm::layer ? 4 : 3);
  if (x_t.rank() == 0) ctx.fail("input is a scalar; the norm is over its last axis");
  const int64_t width = x_t.dim(x_t.rank() - 1);
  const int64_t rows = width > 0 ? static_cast<int64_t>(x_t.numel()) / width : 0;
  if (rows == 0) return;
  if (width > kMaxRow) ctx.fail("rows of " + std::to_string(width) + " elements; at most 16384");
  if (skip_t.numel() == 0 || skip_t.numel() % static_cast<size_t>(width) != 0 ||
      x_t.numel() % skip_t.numel() != 0) {
    ctx.fail("skip (" + std::to_string(skip_t.numel()) + " elements) does not repeat over input");
  }
  for (const graph::TensorRef* t : {&gamma_t, beta_t, bias_t}) {
    if (t != nullptr && t->numel() != static_cast<size_t>(width)) {
      ctx.fail("gamma, beta and bias hold one value per element of the last axis (" +
               std::to_string(width) + ")");
    }
  }
  for (const graph::TensorRef* t : {&skip_t, &gamma_t, beta_t, bias_t}) {
    if (t != nullptr && t->dtype != x_t.dtype)
      ctx.fail("skip, gamma, beta and bias have input's dtype");
  }
  const int64_t skip_rows = static_cast<int64_t>(skip_t.numel()) / width;
  const float epsilon = ctx.attr_float("epsilon", 1e-5f);
  const T* x = x_t.as<const T>();
  const T* skip = skip_t.as<const T>();
  const T* gamma = gamma_t.as<const T>();
  const T* beta = beta_t != nullptr ? beta_t->as<const T>() : nullptr;
  const T* bias = bias_t != nullptr ? bias_t->as<const T>() : nullptr;
  T* y = ctx.output(0).as<T>();
  graph::TensorRef* mean_t = ctx.output_or_null(1);
  graph::TensorRef* inv_t = ctx.output_or_null(2);
  graph::TensorRef* sum_t = ctx.output_or_null(3);
  parallel_for(
      ctx.threads(), static_cast<size_t>(rows),
      [&](size_t begin, size_t end) {
        std::array<float, kMaxRow> s;  // NOLINT(cppcoreguidelines-pro-type-member-init)
        for (size_t ru = begin; ru < end; ++ru) {
          const auto r = static_cast<int64_t>(ru);
          const T* xr = x + r * width;
          const T* kr = skip + (r % skip_rows) * width;
          float total = 0;
          for (int64_t j = 0; j < width; ++j) {
            float v = static_cast<float>(widen(xr[j])) + static_cast<float>(widen(kr[j]));
            if (bias != nullptr) v += static_cast<float>(widen(bias[j]));
            s[static_cast<size_t>(j)] = v;
            total += v;
          }
          if (sum_t != nullptr) {
            T* out = sum_t->as<T>() + r * width;
            for (int64_t j = 0; j < width; ++j) out[j] = narrow<T>(s[static_cast<size_t>(j)]);
          }
          const float mean = N == Norm::layer ? total / static_cast<float>(width) : 0.0f;
          float squares = 0;
          for (int64_t j = 0; j < width; ++j) {
            const float d = s[static_cast<size_t>(j)] - mean;
            squares += d * d;
          }
          const float inv = 1.0f / std::sqrt(squares / static_cast<float>(width) + epsilon);
          T* yr = y + r * width;
          for (int64_t j = 0; j < width; ++j) {
            float v =
                (s[static_cast<size_t>(j)] - mean) * inv * static_cast<float>(widen(gamma[j]));
            if (beta != nullptr) v += static_cast<float>(widen(beta[j]));
            yr[j] = narrow<T>(v);
          }
          if (mean_t != nullptr) mean_t->as<float>()[r] = mean;
          if (inv_t != nullptr) inv_t->as<float>()[r] = inv;
        }
      },
      1);
}

template <Norm N>
void run_skip_norm(graph::KernelContext& ctx) {
  for (size_t i = 1; i <= 2; ++i) {
    const graph::TensorRef* stat = ctx.output_or_null(i);
    if (stat != nullptr && stat->dtype != DType::float32)
      ctx.fail("mean and inv_std_var are float");
  }
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { skip_norm<decltype(tag), N>(ctx); });
}

enum class Act { erf_gelu, tanh_gelu, quick_gelu };

// The epilogue op that computes A (quick GELU is x sigmoid(alpha x): swish's), so the one
// vector definition in epilogue.hpp is the one these run.
constexpr graph::EpilogueOp epilogue_op(Act a) {
  return a == Act::erf_gelu    ? graph::EpilogueOp::gelu_erf
         : a == Act::tanh_gelu ? graph::EpilogueOp::gelu_tanh
                               : graph::EpilogueOp::swish;
}

// The activation of input 0 plus input 1 (a bias over the last axis) where given: a chunk at a
// time widened to float, biased, activated a vector at a time and stored (rounded once for
// 16-bit types).
template <class T, Act A>
void biased_activation(graph::KernelContext& ctx) {
  const graph::TensorRef& x_t = ctx.input(0);
  const graph::TensorRef* bias_t = ctx.input_or_null(1);
  const int64_t width = x_t.rank() > 0 ? x_t.dim(x_t.rank() - 1) : 1;
  if (bias_t != nullptr &&
      (bias_t->numel() != static_cast<size_t>(width) || bias_t->dtype != x_t.dtype)) {
    ctx.fail("the bias holds one value of the input's dtype per element of its last axis (" +
             std::to_string(width) + ")");
  }
  const float alpha = ctx.attr_float("alpha", 1.702f);
  const T* x = x_t.as<const T>();
  const T* bias = bias_t != nullptr ? bias_t->as<const T>() : nullptr;
  T* y = ctx.output(0).as<T>();
  const size_t n = x_t.numel();
  const auto w = static_cast<size_t>(std::max<int64_t>(width, 1));
  constexpr size_t kChunk = 256;
  // A row of the last axis at a time, in chunks: the bias is read by column.
  parallel_for(
      ctx.threads(), n / w,
      [&](size_t begin, size_t end) {
        std::array<float, kChunk> v;  // NOLINT(cppcoreguidelines-pro-type-member-init)
        for (size_t r = begin; r < end; ++r) {
          for (size_t c0 = 0; c0 < w; c0 += kChunk) {
            const size_t count = std::min(kChunk, w - c0);
            const size_t at = r * w + c0;
            for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(widen(x[at + i]));
            if (bias != nullptr) {
              for (size_t i = 0; i < count; ++i) v[i] += static_cast<float>(widen(bias[c0 + i]));
            }
            simd::map(v.data(), v.data(), count,
                      [&](auto u) { return apply_epilogue_as<epilogue_op(A)>(u, alpha, 0.0f); });
            for (size_t i = 0; i < count; ++i) y[at + i] = narrow<T>(v[i]);
          }
        }
      },
      std::max<size_t>(1, 4096 / w));
}

template <Act A>
void run_activation(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { biased_activation<decltype(tag), A>(ctx); });
}

// EmbedLayerNormalization: the word, position and segment embeddings of each token summed, then
// layer-normalised; mask_index counts each batch's non-zero mask entries (zeros without a mask).
int64_t checked_id(const graph::KernelContext& ctx, int32_t id, int64_t rows, const char* what) {
  if (id < 0 || id >= rows) {
    ctx.fail(std::string(what) + " " + std::to_string(id) + " is outside its table's " +
             std::to_string(rows) + " rows");
  }
  return id;
}

template <class T>
void embed_layer_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& ids_t = ctx.input(0);
  const graph::TensorRef* seg_t = ctx.input_or_null(1);
  const graph::TensorRef& words_t = ctx.input(2);
  const graph::TensorRef& pos_table_t = ctx.input(3);
  const graph::TensorRef* seg_table_t = ctx.input_or_null(4);
  const graph::TensorRef& gamma_t = ctx.input(5);
  const graph::TensorRef& beta_t = ctx.input(6);
  const graph::TensorRef* mask_t = ctx.input_or_null(7);
  const graph::TensorRef* pos_t = ctx.input_or_null(8);
  if (ids_t.rank() != 2 || ids_t.dtype != DType::int32)
    ctx.fail("input_ids is int32 [batch, sequence]");
  const int64_t batch = ids_t.dim(0), seq = ids_t.dim(1);
  const int64_t width = words_t.rank() == 2 ? words_t.dim(1) : 0;
  if (width == 0 || width > kMaxRow || pos_table_t.rank() != 2 || pos_table_t.dim(1) != width ||
      gamma_t.numel() != static_cast<size_t>(width) ||
      beta_t.numel() != static_cast<size_t>(width)) {
    ctx.fail("the embeddings, gamma and beta must share the hidden size (at most 16384)");
  }
  if ((seg_t == nullptr) != (seg_table_t == nullptr)) {
    ctx.fail("segment_ids and segment_embedding are given together or not at all");
  }
  for (const graph::TensorRef* t : {seg_t, mask_t, pos_t}) {
    if (t != nullptr &&
        (t->dtype != DType::int32 || (t->numel() != ids_t.numel() &&
                                      !(t == pos_t && t->numel() == static_cast<size_t>(seq))))) {
      ctx.fail("segment_ids, mask and position_ids are int32 [batch, sequence]");
    }
  }
  const int32_t* ids = ids_t.as<const int32_t>();
  const T* words = words_t.as<const T>();
  const T* pos_table = pos_table_t.as<const T>();
  const T* seg_table = seg_table_t != nullptr ? seg_table_t->as<const T>() : nullptr;
  const T* gamma = gamma_t.as<const T>();
  const T* beta = beta_t.as<const T>();
  const float epsilon = ctx.attr_float("epsilon", 1e-12f);
  T* y = ctx.output(0).as<T>();
  graph::TensorRef* sum_t = ctx.output_or_null(2);
  std::array<float, kMaxRow> s;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  for (int64_t t = 0; t < batch * seq; ++t) {
    const int64_t w = checked_id(ctx, ids[t], words_t.dim(0), "input_ids");
    const int64_t p = checked_id(
        ctx,
        pos_t != nullptr ? pos_t->as<const int32_t>()[pos_t->numel() == ids_t.numel() ? t : t % seq]
                         : static_cast<int32_t>(t % seq),
        pos_table_t.dim(0), "position");
    const int64_t g = seg_t != nullptr ? checked_id(ctx, seg_t->as<const int32_t>()[t],
                                                    seg_table_t->dim(0), "segment_ids")
                                       : 0;
    float total = 0;
    for (int64_t j = 0; j < width; ++j) {
      float v = static_cast<float>(widen(words[w * width + j])) +
                static_cast<float>(widen(pos_table[p * width + j]));
      if (seg_table != nullptr) v += static_cast<float>(widen(seg_table[g * width + j]));
      s[static_cast<size_t>(j)] = v;
      total += v;
    }
    if (sum_t != nullptr) {
      for (int64_t j = 0; j < width; ++j)
        sum_t->as<T>()[t * width + j] = narrow<T>(s[static_cast<size_t>(j)]);
    }
    const float mean = total / static_cast<float>(width);
    float squares = 0;
    for (int64_t j = 0; j < width; ++j) {
      const float d = s[static_cast<size_t>(j)] - mean;
      squares += d * d;
    }
    const float inv = 1.0f / std::sqrt(squares / static_cast<float>(width) + epsilon);
    for (int64_t j = 0; j < width; ++j) {
      y[t * width + j] =
          narrow<T>((s[static_cast<size_t>(j)] - mean) * inv * static_cast<float>(widen(gamma[j])) +
                    static_cast<float>(widen(beta[j])));
    }
  }
  if (graph::TensorRef* index = ctx.output_or_null(1)) {
    for (int64_t b = 0; b < batch; ++b) {
      int32_t count = 0;
      for (int64_t j = 0; mask_t != nullptr && j < seq; ++j) {
        count += mask_t->as<const int32_t>()[b * seq + j] != 0 ? 1 : 0;
      }
      index->as<int32_t>()[b] = count;
    }
  }
}

void run_embed_layer_norm(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(2).dtype,
                                    [&](auto tag) { embed_layer_norm<decltype(tag)>(ctx); });
}

// com.microsoft Attention: Q, K and V of every token from one product with the weights (and
// bias), into the step's workspace (float32: MatMul's kernel, float_matmul.hpp, the weights
// packed into its layout when preparing; 16-bit: a loop widening them); then per batch and head
// the keys and values as panels of total = past + sequence rows (the past's, widened, then the
// new tokens'), which the present output takes (rounded once for 16-bit types); then per query
// row the scores over the panel, scaled, plus attention_bias, masked by mask_index (1-D: each
// batch's end position in the total; 2-D [batch, total]: 1 keeps a key, 0 adds
// mask_filter_value; 3-D [batch, sequence, total] the same per query row) and, when
// unidirectional, causally (query i sees keys up to past + i); softmax; the weighted values.
struct MsAttentionSizes {
  int64_t batch = 0, seq = 0, in = 0, q = 0, k = 0, v = 0, heads = 1, past = 0;
  int64_t cols() const { return q + k + v; }
  int64_t total() const { return past + seq; }
  int64_t key_head() const { return heads > 0 ? k / heads : 0; }
  int64_t value_head() const { return heads > 0 ? v / heads : 0; }
};

MsAttentionSizes ms_attention_sizes(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                    const std::optional<std::vector<int64_t>>& hidden,
                                    int64_t heads, const std::vector<int64_t>* past) {
  MsAttentionSizes z;
  if (x.size() != 3 || w.size() != 2) return z;
  z.batch = x[0];
  z.seq = x[1];
  z.in = x[2];
  z.heads = heads;
  if (hidden && hidden->size() == 3) {
    z.q = (*hidden)[0];
    z.k = (*hidden)[1];
    z.v = (*hidden)[2];
  } else {
    z.q = z.k = z.v = w[1] / 3;
  }
  if (past != nullptr && past->size() == 5) z.past = (*past)[3];
  return z;
}

// The projected tokens; one row of scores; one head of weighted values; a batch and head's key
// and value panels.
uint64_t ms_attention_floats(const MsAttentionSizes& z) {
  return static_cast<uint64_t>(z.batch * z.seq * z.cols() + z.total() + z.value_head() +
                               z.total() * (z.key_head() + z.value_head()));
}

// Where the product's scratch starts in the workspace (64-byte aligned, past the floats above).
uint64_t ms_projection_offset(const MsAttentionSizes& z) {
  return (ms_attention_floats(z) * sizeof(float) + 63) / 64 * 64;
}

// The float32 projection as MatMul's kernel sees it: x [batch, seq, in] by W [in, Q + K + V]
// plus the bias, into [batch, seq, Q + K + V]; nullopt where it does not run so (16-bit).
struct MsProjection {
  std::vector<graph::ConcreteTensor> in, out;
};

std::optional<MsProjection> ms_projection(const std::vector<graph::ConcreteTensor>& in) {
  if (in.size() < 2 || in[0].dtype != DType::float32 || in[1].dtype != DType::float32 ||
      in[0].dims.size() != 3 || in[1].dims.size() != 2) {
    return std::nullopt;
  }
  MsProjection p;
  p.in = {in[0], in[1]};
  if (in.size() > 2 && in[2].dtype != DType::undefined) p.in.push_back(in[2]);
  p.out = {{DType::float32, {in[0].dims[0], in[0].dims[1], in[1].dims[1]}}};
  return p;
}

// The projection's prepared product.
class MsAttentionState final : public graph::KernelState {
 public:
  uint64_t owned_bytes() const override { return inner != nullptr ? inner->owned_bytes() : 0; }
  std::vector<int64_t> qkv_dims;  // [batch, seq, Q + K + V]
  std::unique_ptr<graph::KernelState> inner;
};

// x, W and the bias as the product's inputs, and the projected tokens at `qkv` as its output.
through_float32_detail::Refs ms_projection_refs(const graph::KernelContext& ctx,
                                                const MsAttentionState& s, float* qkv) {
  through_float32_detail::Refs r;
  r.inputs = 3;
  r.outputs = 1;
  for (size_t i = 0; i < 3; ++i) {
    const graph::TensorRef* t = ctx.input_or_null(i);
    r.in[i] = t != nullptr ? *t : graph::TensorRef{};
    r.in_present[i] = t != nullptr ? 1 : 0;
  }
  r.out[0] = graph::TensorRef{DType::float32, s.qkv_dims, qkv};
  r.out_present[0] = 1;
  return r;
}

std::vector<graph::ConcreteTensor> concrete_inputs(const graph::KernelContext& ctx) {
  std::vector<graph::ConcreteTensor> in(ctx.input_count());
  for (size_t i = 0; i < in.size(); ++i) {
    if (const graph::TensorRef* t = ctx.input_or_null(i)) {
      in[i] = {t->dtype, {t->dims.begin(), t->dims.end()}};
    }
  }
  return in;
}

std::unique_ptr<graph::KernelState> ms_attention_prepare(const graph::KernelContext& ctx) {
  const auto p = ms_projection(concrete_inputs(ctx));
  if (!p) return nullptr;
  for (const graph::ConcreteTensor& t : p->in) {
    for (const int64_t d : t.dims) {
      if (d <= 0) return nullptr;
    }
  }
  auto s = std::make_unique<MsAttentionState>();
  s->qkv_dims = p->out[0].dims;
  const through_float32_detail::Float32View view(ctx, nullptr, ms_projection_refs(ctx, *s, nullptr),
                                                 {}, nullptr);
  s->inner = float_matmul_prepare(view);
  return s;
}

uint64_t ms_attention_packed(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                             const std::vector<graph::ConcreteTensor>& /*out*/,
                             const std::vector<bool>& constant) {
  const auto p = ms_projection(in);
  return p ? float_matmul_packed(n, p->in, p->out, constant) : 0;
}

// y += a x over n floats (no aliasing: the compiler vectorises it).
void axpy(float a, const float* __restrict x, float* __restrict y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// acc[0, n) = sum over j < rows of p[j] x[j * stride + c]: the weighted values of one query row,
// four vectors of acc at a time held in registers while the rows stream past, at the CPU's
// widest vectors.
void weighted_rows(const float* p, size_t rows, const float* x, size_t stride, float* acc,
                   size_t n) {
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    constexpr size_t kLanes = sizeof(V) / sizeof(float);
    constexpr size_t kBlock = 4 * kLanes;
    size_t c0 = 0;
    for (; c0 + kLanes <= n; c0 += kBlock) {
      const size_t vectors = std::min<size_t>(4, (n - c0) / kLanes);
      std::array<V, 4> sum{};
      for (size_t j = 0; j < rows; ++j) {
        const float* row = x + j * stride + c0;
        for (size_t k = 0; k < vectors; ++k) {
          V v;
          std::memcpy(&v, row + k * kLanes, sizeof v);
          sum[k] += p[j] * v;
        }
      }
      for (size_t k = 0; k < vectors; ++k) std::memcpy(acc + c0 + k * kLanes, &sum[k], sizeof(V));
      if (vectors < 4) {
        c0 += vectors * kLanes;
        break;
      }
    }
    for (size_t c = c0; c < n; ++c) {
      float t = 0;
      for (size_t j = 0; j < rows; ++j) t += p[j] * x[j * stride + c];
      acc[c] = t;
    }
  });
}

uint64_t ms_attention_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                                const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.size() < 2) return 0;
  const std::vector<int64_t>* past =
      in.size() > 4 && in[4].dtype != DType::undefined ? &in[4].dims : nullptr;
  const auto z = ms_attention_sizes(in[0].dims, in[1].dims, graph::attr_ints(n, "qkv_hidden_sizes"),
                                    graph::attr_int(n, "num_heads", 1), past);
  const auto p = ms_projection(in);
  if (!p) return ms_attention_floats(z) * sizeof(float);
  return ms_projection_offset(z) + float_matmul_workspace(n, p->in, p->out);
}

// Q, K and V of every token by a loop over the weights' rows (16-bit weights, widened as read).
template <class T>
void project_tokens(const graph::KernelContext& ctx, const MsAttentionSizes& z, const T* x,
                    const T* w, const graph::TensorRef* bias_t, float* qkv) {
  const int64_t cols = z.cols();
  parallel_for(
      ctx.threads(), static_cast<size_t>(z.batch * z.seq),
      [&](size_t begin, size_t end) {
        for (size_t tu = begin; tu < end; ++tu) {
          const auto t = static_cast<int64_t>(tu);
          float* row = qkv + t * cols;
          for (int64_t c = 0; c < cols; ++c) {
            row[c] = bias_t != nullptr ? static_cast<float>(widen(bias_t->as<const T>()[c])) : 0.0f;
          }
          for (int64_t i = 0; i < z.in; ++i) {
            const auto xi = static_cast<float>(widen(x[t * z.in + i]));
            if constexpr (std::is_same_v<T, float>) {
              axpy(xi, w + i * cols, row, static_cast<size_t>(cols));
            } else {
              const T* wr = w + i * cols;
              for (int64_t c = 0; c < cols; ++c) row[c] += xi * static_cast<float>(widen(wr[c]));
            }
          }
        }
      },
      1);
}

// The mask_index forms the kernel reads; false for another.
bool ms_mask_fits(const graph::TensorRef& m, const MsAttentionSizes& z) {
  if (m.dtype != DType::int32 || m.dim(0) != z.batch) return false;
  switch (m.rank()) {
    case 1:
      return true;
    case 2:
      return m.dim(1) == z.total();
    case 3:
      return m.dim(1) == z.seq && m.dim(2) == z.total();
    default:
      return false;
  }
}

// Whether key j stays for query row i of batch b under mask_index `m` (nullptr: every key).
bool ms_key_kept(const graph::TensorRef* m, const MsAttentionSizes& z, int64_t b, int64_t i,
                 int64_t j) {
  if (m == nullptr) return true;
  const int32_t* v = m->as<const int32_t>();
  switch (m->rank()) {
    case 1:
      return j < v[b];
    case 2:
      return v[b * z.total() + j] != 0;
    default:
      return v[(b * z.seq + i) * z.total() + j] != 0;
  }
}

// Batch b and head n's keys [total, key head] and values [total, value head]: the past's rows
// (widened), then the new tokens' from the projection; into the present output where it is.
template <class T>
void ms_panels(graph::KernelContext& ctx, const MsAttentionSizes& z, const float* qkv, int64_t b,
               int64_t n, float* keys, float* values) {
  const int64_t hd = z.key_head(), vd = z.value_head(), total = z.total();
  const graph::TensorRef* past = ctx.input_or_null(4);
  const auto panel = [&](int64_t which) {  // offset of [which, b, n] in past or present
    return ((which * z.batch + b) * z.heads + n);
  };
  if (past != nullptr) {
    const T* p = past->as<const T>();
    for (int64_t t = 0; t < z.past; ++t) {
      for (int64_t c = 0; c < hd; ++c) {
        keys[t * hd + c] = static_cast<float>(widen(p[(panel(0) * z.past + t) * hd + c]));
        values[t * vd + c] = static_cast<float>(widen(p[(panel(1) * z.past + t) * hd + c]));
      }
    }
  }
  const int64_t cols = z.cols();
  for (int64_t s = 0; s < z.seq; ++s) {
    const float* row = qkv + (b * z.seq + s) * cols;
    std::copy_n(row + z.q + n * hd, hd, keys + (z.past + s) * hd);
    std::copy_n(row + z.q + z.k + n * vd, vd, values + (z.past + s) * vd);
  }
  graph::TensorRef* present = ctx.output_or_null(1);
  if (present == nullptr) return;
  T* out = present->as<T>();
  for (int64_t e = 0; e < total * hd; ++e) {
    out[panel(0) * total * hd + e] = narrow<T>(keys[e]);
    out[panel(1) * total * hd + e] = narrow<T>(values[e]);
  }
}

template <class T>
void ms_attention(graph::KernelContext& ctx) {
  const graph::TensorRef& x_t = ctx.input(0);
  const graph::TensorRef& w_t = ctx.input(1);
  const graph::TensorRef* bias_t = ctx.input_or_null(2);
  const graph::TensorRef* mask_t = ctx.input_or_null(3);
  const graph::TensorRef* past_t = ctx.input_or_null(4);
  const graph::TensorRef* add_t = ctx.input_or_null(5);
  const int64_t heads = ctx.attr_int("num_heads", 0);
  const std::vector<int64_t> past_dims =
      past_t != nullptr ? std::vector<int64_t>(past_t->dims.begin(), past_t->dims.end())
                        : std::vector<int64_t>{};
  const auto z = ms_attention_sizes(
      {x_t.dims.begin(), x_t.dims.end()}, {w_t.dims.begin(), w_t.dims.end()},
      ctx.attr_ints("qkv_hidden_sizes"), heads, past_t != nullptr ? &past_dims : nullptr);
  if (x_t.rank() != 3 || w_t.rank() != 2 || w_t.dim(0) != z.in || w_t.dim(1) != z.cols()) {
    ctx.fail("input is [batch, sequence, hidden] and the weights [hidden, Q + K + V]");
  }
  if (heads <= 0 || z.q != z.k || z.q % heads != 0 || z.v % heads != 0) {
    ctx.fail("Q and K of one size and Q, K and V of num_heads heads each");
  }
  if (bias_t != nullptr && bias_t->numel() != static_cast<size_t>(z.cols())) {
    ctx.fail("the bias holds one value per column of the weights");
  }
  for (const graph::TensorRef* t : {&w_t, bias_t, past_t, add_t}) {
    if (t != nullptr && t->dtype != x_t.dtype) {
      ctx.fail("the weights, bias, past and attention_bias have input's dtype");
    }
  }
  const int64_t hd = z.key_head(), vd = z.value_head(), total = z.total();
  if (past_t != nullptr &&
      (past_t->rank() != 5 || past_t->dim(0) != 2 || past_t->dim(1) != z.batch ||
       past_t->dim(2) != heads || past_t->dim(4) != hd || hd != vd)) {
    ctx.fail("past is [2, batch, num_heads, past, head], K and V of one size");
  }
  if (mask_t != nullptr && !ms_mask_fits(*mask_t, z)) {
    ctx.fail(
        "mask_index is int32 [batch] (end positions), [batch, total] or [batch, sequence, total] "
        "(0/1 masks); other forms are not supported yet");
  }
  if (add_t != nullptr && (add_t->rank() != 4 || (add_t->dim(0) != 1 && add_t->dim(0) != z.batch) ||
                           (add_t->dim(1) != 1 && add_t->dim(1) != heads) ||
                           add_t->dim(2) != z.seq || add_t->dim(3) != total)) {
    ctx.fail("attention_bias is [batch or 1, num_heads or 1, sequence, total]");
  }
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < ms_attention_floats(z) * sizeof(float)) ctx.fail("the step's workspace is short");
  auto* qkv = reinterpret_cast<float*>(ws.data());
  float* scores = qkv + z.batch * z.seq * z.cols();
  float* acc = scores + total;  // the weighted values, one head wide
  float* keys = acc + vd;
  float* values = keys + total * hd;
  auto* projection = dynamic_cast<MsAttentionState*>(ctx.state());
  if (projection != nullptr) {
    if (projection->qkv_dims != std::vector<int64_t>{z.batch, z.seq, z.cols()}) {
      ctx.fail("its extents differ from those it was prepared with");
    }
    through_float32_detail::Float32View view(ctx, &ctx, ms_projection_refs(ctx, *projection, qkv),
                                             ws.subspan(ms_projection_offset(z)),
                                             projection->inner.get());
    float_matmul_run(view);
  } else {
    project_tokens<T>(ctx, z, x_t.as<const T>(), w_t.as<const T>(), bias_t, qkv);
  }
  const float scale = ctx.attribute("scale") != nullptr ? ctx.attr_float("scale", 1.0f)
                                                        : 1.0f / std::sqrt(static_cast<float>(hd));
  const float filter = ctx.attr_float("mask_filter_value", -10000.0f);
  const bool causal = ctx.attr_int("unidirectional", 0) != 0;
  const int64_t cols = z.cols();
  T* y = ctx.output(0).as<T>();
  const auto count = static_cast<size_t>(total);
  for (int64_t b = 0; b < z.batch; ++b) {
    for (int64_t n = 0; n < heads; ++n) {
      ms_panels<T>(ctx, z, qkv, b, n, keys, values);
      const T* add = nullptr;
      if (add_t != nullptr) {
        add = add_t->as<const T>() +
              ((add_t->dim(0) == 1 ? 0 : b) * add_t->dim(1) + (add_t->dim(1) == 1 ? 0 : n)) *
                  z.seq * total;
      }
      for (int64_t i = 0; i < z.seq; ++i) {
        const float* q = qkv + (b * z.seq + i) * cols + n * hd;
        row_dots(keys, static_cast<size_t>(hd), q, scores, static_cast<size_t>(hd), count);
        for (int64_t j = 0; j < total; ++j) {
          scores[j] *= scale;
          if (add != nullptr) scores[j] += static_cast<float>(widen(add[i * total + j]));
          if (!ms_key_kept(mask_t, z, b, i, j)) scores[j] += filter;
          if (causal && j > z.past + i) scores[j] = -std::numeric_limits<float>::infinity();
        }
        float sum = 0;
        simd::with_widest([&](auto tag) {
          using V = decltype(tag);
          const float best = simd::max_as<V>(scores, count);
          sum = simd::exp_sum_as<V>(scores, scores, count, best);
        });
        const float inv = 1.0f / sum;
        for (size_t j = 0; j < count; ++j) scores[j] *= inv;
        weighted_rows(scores, count, values, static_cast<size_t>(vd), acc, static_cast<size_t>(vd));
        T* out = y + (b * z.seq + i) * z.v + n * vd;
        for (int64_t c = 0; c < vd; ++c) out[c] = narrow<T>(acc[c]);
      }
    }
  }
}

void run_ms_attention(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { ms_attention<decltype(tag)>(ctx); });
}

}  // namespace

void register_contrib_transformer(graph::OpRegistry& r) {
  const DTypeSet floats = dtypes_with_16bit(Float32Types{});
  const auto set = [&](std::string_view domain, std::string_view op, graph::KernelFn kernel) {
    graph::OpSchema& row = r.row(domain, op);
    row.kernel = kernel;
    row.kernel_dtypes = floats;
  };
  const std::string_view ms = "com.microsoft";
  set(ms, "SkipLayerNormalization", run_skip_norm<Norm::layer>);
  set(ms, "SkipSimplifiedLayerNormalization", run_skip_norm<Norm::rms>);
  set(ms, "BiasGelu", run_activation<Act::erf_gelu>);
  set(ms, "FastGelu", run_activation<Act::tanh_gelu>);
  set(ms, "Gelu", run_activation<Act::erf_gelu>);
  set(ms, "QuickGelu", run_activation<Act::quick_gelu>);
  set(ms, "EmbedLayerNormalization", run_embed_layer_norm);
  r.row(ms, "EmbedLayerNormalization").kernel_dtype_of = 2;  // the embeddings' dtype
  set(ms, "Attention", run_ms_attention);
  graph::OpSchema& attention = r.row(ms, "Attention");
  attention.prepare = ms_attention_prepare;
  attention.workspace = ms_attention_workspace;
  attention.packed = ms_attention_packed;
  attention.packed_inputs = 0b10;  // the weights, where the product packed them
}

}  // namespace footprint::runtime::kernels
