#include "half_gemv.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "epilogue.hpp"
#include "float16.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "parallel_for.hpp"
#include "row_dots.hpp"

namespace footprint::runtime::kernels::half_gemv {
namespace {

constexpr int64_t kMaxRows = 8;
// Columns of B (rows of the [N, K] copy) a step of the loop computes.
constexpr size_t kColumns = 32;

struct Shape {
  int64_t m = 0, k = 0, n = 0;
  bool trans_b = false, has_c = false;
  DType dtype = DType::undefined;  // B's
  // A, Y: float32 carriers of `dtype` values (graph/carry_float32.hpp), read and written as
  // floats (the runtime rounds Y after).
  bool a_float = false, y_float = false;
};

// The product the path takes, from what every hook sees: dtypes [A, B, Y, C] and extents.
std::optional<Shape> shape_of(const graph::Node& node, std::span<const DType> dtypes,
                              std::span<const std::span<const int64_t>> dims, bool has_c) {
  if (dtypes.size() < 3 || dims[0].size() != 2 || dims[1].size() != 2) return std::nullopt;
  const DType t = dtypes[1];
  if (!is_16bit(t)) return std::nullopt;
  const auto carried = [&](DType d) { return d == DType::float32 && node.rounds_to == t; };
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (dtypes[i] != t && !((i == 0 || i == 2) && carried(dtypes[i]))) return std::nullopt;
  }
  if (graph::attr_int(node, "transA", 0) != 0 || graph::attr_float(node, "alpha", 1.0F) != 1.0F) {
    return std::nullopt;
  }
  Shape s;
  s.dtype = t;
  s.a_float = dtypes[0] == DType::float32;
  s.y_float = dtypes[2] == DType::float32;
  s.trans_b = graph::attr_int(node, "transB", 0) != 0;
  s.m = dims[0][0];
  s.k = dims[0][1];
  s.n = dims[1][s.trans_b ? 0 : 1];
  if (s.m < 1 || s.m > kMaxRows || s.k < 1 || s.n < 1 || dims[1][s.trans_b ? 1 : 0] != s.k) {
    return std::nullopt;
  }
  s.has_c = has_c && graph::attr_float(node, "beta", 1.0F) != 0.0F;
  if (s.has_c) {
    const std::span<const int64_t> c = dims[2];
    const bool row = (c.size() == 1 && c[0] == s.n) || (c.size() == 2 && c[0] == 1 && c[1] == s.n);
    if (!row || graph::attr_float(node, "beta", 1.0F) != 1.0F) return std::nullopt;
  }
  return s;
}

std::optional<Shape> shape_of(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                              const std::vector<graph::ConcreteTensor>& out) {
  if (in.size() < 2 || out.empty()) return std::nullopt;
  const bool has_c = in.size() > 2 && in[2].dtype != DType::undefined;
  std::array<DType, 4> dtypes{in[0].dtype, in[1].dtype, out[0].dtype, DType::undefined};
  std::array<std::span<const int64_t>, 3> dims{in[0].dims, in[1].dims, {}};
  size_t count = 3;
  if (has_c) {
    dtypes[3] = in[2].dtype;
    dims[2] = in[2].dims;
    count = 4;
  }
  return shape_of(node, std::span(dtypes.data(), count), dims, has_c);
}

// Y has B's dtype (Gemm's one type T), or is a float32 carrier the node rounds (Node::
// rounded_outputs), so the prepared node's inputs say it all.
std::optional<Shape> shape_of(const graph::KernelContext& ctx) {
  const graph::TensorRef* c = ctx.input_or_null(2);
  const DType y = (ctx.node().rounded_outputs & 1U) != 0 ? DType::float32 : ctx.input(1).dtype;
  std::array<DType, 4> dtypes{ctx.input(0).dtype, ctx.input(1).dtype, y,
                              c != nullptr ? c->dtype : DType::undefined};
  std::array<std::span<const int64_t>, 3> dims{ctx.input(0).dims, ctx.input(1).dims,
                                               c != nullptr ? c->dims : std::span<const int64_t>{}};
  return shape_of(ctx.node(), std::span(dtypes.data(), c != nullptr ? 4 : 3), dims, c != nullptr);
}

uint64_t b_bytes(const Shape& s) {
  return static_cast<uint64_t>(s.n * s.k) * 2;
}

uint64_t c_bytes(const Shape& s) {
  return s.has_c ? static_cast<uint64_t>(s.n) * sizeof(float) : 0;
}

class State final : public graph::KernelState {
 public:
  explicit State(const Shape& s) : shape(s), b(static_cast<size_t>(s.n * s.k)) {
    if (s.has_c) c.resize(static_cast<size_t>(s.n));
  }
  uint64_t owned_bytes() const override {
    return b.size() * sizeof(uint16_t) + c.size() * sizeof(float);
  }

