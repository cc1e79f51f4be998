// footprint::Attention (graph/passes/fuse_patterns.cpp rewrites an exporter's MatMul, scale, mask,
// Softmax, MatMul into it): softmax(Q Kt * scale, masked) V over the last axis, for every
// leading index at once. The scores exist only in the step's workspace, a block of query rows
// at a time: two batched oneDNN matmuls per block (Q's rows by Kt into the block, the block by V
// into those rows of the output, through dense copies of the rows when there are blocks), and
// between them one vectorised pass per row that scales, masks and normalises. So the planned
// arena holds no [.., Sq, Sk] tensor at all, and the block is sized to stay small.
//
// A float16 or bfloat16 attention computes in float and rounds wherever a node it replaces
// stored 16 bits: the scores after the product, after the scale (a Div divides, as the Div did)
// and after an additive mask, the probabilities after the softmax, the output once. oneDNN 2.6
// has no float16 matmul here (docs/RUNTIME.md, "16-bit floats"), so Q's rows, Kt and V are
// widened into the workspace and the output's rows narrowed out of it.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dnnl_util.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "parallel_for.hpp"
#include "simd_math.hpp"
#include "through_float32.hpp"

namespace footprint::runtime::kernels {
namespace {

using memory = dnnl::memory;

// The scores block's bytes at most: the rows of a block are as many as fit (all of Sq when they
// do), at least kMinRows.
constexpr uint64_t kScoresBudget = uint64_t{1} << 20;
constexpr int64_t kMinRows = 8;
constexpr uint64_t kAlign = 64;

struct AttentionDims {
  DType dtype = DType::float32;  // Q's, Kt's, V's and the output's
  int64_t batch = 1;             // the leading extents, folded
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  int64_t rows = 0;  // query rows a block
  std::vector<int64_t> lead;
};

AttentionDims attention_dims(const graph::Node& n, const Extents& e) {
  const DType t = e.has_in(0) ? e.in_dtype[0] : DType::undefined;
  for (size_t i = 0; i < 3; ++i) {
    if (!e.has_in(i) || e.in_dtype[i] != t ||
        (t != DType::float32 && t != DType::float16 && t != DType::bfloat16)) {
      node_fail(n, "Q, Kt and V must be all float32, all float16 or all bfloat16");
    }
  }
  const auto& q = e.in[0];
  const auto& kt = e.in[1];
  const auto& v = e.in[2];
  const size_t r = q.size();
  if (r < 2 || kt.size() != r || v.size() != r) {
    node_fail(n, "Q, Kt and V must be of one rank, at least 2");
  }
  AttentionDims a;
  a.dtype = t;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (kt[i] != q[i] || v[i] != q[i]) node_fail(n, "Q, Kt and V must share their leading extents");
    a.lead.push_back(q[i]);
    a.batch *= q[i];
  }
  a.sq = q[r - 2];
  a.d = q[r - 1];
  a.sk = kt[r - 1];
  a.dv = v[r - 1];
  if (kt[r - 2] != a.d || v[r - 2] != a.sk) {
    node_fail(n, "Q's columns, Kt's rows and V's rows do not agree");
  }
  const uint64_t row_bytes = static_cast<uint64_t>(a.batch * a.sk) * sizeof(float);
  const auto fit = static_cast<int64_t>(kScoresBudget / std::max<uint64_t>(row_bytes, 1));
  a.rows = fit >= a.sq ? a.sq : std::min(a.sq, std::max(kMinRows, fit / kMinRows * kMinRows));
  return a;
}

// A block of Q's rows by Kt into a dense [batch, rows, Sk] block. Every operand is dense: oneDNN
// runs its brgemm kernels there, within the user scratchpad, where on strided operands it falls
// back to its gemm driver, which takes buffers of its own (hundreds of KiB on the first run at
// Sq = 512). So with more than one block, Q's rows and the output's are copied through dense
// blocks of the workspace.
dnnl::matmul::primitive_desc scores_pd(const graph::Node& n, const AttentionDims& a, int64_t rows) {
  return make_pd(n, "Attention", [&] {
    return dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(plain_desc({a.batch, rows, a.d}), plain_desc({a.batch, a.d, a.sk}),
                           plain_desc({a.batch, rows, a.sk})),
        user_scratchpad(), cpu_engine());
  });
}

// The normalised block by V into a dense [batch, rows, dv] block (the output's rows when there
// is one block).
dnnl::matmul::primitive_desc context_pd(const graph::Node& n, const AttentionDims& a,
                                        int64_t rows) {
  return make_pd(n, "Attention", [&] {
    return dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(plain_desc({a.batch, rows, a.sk}), plain_desc({a.batch, a.sk, a.dv}),
                           plain_desc({a.batch, rows, a.dv})),
        user_scratchpad(), cpu_engine());
  });
}

uint64_t aligned(uint64_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// The primitives of one block size.
struct Block {
  int64_t rows = 0;
  std::unique_ptr<DnnlState> scores, context;
};

Block make_block(const graph::Node& n, const AttentionDims& a, int64_t rows) {
  const auto s = scores_pd(n, a, rows);
  const auto c = context_pd(n, a, rows);
  auto args = [](const dnnl::matmul::primitive_desc& pd) {
    return std::vector<std::pair<int, memory::desc>>{{DNNL_ARG_SRC, pd.src_desc()},
                                                     {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                                     {DNNL_ARG_DST, pd.dst_desc()}};
  };
  Block b;
  b.rows = rows;
  b.scores = std::make_unique<DnnlState>(s, dnnl::matmul(s), args(s));
  b.context = std::make_unique<DnnlState>(c, dnnl::matmul(c), args(c));
  return b;
}

// The workspace: the largest scratchpad of the four primitives, then the scores block.
struct Layout {
  uint64_t scratch = 0, block_offset = 0, total = 0;
  // With more than one block or 16-bit tensors: Q's rows and the output's, dense float32; 0
  // otherwise.
  uint64_t q_offset = 0, y_offset = 0;
  // 16-bit tensors: Kt and V widened whole; 0 otherwise.
  uint64_t kt_offset = 0, v_offset = 0;
};

Layout layout_of(const graph::Node& n, const AttentionDims& a) {
  uint64_t scratch = 0;
  for (const int64_t rows : {a.rows, a.sq % a.rows}) {
    if (rows == 0) continue;
    scratch = std::max<uint64_t>(scratch, scores_pd(n, a, rows).scratchpad_desc().get_size());
    scratch = std::max<uint64_t>(scratch, context_pd(n, a, rows).scratchpad_desc().get_size());
  }
  Layout l;
  l.scratch = scratch;
  l.block_offset = aligned(scratch);
  l.total =
      l.block_offset + aligned(static_cast<uint64_t>(a.batch * a.rows * a.sk) * sizeof(float));
  auto floats = [](int64_t count) { return aligned(static_cast<uint64_t>(count) * sizeof(float)); };
  if (a.rows < a.sq || a.dtype != DType::float32) {
    l.q_offset = l.total;
    l.y_offset = l.q_offset + floats(a.batch * a.rows * a.d);
    l.total = l.y_offset + floats(a.batch * a.rows * a.dv);
  }
  if (a.dtype != DType::float32) {
    l.kt_offset = l.total;
    l.v_offset = l.kt_offset + floats(a.batch * a.d * a.sk);
    l.total = l.v_offset + floats(a.batch * a.sk * a.dv);
  }
  return l;
}

// Element strides of a mask broadcast to [lead.., Sq, Sk] (0 along its broadcast axes).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t s = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const size_t k = dims.size() - 1 - i;
    strides[rank - 1 - i] = dims[k] == 1 ? 0 : s;
    s *= dims[k];
  }
  return strides;
}

class AttentionState final : public graph::KernelState {
 public:
  AttentionState(const graph::Node& n, const AttentionDims& a)
      : dims(a), layout(layout_of(n, a)), full(make_block(n, a, a.rows)) {
    if (a.sq % a.rows != 0) tail = make_block(n, a, a.sq % a.rows);
  }
  AttentionDims dims;
  Layout layout;
  Block full;
  std::optional<Block> tail;
};

std::unique_ptr<graph::KernelState> attention_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  return std::make_unique<AttentionState>(ctx.node(), attention_dims(ctx.node(), e));
}

uint64_t attention_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                             const std::vector<graph::ConcreteTensor>& out) {
  return workspace_of(
      [](const graph::Node& node, const Extents& e) {
        return layout_of(node, attention_dims(node, e)).total;
      },
      n, in, out);
}

// What the row pass reads besides the scores: the scale, the masks, as broadcast strides. T is
// the tensors' element type (float, Float16 or BFloat16).
template <class T>
struct Masks {
  float scale = 1;
  std::optional<float> divisor;  // a Div's constant: the scores are divided by it
  const T* add = nullptr;
  const bool* keep = nullptr;
  float fill = 0;
  std::vector<int64_t> add_strides, keep_strides;  // [lead.., Sq, Sk]
};

// Offset of the mask row for leading index b (row-major over `lead`) and query row q.
int64_t mask_row(const std::vector<int64_t>& strides, const std::vector<int64_t>& lead, int64_t b,
                 int64_t q) {
  int64_t at = q * strides[lead.size()];
  for (size_t i = lead.size(); i-- > 0;) {
    at += (b % lead[i]) * strides[i];
    b /= lead[i];
  }
  return at;
}