  Shape shape;
  std::vector<uint16_t> b;  // [N, K], the 16-bit pattern as stored
  std::vector<float> c;     // [N] or empty
};

// Columns [n0, n0 + cols) of every row of Y, as floats in `out` [M][kColumns]: B's rows widened
// as they are loaded (row_dots.hpp); past the first row of A they come from the cache.
template <class H>
void columns(const State& st, const float* a, size_t n0, size_t cols,
             std::array<std::array<float, kColumns>, kMaxRows>& out) {
  const auto k = static_cast<size_t>(st.shape.k);
  const auto* b = reinterpret_cast<const H*>(st.b.data() + n0 * k);
  for (size_t r = 0; r < static_cast<size_t>(st.shape.m); ++r) {
    row_dots(b, k, a + r * k, out[r].data(), k, cols);
    if (!st.c.empty()) {
      for (size_t j = 0; j < cols; ++j) out[r][j] += st.c[n0 + j];
    }
  }
}

template <class H>
void run_typed(graph::KernelContext& ctx, const State& st) {
  const Shape& s = st.shape;
  const auto k = static_cast<size_t>(s.k);
  const auto m = static_cast<size_t>(s.m);
  const auto n = static_cast<size_t>(s.n);
  const float* a = nullptr;
  if (s.a_float) {
    a = ctx.input(0).as<const float>();
  } else {
    const std::span<std::byte> scratch = ctx.workspace();
    if (scratch.size() < m * k * sizeof(float)) ctx.fail("the workspace is too small");
    auto* wide = reinterpret_cast<float*>(scratch.data());
    const H* a16 = ctx.input(0).as<const H>();
    for (size_t r = 0; r < m; ++r) widen_row(a16 + r * k, wide + r * k, k);
    a = wide;
  }
  void* y = ctx.output(0).data;
  const std::span<const graph::Epilogue> epilogues = ctx.node().epilogues;
  parallel_for(
      ctx.threads(), (n + kColumns - 1) / kColumns,
      [&](size_t begin, size_t end) {
        std::array<std::array<float, kColumns>, kMaxRows> out{};
        for (size_t block = begin; block < end; ++block) {
          const size_t n0 = block * kColumns;
          const size_t cols = std::min(kColumns, n - n0);
          columns<H>(st, a, n0, cols, out);
          for (size_t r = 0; r < m; ++r) {
            apply_epilogues(epilogues, out[r].data(), cols);
            if (s.y_float) {
              std::copy_n(out[r].data(), cols, static_cast<float*>(y) + r * n + n0);
            } else {
              narrow_row(out[r].data(), static_cast<H*>(y) + r * n + n0, cols);
            }
          }
        }
      },
      8);
}

}  // namespace

bool takes(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
           const std::vector<graph::ConcreteTensor>& out) {
  return shape_of(node, in, out).has_value();
}

bool takes(const graph::KernelContext& ctx) {
  return shape_of(ctx).has_value();
}

uint64_t packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                const std::vector<graph::ConcreteTensor>& out) {
  const auto s = shape_of(node, in, out);
  return s ? b_bytes(*s) + c_bytes(*s) : 0;
}

uint64_t workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                   const std::vector<graph::ConcreteTensor>& out) {
  const auto s = shape_of(node, in, out);
  return s && !s->a_float ? static_cast<uint64_t>(s->m * s->k) * sizeof(float) : 0;
}

std::unique_ptr<graph::KernelState> prepare(const graph::KernelContext& ctx) {
  const std::optional<Shape> s = shape_of(ctx);
  if (!s) ctx.fail("the 16-bit few-row product does not take this node");
  const graph::TensorRef& b = ctx.input(1);
  const graph::TensorRef* c = s->has_c ? ctx.input_or_null(2) : nullptr;
  if (b.data == nullptr || (c != nullptr && c->data == nullptr)) {
    ctx.fail("B and C are " + std::string(dtype_name(s->dtype)) +
             " computed while running; this kernel takes 16-bit floats there only as constants");
  }
  auto st = std::make_unique<State>(*s);
  const auto k = static_cast<size_t>(s->k);
  const auto n = static_cast<size_t>(s->n);
  const auto* from = b.as<const uint16_t>();
  if (s->trans_b) {
    std::copy_n(from, n * k, st->b.begin());
  } else {  // [K, N] -> [N, K]
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < n; ++j) st->b[j * k + i] = from[i * n + j];
    }
  }
  if (c != nullptr) {
    if (s->dtype == DType::float16) {
      widen_row(c->as<const Float16>(), st->c.data(), n);
    } else {
      widen_row(c->as<const BFloat16>(), st->c.data(), n);
    }
  }
  return st;
}

bool prepared(const graph::KernelContext& ctx) {
  return dynamic_cast<const State*>(ctx.state()) != nullptr;
}

void run(graph::KernelContext& ctx) {
  const auto& st = *dynamic_cast<const State*>(ctx.state());
  if (st.shape.dtype == DType::float16) return run_typed<Float16>(ctx, st);
  run_typed<BFloat16>(ctx, st);
}

}  // namespace footprint::runtime::kernels::half_gemv