// Rounds a row of scores to what T holds, where a replaced node stored T (nothing for float).
template <class T>
void store_as(float* s, size_t n) {
  if constexpr (!std::is_same_v<T, float>) round_through<T>(s, n);
}

// The additive mask's row (`step` 1) or its one broadcast element (`step` 0) added to the row.
template <class T>
void add_mask(float* s, size_t n, const T* a, int64_t step) {
  if constexpr (std::is_same_v<T, float>) {
    if (step == 1) {
      for (size_t j = 0; j < n; ++j) s[j] += a[j];
    } else {
      for (size_t j = 0; j < n; ++j) s[j] += a[0];
    }
  } else {
    if (step == 0) {
      const float c = to_float(a[0]);
      for (size_t j = 0; j < n; ++j) s[j] += c;
      return;
    }
    constexpr size_t kChunk = 256;
    std::array<float, kChunk> m;  // NOLINT(cppcoreguidelines-pro-type-member-init)
    for (size_t j0 = 0; j0 < n; j0 += kChunk) {
      const size_t k = std::min(kChunk, n - j0);
      widen_row(a + j0, m.data(), k);
      for (size_t j = 0; j < k; ++j) s[j0 + j] += m[j];
    }
  }
}

// One row of scores: scale, mask, softmax, in place; for 16-bit T rounded as the nodes stored.
template <class T>
void normalise_row(float* s, int64_t n, const Masks<T>& m, int64_t add_at, int64_t keep_at,
                   int64_t add_step, int64_t keep_step) {
  const auto count = static_cast<size_t>(n);
  store_as<T>(s, count);
  if (m.divisor) {
    const float c = *m.divisor;
    for (size_t j = 0; j < count; ++j) s[j] /= c;
    store_as<T>(s, count);
  } else if (m.scale != 1.0F) {
    for (size_t j = 0; j < count; ++j) s[j] *= m.scale;
    store_as<T>(s, count);
  }
  if (m.add != nullptr) {
    add_mask(s, count, m.add + add_at, add_step);
    store_as<T>(s, count);
  }
  if (m.keep != nullptr) {
    const bool* k = m.keep + keep_at;
    for (size_t j = 0; j < count; ++j) {
      if (!k[keep_step == 1 ? j : 0]) s[j] = m.fill;
    }
  }
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    const float top = simd::max_as<V>(s, count);
    const float sum = simd::exp_sum_as<V>(s, s, count, top);
    const float inv = 1.0F / sum;
    for (size_t j = 0; j < count; ++j) s[j] *= inv;
  });
  store_as<T>(s, count);
}

template <class T>
Masks<T> masks_of(graph::KernelContext& ctx, size_t rank) {
  Masks<T> m;
  m.scale = ctx.attr_float("scale", 1.0F);
  if (ctx.node().attribute("divisor") != nullptr) m.divisor = ctx.attr_float("divisor", 1.0F);
  const DType t = ctx.input(0).dtype;
  if (ctx.has_input(3)) {
    if (ctx.input(3).dtype != t) ctx.fail("the additive mask must be of Q's dtype");
    m.add = ctx.input(3).as<const T>();
    const auto& d = ctx.input(3).dims;
    m.add_strides = broadcast_strides({d.begin(), d.end()}, rank);
  }
  if (ctx.has_input(4)) {
    if (ctx.input(4).dtype != DType::boolean || !ctx.has_input(5) || ctx.input(5).numel() != 1 ||
        ctx.input(5).dtype != t) {
      ctx.fail("the keep condition must be boolean, with a fill of one element of Q's dtype");
    }
    m.keep = ctx.input(4).as<const bool>();
    const auto& d = ctx.input(4).dims;
    m.keep_strides = broadcast_strides({d.begin(), d.end()}, rank);
    if constexpr (std::is_same_v<T, float>) {
      m.fill = ctx.input(5).as<const float>()[0];
    } else {
      m.fill = to_float(ctx.input(5).as<const T>()[0]);
    }
  }
  return m;
}

// Rows [r0, r0 + n) of each of the batch's [Sq, width] matrices of T, into a dense float block.
template <class T>
void gather_rows(const AttentionDims& a, const T* from, float* to, int64_t r0, int64_t n,
                 int64_t width) {
  for (int64_t bi = 0; bi < a.batch; ++bi) {
    const T* row = from + (bi * a.sq + r0) * width;
    const auto count = static_cast<size_t>(n * width);
    if constexpr (std::is_same_v<T, float>) {
      std::memcpy(to + bi * n * width, row, count * sizeof(float));
    } else {
      widen_row(row, to + bi * n * width, count);
    }
  }
}

// The dense float block back into rows [r0, r0 + n) of each [Sq, width] matrix, rounded to T.
template <class T>
void scatter_rows(const AttentionDims& a, const float* from, T* to, int64_t r0, int64_t n,
                  int64_t width) {
  for (int64_t bi = 0; bi < a.batch; ++bi) {
    T* row = to + (bi * a.sq + r0) * width;
    const auto count = static_cast<size_t>(n * width);
    if constexpr (std::is_same_v<T, float>) {
      std::memcpy(row, from + bi * n * width, count * sizeof(float));
    } else {
      narrow_row(from + bi * n * width, row, count);
    }
  }
}

template <class T>
void run_blocks(graph::KernelContext& ctx, AttentionState& st) {
  const AttentionDims& a = st.dims;
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < st.layout.total) {
    ctx.fail("the step's workspace (" + std::to_string(ws.size()) +
             " bytes) is smaller than the scores block needs (" + std::to_string(st.layout.total) +
             " bytes)");
  }
  auto* block = reinterpret_cast<float*>(ws.data() + st.layout.block_offset);
  const Masks<T> m = masks_of<T>(ctx, a.lead.size() + 2);
  const auto* q = ctx.input(0).as<const T>();
  auto* y = ctx.output(0).as<T>();
  const void* kt = ctx.input(1).data;
  const void* v = ctx.input(2).data;
  if constexpr (!std::is_same_v<T, float>) {
    auto* kt32 = reinterpret_cast<float*>(ws.data() + st.layout.kt_offset);
    auto* v32 = reinterpret_cast<float*>(ws.data() + st.layout.v_offset);
    through_float32_detail::widen_into(ctx.threads(), ctx.input(1), kt32);
    through_float32_detail::widen_into(ctx.threads(), ctx.input(2), v32);
    kt = kt32;
    v = v32;
  }
  const bool blocks = st.layout.q_offset > 0;
  auto* q_block = reinterpret_cast<float*>(ws.data() + st.layout.q_offset);
  auto* y_block = reinterpret_cast<float*>(ws.data() + st.layout.y_offset);
  for (int64_t r0 = 0; r0 < a.sq; r0 += a.rows) {
    Block& b = r0 + a.rows <= a.sq ? st.full : *st.tail;
    if (blocks) gather_rows(a, q, q_block, r0, b.rows, a.d);
    b.scores->bind(DNNL_ARG_SRC, blocks ? q_block : static_cast<const void*>(q));
    b.scores->bind(DNNL_ARG_WEIGHTS, kt);
    b.scores->bind(DNNL_ARG_DST, block);
    b.scores->execute(ctx);
    const auto rows = static_cast<size_t>(a.batch * b.rows);
    parallel_for(
        ctx.threads(), rows,
        [&](size_t begin, size_t end) {
          for (size_t i = begin; i < end; ++i) {
            const auto bi = static_cast<int64_t>(i) / b.rows;
            const int64_t qi = r0 + static_cast<int64_t>(i) % b.rows;
            const int64_t add_at = m.add ? mask_row(m.add_strides, a.lead, bi, qi) : 0;
            const int64_t keep_at = m.keep ? mask_row(m.keep_strides, a.lead, bi, qi) : 0;
            normalise_row(block + static_cast<int64_t>(i) * a.sk, a.sk, m, add_at, keep_at,
                          m.add ? m.add_strides.back() : 0, m.keep ? m.keep_strides.back() : 0);
          }
        },
        std::max<size_t>(1, 4096 / static_cast<size_t>(a.sk)));
    b.context->bind(DNNL_ARG_SRC, block);
    b.context->bind(DNNL_ARG_WEIGHTS, v);
    b.context->bind(DNNL_ARG_DST, blocks ? y_block : static_cast<void*>(y));
    b.context->execute(ctx);
    if (blocks) scatter_rows(a, y_block, y, r0, b.rows, a.dv);
  }
}

void run_attention(graph::KernelContext& ctx) {
  auto* st = prepared_state<AttentionState>(ctx);
  if (st == nullptr) return;
  switch (st->dims.dtype) {
    case DType::float16:
      return run_blocks<Float16>(ctx, *st);
    case DType::bfloat16:
      return run_blocks<BFloat16>(ctx, *st);
    default:
      return run_blocks<float>(ctx, *st);
  }
}

}  // namespace

void register_attention(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("footprint", "Attention");
  row.kernel = run_attention;
  row.prepare = attention_prepare;
  row.workspace = attention_workspace;
  row.kernel_dtypes = DTypeSet{DType::float32, DType::float16, DType::bfloat16};
}

}  // namespace footprint::runtime::kernels
