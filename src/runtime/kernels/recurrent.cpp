// Recurrent layers: LSTM, GRU and RNN in float32, every ONNX attribute that changes the result
// (direction, activations with their alpha/beta, clip, input_forget, linear_before_reset,
// layout) and every optional input and output.
//
// Memory: the kernel allocates nothing while it runs. Per direction it first projects every time
// step's input at once (X W^T plus the biases, [seq * batch, gates * hidden]: one product whose
// weights stay in cache over the rows, as onnxruntime does), then walks the sequence one step at
// a time with one gate buffer for the batch ([batch, gates * hidden]). So its scratch grows with
// the sequence by the projection, the price of that speed. The running hidden and cell states live
// in Y_h / Y_c when the node has them (their final value is exactly the running state's last one)
// and in the workspace otherwise. recurrent_workspace() sizes exactly that, from the same facts the
// kernel decides with (which outputs the node has), and the kernel checks it got at least that
// much.
//
// Sequence lengths: a batch entry with length L reads its first L time steps (the reverse
// direction reads them from L-1 down to 0); its Y rows past L are zero and its final state is the
// one after L steps (the initial state when L is 0).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "parallel_for.hpp"
#include "simd_math.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

enum class Cell { lstm, gru, rnn };

// Gates per cell, in ONNX's order: LSTM i,o,f,c; GRU z,r,h; RNN i.
constexpr int64_t gate_count(Cell cell) {
  return cell == Cell::lstm ? 4 : cell == Cell::gru ? 3 : 1;
}

// Activation functions a cell applies (f, g, h for LSTM; f, g for GRU; f for RNN).
constexpr int activation_count(Cell cell) {
  return cell == Cell::lstm ? 3 : cell == Cell::gru ? 2 : 1;
}

// ---- Activations

enum class ActKind {
  sigmoid,
  tanh,
  relu,
  affine,
  leaky_relu,
  thresholded_relu,
  scaled_tanh,
  hard_sigmoid,
  elu,
  softsign,
  softplus
};

struct Activation {
  ActKind kind = ActKind::sigmoid;
  float alpha = 0;
  float beta = 0;
};

struct ActSpec {
  std::string_view name;
  ActKind kind;
  int params;  // how many of activation_alpha / activation_beta it consumes (0, 1 or 2)
  float alpha;
  float beta;  // defaults: those of the ONNX operator of the same name
};

constexpr ActSpec kActivations[] = {
    {"Sigmoid", ActKind::sigmoid, 0, 0.f, 0.f},
    {"Tanh", ActKind::tanh, 0, 0.f, 0.f},
    {"Relu", ActKind::relu, 0, 0.f, 0.f},
    {"Affine", ActKind::affine, 2, 1.f, 0.f},
    {"LeakyRelu", ActKind::leaky_relu, 1, 0.01f, 0.f},
    {"ThresholdedRelu", ActKind::thresholded_relu, 1, 1.f, 0.f},
    {"ScaledTanh", ActKind::scaled_tanh, 2, 1.f, 1.f},
    {"HardSigmoid", ActKind::hard_sigmoid, 2, 0.2f, 0.5f},
    {"Elu", ActKind::elu, 1, 1.f, 0.f},
    {"Softsign", ActKind::softsign, 0, 0.f, 0.f},
    {"Softplus", ActKind::softplus, 0, 0.f, 0.f},
};

// Exporters differ in case ("sigmoid", "Sigmoid"); the names are ASCII.
bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

const ActSpec* find_activation(std::string_view name) {
  for (const ActSpec& s : kActivations) {
    if (same_name(s.name, name)) return &s;
  }
  return nullptr;
}

// The k-th float of a repeated attribute field, decoded in place (no vector: the kernel must not
// allocate while running).
float nth_float(const onnx::RepeatedScalar& values, size_t k) {
  float out = 0;
  size_t i = 0;
  values.for_each([&](uint64_t raw) {
    if (i++ == k) out = std::bit_cast<float>(static_cast<uint32_t>(raw));
  });
  return out;
}

// Applies `a` to n values in place; the switch sits outside the loop so each loop vectorizes.
void activate(const Activation& a, float* x, int64_t n) {
  const float al = a.alpha;
  const float be = a.beta;
  switch (a.kind) {
    // The gates' own functions, a vector at a time: a loop over libm's exp and tanh was most of
    // a GRU's time.
    case ActKind::sigmoid:
      simd::map(x, x, static_cast<size_t>(n), [](auto v) { return simd::sigmoid(v); });
      return;
    case ActKind::tanh:
      simd::map(x, x, static_cast<size_t>(n), [](auto v) { return simd::tanh(v); });
      return;
    case ActKind::relu:
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.f);
      return;
    case ActKind::affine:
      for (int64_t i = 0; i < n; ++i) x[i] = al * x[i] + be;
      return;
    case ActKind::leaky_relu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : al * x[i];
      return;
    case ActKind::thresholded_relu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > al ? x[i] : 0.f;
      return;
    case ActKind::scaled_tanh:
      for (int64_t i = 0; i < n; ++i) x[i] = al * std::tanh(be * x[i]);
      return;
    case ActKind::hard_sigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(al * x[i] + be, 0.f, 1.f);
      return;
    case ActKind::elu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : al * (std::exp(x[i]) - 1.f);
      return;
    case ActKind::softsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.f + std::fabs(x[i]));
      return;
    case ActKind::softplus:
      for (int64_t i = 0; i < n; ++i) x[i] = std::log1p(std::exp(x[i]));
      return;
  }
}

// `clip` bounds the activations' inputs to [-clip, clip]; infinity when the node has none.
void clip_values(float clip, float* x, int64_t n) {
  if (std::isinf(clip)) return;
  for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -clip, clip);
}

// ---- Gate matmuls

// Columns [begin, end) of add_matmul_wt; inlined into each vector width's copy.
void add_matmul_wt_columns(const float* a, int64_t lda, int64_t m, const float* w, int64_t k,
                           float* c, int64_t ldc, size_t begin, size_t end) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    const float* a0 = a + i * lda;
    const float* a1 = a0 + lda;
    const float* a2 = a1 + lda;
    const float* a3 = a2 + lda;
    for (auto j = static_cast<int64_t>(begin); j < static_cast<int64_t>(end); ++j) {
      const float* wr = w + j * k;
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
      for (int64_t q = 0; q < k; ++q) {
        s0 += a0[q] * wr[q];
        s1 += a1[q] * wr[q];
        s2 += a2[q] * wr[q];
        s3 += a3[q] * wr[q];
      }
      c[i * ldc + j] += s0;
      c[(i + 1) * ldc + j] += s1;
      c[(i + 2) * ldc + j] += s2;
      c[(i + 3) * ldc + j] += s3;
    }
  }
  // A single row (a batch of one, each time step's recurrent product): four columns at a time,
  // so that four independent sums hide each multiply-add's latency.
  for (; i < m; ++i) {
    const float* ar = a + i * lda;
    auto j = static_cast<int64_t>(begin);
    for (; j + 4 <= static_cast<int64_t>(end); j += 4) {
      const float* w0 = w + j * k;
      const float* w1 = w0 + k;
      const float* w2 = w1 + k;
      const float* w3 = w2 + k;
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
      for (int64_t q = 0; q < k; ++q) {
        s0 += ar[q] * w0[q];
        s1 += ar[q] * w1[q];
        s2 += ar[q] * w2[q];
        s3 += ar[q] * w3[q];
      }
      c[i * ldc + j] += s0;
      c[i * ldc + j + 1] += s1;
      c[i * ldc + j + 2] += s2;
      c[i * ldc + j + 3] += s3;
    }
    for (; j < static_cast<int64_t>(end); ++j) {
      const float* wr = w + j * k;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t q = 0; q < k; ++q) s += ar[q] * wr[q];
      c[i * ldc + j] += s;
    }
  }
}

// c[m, j] += a[m, :] . w[j, :] for j < n: the gates' X*W^T and H*R^T with W, R as ONNX stores
// them ([gates * hidden, k], row-major), so both operands of each dot product are contiguous.
// Four rows of `a` share every row of `w` while it is in cache.
void add_matmul_wt(const float* a, int64_t lda, int64_t m, const float* w, int64_t n, int64_t k,
                   float* c, int64_t ldc, int threads) {
  // Columns split across threads only when each chunk has enough work to pay for the team.
  const auto min_chunk = static_cast<size_t>(std::max<int64_t>(1, 32768 / std::max<int64_t>(k, 1)));
  parallel_for(
      threads, static_cast<size_t>(n),
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] { add_matmul_wt_columns(a, lda, m, w, k, c, ldc, begin, end); });
      },
      min_chunk);
}

// Packed gate weights: each gate's H columns in panels of kPanel columns, a panel holding its
// columns' k weights row by row (kPanel floats per row, zeros past the gate's last column), so the
// product streams each panel's k x kPanel floats in order. Transposed in place ([k, gates * H])
// the product read kPanel floats a row 4 * gates * H bytes apart, a page or more per row at the
// widths people train (hidden 512-1024), and ran at half onnxruntime's speed there
// (docs/BENCHMARKS.md, "Recurrent nets at real sizes"). kPanel is fixed (not the CPU's vector
// width) so that the packed bytes analysis predicts do not depend on the machine.
constexpr int64_t kPanel = 32;

int64_t panels_per_gate(int64_t hidden) {
  return (hidden + kPanel - 1) / kPanel;
}

// Rows [0, R) of `a` times one panel, added into c's first `width` columns: the R x kPanel sums
// stay in registers while k runs, so each weight vector loaded serves R rows. One row (a batch
// of one, every time step) keeps two sets of sums, even and odd k, so that the multiply-adds'
// latency does not pace it.
// How far ahead a batch of one asks for its panel's rows (4 KiB): the panel streams in order, but
// from L3 at real widths (an LSTM's R at hidden 1024 is 16 MiB), and asking ahead took a GRU at
// hidden 256 from 3.2 to 2.5 ms and an LSTM at 1024 from 169 to about 155 (`footprint run
// --repeat 5` on bench/wide_recurrent.sh's models, one thread).
constexpr int64_t kPrefetchRows = 32;

template <class V, int R>
void panel_block(const float* a, int64_t lda, const float* panel, int64_t k, float* c, int64_t ldc,
                 int64_t width) {
  constexpr auto lanes = static_cast<int64_t>(sizeof(V) / sizeof(float));
  constexpr int64_t vectors = kPanel / lanes;
  V acc[R][vectors];
  V odd[R][vectors];  // one row: the sums of odd k apart
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int64_t u = 0; u < vectors; ++u) acc[r][u] = odd[r][u] = simd::splat<V>(0.0f);
  }
  int64_t q = 0;
  if constexpr (R == 1) {
    for (; q + 2 <= k; q += 2) {
      __builtin_prefetch(panel + (q + kPrefetchRows) * kPanel);
      __builtin_prefetch(panel + (q + kPrefetchRows) * kPanel + 16);
      __builtin_prefetch(panel + (q + kPrefetchRows + 1) * kPanel);
      __builtin_prefetch(panel + (q + kPrefetchRows + 1) * kPanel + 16);
      const V x0 = simd::splat<V>(a[q]);
      const V x1 = simd::splat<V>(a[q + 1]);
#pragma GCC unroll 16
      for (int64_t u = 0; u < vectors; ++u) {
        V w0, w1;
        std::memcpy(&w0, panel + q * kPanel + u * lanes, sizeof w0);
        std::memcpy(&w1, panel + (q + 1) * kPanel + u * lanes, sizeof w1);
        acc[0][u] += x0 * w0;
        odd[0][u] += x1 * w1;
      }
    }
  }
  for (; q < k; ++q) {
#pragma GCC unroll 16
    for (int64_t u = 0; u < vectors; ++u) {
      V w;
      std::memcpy(&w, panel + q * kPanel + u * lanes, sizeof w);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r][u] += simd::splat<V>(a[r * lda + q]) * w;
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    std::array<float, kPanel> sum;  // NOLINT(cppcoreguidelines-pro-type-member-init)
#pragma GCC unroll 16
    for (int64_t u = 0; u < vectors; ++u) {
      const V v = acc[r][u] + odd[r][u];
      std::memcpy(sum.data() + u * lanes, &v, sizeof v);
    }
    float* row = c + r * ldc;
    for (int64_t t = 0; t < width; ++t) row[t] += sum[static_cast<size_t>(t)];
  }
}

// One panel's columns for every row of `a`: four rows at a time, then one by one.
template <class V>
void panel_rows_as(const float* a, int64_t lda, int64_t m, const float* panel, int64_t k, float* c,
                   int64_t ldc, int64_t width) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    panel_block<V, 4>(a + i * lda, lda, panel, k, c + i * ldc, ldc, width);
  }
  for (; i < m; ++i) panel_block<V, 1>(a + i * lda, lda, panel, k, c + i * ldc, ldc, width);
}

// W or R of one direction: as the model stores it ([gates * hidden, k]) or packed in panels
// (kPanel), both seen from gate row `first` on (a gate's first row, when packed).
struct GateWeights {
  const float* data = nullptr;
  int64_t k = 0;       // the product's inner extent (input or hidden)
  int64_t hidden = 0;  // a gate's rows
  bool packed = false;

  GateWeights from_row(int64_t first) const {
    GateWeights w = *this;
    w.data += packed ? first / hidden * panels_per_gate(hidden) * k * kPanel : first * k;
    return w;
  }
};

// c[m, j] += a[m, :] . w[j, :] for the first n rows of packed w (whole gates): its panels split
// between threads.
void add_matmul_panels(const float* a, int64_t lda, int64_t m, const GateWeights& w, int64_t n,
                       float* c, int64_t ldc, int threads) {
  const int64_t per_gate = panels_per_gate(w.hidden);
  const int64_t panels = n / w.hidden * per_gate;
  const auto min_chunk =
      static_cast<size_t>(std::max<int64_t>(1, 1024 / std::max<int64_t>(w.k, 1)));
  parallel_for(
      threads, static_cast<size_t>(panels),
      [&](size_t begin, size_t end) {
        simd::with_widest([&](auto tag) {
          for (auto p = static_cast<int64_t>(begin); p < static_cast<int64_t>(end); ++p) {
            const int64_t first = p % per_gate * kPanel;  // the panel's first column in its gate
            const int64_t column = p / per_gate * w.hidden + first;
            panel_rows_as<decltype(tag)>(a, lda, m, w.data + p * w.k * kPanel, w.k, c + column, ldc,
                                         std::min(kPanel, w.hidden - first));
          }
        });
      },
      min_chunk);
}

// c[m, j] += a[m, :] . w[j, :] for j < n, whichever way w is stored.
void add_gate_product(const float* a, int64_t lda, int64_t m, const GateWeights& w, int64_t n,
                      float* c, int64_t ldc, int threads) {
  if (w.packed) {
    add_matmul_panels(a, lda, m, w, n, c, ldc, threads);
  } else {
    add_matmul_wt(a, lda, m, w.data, n, w.k, c, ldc, threads);
  }
}

// ---- The node's configuration

// What the node's attributes and input extents say, read without allocating.
struct Config {
  Cell cell = Cell::lstm;
  int64_t seq = 0;
  int64_t batch = 0;
  int64_t input = 0;
  int64_t hidden = 0;
  int64_t dirs = 1;
  bool reverse_only = false;  // direction == "reverse"
  bool batch_first = false;   // layout 1
  float clip = std::numeric_limits<float>::infinity();
  bool input_forget = false;
  bool linear_before_reset = false;
  Activation act[2][3];  // [direction][f, g, h]
};

int64_t attr_int(const graph::Node& n, std::string_view name, int64_t fallback) {
  const auto* a = n.attribute(name);
  return a == nullptr ? fallback : a->i;
}

// hidden_size, or R's last extent when the attribute is absent (R is [dirs, gates*H, H]).
int64_t hidden_size(const graph::Node& n, std::span<const int64_t> r_dims) {
  const int64_t h = attr_int(n, "hidden_size", -1);
  if (h >= 0) return h;
  return r_dims.size() == 3 ? r_dims[2] : 0;
}

// X's extents in ONNX order [seq, batch, input] whatever the layout.
void sequence_extents(const graph::Node& n, std::span<const int64_t> x_dims, int64_t& seq,
                      int64_t& batch) {
  const bool batch_first = attr_int(n, "layout", 0) != 0;
  seq = x_dims.size() == 3 ? x_dims[batch_first ? 1 : 0] : 0;
  batch = x_dims.size() == 3 ? x_dims[batch_first ? 0 : 1] : 0;
}

void read_direction(const KernelContext& ctx, Config& c) {
  const std::string_view d = ctx.attr_string("direction", "forward");
  if (d == "forward") return;
  if (d == "reverse") {
    c.reverse_only = true;
  } else if (d == "bidirectional") {
    c.dirs = 2;
  } else {
    ctx.fail("direction '" + std::string(d) + "' is not forward, reverse or bidirectional");
  }
}

// activations (with activation_alpha / activation_beta consumed in order, only by the functions
// that take them), for each direction. One direction's list serves both when only that is given.
void read_activations(const KernelContext& ctx, Config& c) {
  // Rows in Cell's order: LSTM, GRU, RNN.
  static constexpr std::string_view kDefaults[3][3] = {
      {"Sigmoid", "Tanh", "Tanh"}, {"Sigmoid", "Tanh", ""}, {"Tanh", "", ""}};
  const int per_dir = activation_count(c.cell);
  const auto* names = ctx.attribute("activations");
  const auto* alphas = ctx.attribute("activation_alpha");
  const auto* betas = ctx.attribute("activation_beta");
  const size_t given = names == nullptr ? 0 : names->strings.size();
  if (given != 0 && given != static_cast<size_t>(per_dir) &&
      given != static_cast<size_t>(per_dir * c.dirs)) {
    ctx.fail("activations has " + std::to_string(given) + " names; expected " +
             std::to_string(per_dir * c.dirs));
  }
  size_t next_alpha = 0;
  size_t next_beta = 0;
  for (int64_t d = 0; d < c.dirs; ++d) {
    for (int k = 0; k < per_dir; ++k) {
      const size_t at = static_cast<size_t>(d * per_dir + k) % std::max<size_t>(given, 1);
      const std::string_view name =
          given == 0 ? kDefaults[static_cast<int>(c.cell)][k] : names->strings[at];
      const ActSpec* spec = find_activation(name);
      if (spec == nullptr) ctx.fail("activation '" + std::string(name) + "' is not supported");
      Activation& a = c.act[d][k];
      a = {spec->kind, spec->alpha, spec->beta};
      // A repeated list (given == per_dir) reuses its own alpha/beta for the second direction.
      if (given == static_cast<size_t>(per_dir) && k == 0) next_alpha = next_beta = 0;
      if (spec->params >= 1 && alphas != nullptr && next_alpha < alphas->floats.count) {
        a.alpha = nth_float(alphas->floats, next_alpha++);
      }
      if (spec->params >= 2 && betas != nullptr && next_beta < betas->floats.count) {
        a.beta = nth_float(betas->floats, next_beta++);
      }
    }
  }
}

// Fails unless `t` (when present) is float32 with exactly `dims`.
void expect_dims(const KernelContext& ctx, const TensorRef* t, const char* what,
                 std::initializer_list<int64_t> dims) {
  if (t == nullptr) return;
  if (t->dtype != DType::float32) ctx.fail(std::string(what) + " must be float32");
  bool ok = t->rank() == dims.size();
  for (size_t i = 0; ok && i < dims.size(); ++i) ok = t->dim(i) == dims.begin()[i];
  if (!ok) ctx.fail(std::string(what) + " has unexpected extents");
}

Config read_config(const KernelContext& ctx, Cell cell) {
  Config c;
  c.cell = cell;
  const TensorRef& x = ctx.input(0);
  if (x.dtype != DType::float32) ctx.fail("only float32 is supported, not " + dtype_label(x.dtype));
  if (x.rank() != 3) ctx.fail("X must have rank 3");
  c.batch_first = ctx.attr_int("layout", 0) != 0;
  sequence_extents(ctx.node(), x.dims, c.seq, c.batch);
  c.input = x.dim(2);
  c.hidden = hidden_size(ctx.node(), ctx.input(2).dims);
  read_direction(ctx, c);
  if (const auto* clip = ctx.attribute("clip")) c.clip = clip->f;
  c.input_forget = ctx.attr_int("input_forget", 0) != 0;
  c.linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;
  read_activations(ctx, c);

  const int64_t gh = gate_count(cell) * c.hidden;
  expect_dims(ctx, &ctx.input(1), "W", {c.dirs, gh, c.input});
  expect_dims(ctx, &ctx.input(2), "R", {c.dirs, gh, c.hidden});
  expect_dims(ctx, ctx.input_or_null(3), "B", {c.dirs, 2 * gh});
  // States are [dirs, batch, H], or [batch, dirs, H] with layout 1.
  const int64_t outer = c.batch_first ? c.batch : c.dirs;
  const int64_t inner = c.batch_first ? c.dirs : c.batch;
  expect_dims(ctx, ctx.input_or_null(5), "initial_h", {outer, inner, c.hidden});
  if (cell == Cell::lstm) {
    expect_dims(ctx, ctx.input_or_null(6), "initial_c", {outer, inner, c.hidden});
    expect_dims(ctx, ctx.input_or_null(7), "P", {c.dirs, 3 * c.hidden});
  }
  return c;
}

// ---- Workspace

// Floats of scratch: the input projection of every time step (one direction at a time), the
// gate buffer, GRU's hidden-sized product, and the running states the node has no output for.
// nullopt when the count does not fit in 64 bits.
std::optional<uint64_t> scratch_floats(Cell cell, int64_t seq, int64_t batch, int64_t hidden,
                                       bool has_y_h, bool has_y_c) {
  const auto rows = static_cast<uint64_t>(std::max<int64_t>(batch, 0));
  const auto h = static_cast<uint64_t>(std::max<int64_t>(hidden, 0));
  const auto steps = static_cast<uint64_t>(std::max<int64_t>(seq, 0));
  const auto gh = checked_mul(static_cast<uint64_t>(gate_count(cell)), h);
  const auto gates = gh ? checked_mul(rows, *gh) : std::nullopt;
  const auto projection = gates ? checked_mul(steps, *gates) : std::nullopt;
  if (!projection) return std::nullopt;
  uint64_t n = *gates;
  if (cell == Cell::gru) n += rows * h;
  if (!has_y_h) n += rows * h;
  if (cell == Cell::lstm && !has_y_c) n += rows * h;
  return checked_add(n, *projection);
}

bool node_has_output(const graph::Node& n, size_t i) {
  return i < n.outputs.size() && n.outputs[i] != graph::kNoValue;
}

uint64_t recurrent_workspace(Cell cell, const graph::Node& n,
                             const std::vector<graph::ConcreteTensor>& inputs) {
  if (inputs.size() < 3) return 0;
  int64_t seq = 0;
  int64_t batch = 0;
  sequence_extents(n, inputs[0].dims, seq, batch);
  const int64_t hidden = hidden_size(n, inputs[2].dims);
  const auto floats =
      scratch_floats(cell, seq, batch, hidden, node_has_output(n, 1), node_has_output(n, 2));
  const auto bytes = floats ? checked_mul(*floats, uint64_t{sizeof(float)}) : std::nullopt;
  if (!bytes) throw Error("node '" + n.name + "' (" + n.op_type + "): its scratch overflows");
  return *bytes;
}

uint64_t lstm_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& inputs,
                        const std::vector<graph::ConcreteTensor>& /*outputs*/) {
  return recurrent_workspace(Cell::lstm, n, inputs);
}
uint64_t gru_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& inputs,
                       const std::vector<graph::ConcreteTensor>& /*outputs*/) {
  return recurrent_workspace(Cell::gru, n, inputs);
}
uint64_t rnn_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& inputs,
                       const std::vector<graph::ConcreteTensor>& /*outputs*/) {
  return recurrent_workspace(Cell::rnn, n, inputs);
}

// ---- One direction

// Rows of a [batch, hidden] state inside a state tensor or the workspace (layout 1 interleaves
// the directions, so rows of one direction are `stride` apart).
struct Rows {
  float* data = nullptr;
  int64_t stride = 0;
  float* row(int64_t b) const { return data + b * stride; }
};

// Everything one direction's pass reads and writes.
struct Pass {
  const Config* c = nullptr;
  int64_t dir = 0;       // index into the direction axis
  bool reverse = false;  // walks each sequence from its end
  const float* x = nullptr;
  GateWeights w;              // [gates*H, input], or packed
  GateWeights r;              // [gates*H, H], or packed
  const float* wb = nullptr;  // [gates*H] or null
  const float* rb = nullptr;  // [gates*H] or null
  const float* p = nullptr;   // LSTM peepholes [3*H] (i, o, f) or null
  const TensorRef* lens = nullptr;
  float* y = nullptr;  // or null
  Rows h;
  Rows c_state;  // LSTM only
  // X W^T + the biases outside GRU's reset product, for every row of X (in X's order):
  // [seq * batch, gates*H].
  float* projected = nullptr;
  float* gates = nullptr;  // [batch, gates*H]
  float* extra = nullptr;  // GRU: [batch, H]
  int threads = 1;

  int64_t length(int64_t b) const {
    if (lens == nullptr) return c->seq;
    return lens->dtype == DType::int32 ? lens->as<const int32_t>()[b]
                                       : lens->as<const int64_t>()[b];
  }
  // The time index batch entry b reads at step t (t < its length).
  int64_t time_of(int64_t b, int64_t t) const { return reverse ? length(b) - 1 - t : t; }
  const float* x_row(int64_t t, int64_t b) const {
    const int64_t at = c->batch_first ? b * c->seq + t : t * c->batch + b;
    return x + at * c->input;
  }
  float* y_row(int64_t t, int64_t b) const {
    const int64_t at =
        c->batch_first ? (b * c->seq + t) * c->dirs + dir : (t * c->dirs + dir) * c->batch + b;
    return y + at * c->hidden;
  }
};

// The biases outside GRU's reset product (Wb + Rb; with linear_before_reset Rbh is added inside
// the reset gate's product instead), or zeros without B.
void fill_bias(const Pass& p, float* g) {
  const int64_t gh = gate_count(p.c->cell) * p.c->hidden;
  if (p.wb == nullptr) {
    std::fill(g, g + gh, 0.f);
    return;
  }
  const int64_t rb_end = p.c->cell == Cell::gru && p.c->linear_before_reset ? 2 * p.c->hidden : gh;
  for (int64_t j = 0; j < gh; ++j) g[j] = p.wb[j] + (j < rb_end ? p.rb[j] : 0.f);
}

// projected = bias + X W^T for every row of X at once, before the first step: one product of
// seq * batch rows, whose weight rows stay in cache across them, instead of one per time step.
void project_inputs(const Pass& p) {
  const Config& c = *p.c;
  const int64_t gh = gate_count(c.cell) * c.hidden;
  const int64_t rows = c.seq * c.batch;
  fill_bias(p, p.projected);
  for (int64_t r = 1; r < rows; ++r) {
    std::copy(p.projected, p.projected + gh, p.projected + r * gh);
  }
  add_gate_product(p.x, c.input, rows, p.w, gh, p.projected, gh, p.threads);
}

// gates[b] = the projected row of the time index entry b reads at step t; a finished entry's
// row is zeros (computed on, never used).
void init_gates(const Pass& p, int64_t b, int64_t t) {
  const int64_t gh = gate_count(p.c->cell) * p.c->hidden;
  float* g = p.gates + b * gh;
  if (t >= p.length(b)) {
    std::fill(g, g + gh, 0.f);
    return;
  }
  const int64_t time = p.time_of(b, t);
  const int64_t row = p.c->batch_first ? b * p.c->seq + time : time * p.c->batch + b;
  const float* src = p.projected + row * gh;
  std::copy(src, src + gh, g);
}

// Writes the new hidden row of entry b (already in p.h) to Y at its time index.
void store_output(const Pass& p, int64_t b, int64_t t) {
  if (p.y == nullptr) return;
  const float* h = p.h.row(b);
  std::copy(h, h + p.c->hidden, p.y_row(p.time_of(b, t), b));
}

// LSTM for entry b: i, o, f, c gates to the new cell and hidden state (ONNX's equations; the
// peepholes read the previous cell for i and f and the new one for o).
void lstm_row(const Pass& p, int64_t b) {
  const Config& c = *p.c;
  const int64_t n = c.hidden;
  float* gi = p.gates + b * 4 * n;
  float* go = gi + n;
  float* gf = go + n;
  float* gc = gf + n;
  float* cell = p.c_state.row(b);
  const Activation* act = c.act[p.dir];
  if (p.p != nullptr) {
    for (int64_t j = 0; j < n; ++j) gi[j] += p.p[j] * cell[j];
    for (int64_t j = 0; j < n; ++j) gf[j] += p.p[2 * n + j] * cell[j];
  }
  clip_values(c.clip, gi, n);
  activate(act[0], gi, n);
  if (c.input_forget) {
    for (int64_t j = 0; j < n; ++j) gf[j] = 1.f - gi[j];  // coupled gates: f = 1 - i
  } else {
    clip_values(c.clip, gf, n);
    activate(act[0], gf, n);
  }
  clip_values(c.clip, gc, n);
  activate(act[1], gc, n);
  for (int64_t j = 0; j < n; ++j) cell[j] = gf[j] * cell[j] + gi[j] * gc[j];
  if (p.p != nullptr) {
    for (int64_t j = 0; j < n; ++j) go[j] += p.p[n + j] * cell[j];
  }
  clip_values(c.clip, go, n);
  activate(act[0], go, n);
  std::copy(cell, cell + n, gc);  // h(C) in the spent cell gate's place
  activate(act[2], gc, n);
  float* h = p.h.row(b);
  for (int64_t j = 0; j < n; ++j) h[j] = go[j] * gc[j];
}

// GRU for entry b after its z and r gates are activated and its candidate's pre-activation is
// complete: H = (1 - z) * g(candidate) + z * H_prev.
void gru_finish_row(const Pass& p, int64_t b) {
  const int64_t n = p.c->hidden;
  float* gz = p.gates + b * 3 * n;
  float* gh = gz + 2 * n;
  clip_values(p.c->clip, gh, n);
  activate(p.c->act[p.dir][1], gh, n);
  float* h = p.h.row(b);
  for (int64_t j = 0; j < n; ++j) h[j] = (1.f - gz[j]) * gh[j] + gz[j] * h[j];
}

// GRU's candidate pre-activation for all entries: Xt*Wh + Wbh is already in the gates; adds
// (r * H_prev) * Rh^T + Rbh, or with linear_before_reset r * (H_prev * Rh^T + Rbh).
void gru_candidate(const Pass& p) {
  const Config& c = *p.c;
  const int64_t n = c.hidden;
  const GateWeights rh = p.r.from_row(2 * n);
  if (!c.linear_before_reset) {
    for (int64_t b = 0; b < c.batch; ++b) {
      const float* rg = p.gates + b * 3 * n + n;
      const float* h = p.h.row(b);
      float* e = p.extra + b * n;
      for (int64_t j = 0; j < n; ++j) e[j] = rg[j] * h[j];
    }
    add_gate_product(p.extra, n, c.batch, rh, n, p.gates + 2 * n, 3 * n, p.threads);
    return;
  }
  for (int64_t b = 0; b < c.batch; ++b) {
    float* e = p.extra + b * n;
    if (p.rb != nullptr) {
      std::copy(p.rb + 2 * n, p.rb + 3 * n, e);
    } else {
      std::fill(e, e + n, 0.f);
    }
  }
  add_gate_product(p.h.data, p.h.stride, c.batch, rh, n, p.extra, n, p.threads);
  for (int64_t b = 0; b < c.batch; ++b) {
    float* g = p.gates + b * 3 * n;
    const float* e = p.extra + b * n;
    for (int64_t j = 0; j < n; ++j) g[2 * n + j] += g[n + j] * e[j];
  }
}

// One time step for every entry still running at step t.
void run_step(const Pass& p, int64_t t) {
  const Config& c = *p.c;
  const int64_t n = c.hidden;
  const int64_t gh = gate_count(c.cell) * n;
  for (int64_t b = 0; b < c.batch; ++b) init_gates(p, b, t);
  // The recurrent product; GRU's candidate gate waits for the reset gate (gru_candidate).
  const int64_t recurrent_rows = c.cell == Cell::gru ? 2 * n : gh;
  add_gate_product(p.h.data, p.h.stride, c.batch, p.r, recurrent_rows, p.gates, gh, p.threads);
  if (c.cell == Cell::gru) {
    for (int64_t b = 0; b < c.batch; ++b) {
      float* g = p.gates + b * gh;
      clip_values(c.clip, g, 2 * n);
      activate(c.act[p.dir][0], g, 2 * n);
    }
    gru_candidate(p);
  }
  for (int64_t b = 0; b < c.batch; ++b) {
    if (t >= p.length(b)) continue;  // finished: its state stays the final one
    if (c.cell == Cell::lstm) {
      lstm_row(p, b);
    } else if (c.cell == Cell::gru) {
      gru_finish_row(p, b);
    } else {
      float* g = p.gates + b * gh;
      clip_values(c.clip, g, n);
      activate(c.act[p.dir][0], g, n);
      std::copy(g, g + n, p.h.row(b));
    }
    store_output(p, b, t);
  }
}

// Copies the initial state (zeros without one) into the running state rows.
void init_state(const Config& c, const TensorRef* initial, int64_t dir, const Rows& state) {
  for (int64_t b = 0; b < c.batch; ++b) {
    float* dst = state.row(b);
    if (initial == nullptr) {
      std::fill(dst, dst + c.hidden, 0.f);
      continue;
    }
    const int64_t at = c.batch_first ? b * c.dirs + dir : dir * c.batch + b;
    const float* src = initial->as<const float>() + at * c.hidden;
    std::copy(src, src + c.hidden, dst);
  }
}

// Y rows past an entry's length are zero (they are never written by a step).
void zero_padding(const Pass& p) {
  if (p.y == nullptr || p.lens == nullptr) return;
  for (int64_t b = 0; b < p.c->batch; ++b) {
    for (int64_t t = p.length(b); t < p.c->seq; ++t) {
      float* y = p.y_row(t, b);
      std::fill(y, y + p.c->hidden, 0.f);
    }
  }
}

void run_pass(const Pass& p) {
  const Config& c = *p.c;
  int64_t steps = 0;
  for (int64_t b = 0; b < c.batch; ++b) steps = std::max(steps, p.length(b));
  zero_padding(p);
  if (steps > 0) project_inputs(p);
  for (int64_t t = 0; t < steps; ++t) run_step(p, t);
}

// ---- The kernel

// The rows of direction `dir` inside a state output ([dirs, batch, H], or [batch, dirs, H] with
// layout 1).
Rows state_rows(const Config& c, float* base, int64_t dir) {
  if (c.batch_first) return {base + dir * c.hidden, c.dirs * c.hidden};
  return {base + dir * c.batch * c.hidden, c.hidden};
}

void check_lengths(KernelContext& ctx, const Config& c, const TensorRef* lens) {
  if (lens == nullptr) return;
  if (lens->dtype != DType::int32 && lens->dtype != DType::int64) {
    ctx.fail("sequence_lens must be int32");
  }
  if (lens->rank() != 1 || lens->dim(0) != c.batch) ctx.fail("sequence_lens must be [batch]");
  Pass probe;
  probe.c = &c;
  probe.lens = lens;
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t len = probe.length(b);
    if (len < 0 || len > c.seq) {
      ctx.fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
               " is outside [0, " + std::to_string(c.seq) + "]");
    }
  }
}

// W and R packed in panels per direction (add_matmul_panels), built when preparing from
// constant weights; the kernel then never reads the originals, which the executor releases.
class PackedGates final : public graph::KernelState {
 public:
  std::vector<float> w;  // [dirs][gates][panels][input][kPanel]
  std::vector<float> r;  // [dirs][gates][panels][H][kPanel]
  uint64_t owned_bytes() const override { return (w.size() + r.size()) * sizeof(float); }
};

// Floats of one direction's packed weights of inner extent k.
int64_t packed_floats(int64_t gates, int64_t hidden, int64_t k) {
  return gates * panels_per_gate(hidden) * k * kPanel;
}

void run_recurrent(KernelContext& ctx, Cell cell) {
  const Config c = read_config(ctx, cell);
  const TensorRef* lens = ctx.input_or_null(4);
  check_lengths(ctx, c, lens);
  TensorRef* y = ctx.output_or_null(0);
  TensorRef* y_h = ctx.output_or_null(1);
  TensorRef* y_c = cell == Cell::lstm ? ctx.output_or_null(2) : nullptr;

  const auto need = scratch_floats(cell, c.seq, c.batch, c.hidden, y_h != nullptr,
                                   cell != Cell::lstm || y_c != nullptr);
  const std::span<std::byte> ws = ctx.workspace();
  if (!need || ws.size() / sizeof(float) < *need) {
    ctx.fail("workspace of " + std::to_string(ws.size()) + " bytes; it needs " +
             (need ? std::to_string(*need * sizeof(float)) : std::string("more than 2^64")));
  }
  auto* scratch = reinterpret_cast<float*>(ws.data());
  const int64_t bh = c.batch * c.hidden;
  const int64_t gh = gate_count(cell) * c.hidden;
  float* projected = scratch;
  scratch += c.seq * c.batch * gh;
  float* gates = scratch;
  scratch += c.batch * gh;
  float* extra = nullptr;
  if (cell == Cell::gru) {
    extra = scratch;
    scratch += bh;
  }
  float* h_scratch = nullptr;
  if (y_h == nullptr) {
    h_scratch = scratch;
    scratch += bh;
  }
  float* c_scratch = cell == Cell::lstm && y_c == nullptr ? scratch : nullptr;

  const TensorRef* bias = ctx.input_or_null(3);
  const TensorRef* peep = cell == Cell::lstm ? ctx.input_or_null(7) : nullptr;
  const auto* packed = dynamic_cast<const PackedGates*>(ctx.state());
  for (int64_t d = 0; d < c.dirs; ++d) {
    Pass p;
    p.c = &c;
    p.dir = d;
    p.reverse = c.reverse_only || d == 1;
    p.x = ctx.input(0).as<const float>();
    const int64_t count = gate_count(cell);
    if (packed != nullptr) {
      p.w = {packed->w.data() + d * packed_floats(count, c.hidden, c.input), c.input, c.hidden,
             true};
      p.r = {packed->r.data() + d * packed_floats(count, c.hidden, c.hidden), c.hidden, c.hidden,
             true};
    } else {
      p.w = {ctx.input(1).as<const float>() + d * gh * c.input, c.input, c.hidden, false};
      p.r = {ctx.input(2).as<const float>() + d * gh * c.hidden, c.hidden, c.hidden, false};
    }
    if (bias != nullptr) {
      p.wb = bias->as<const float>() + d * 2 * gh;
      p.rb = p.wb + gh;
    }
    if (peep != nullptr) p.p = peep->as<const float>() + d * 3 * c.hidden;
    p.lens = lens;
    p.y = y == nullptr ? nullptr : y->as<float>();
    p.h = y_h != nullptr ? state_rows(c, y_h->as<float>(), d) : Rows{h_scratch, c.hidden};
    if (cell == Cell::lstm) {
      p.c_state = y_c != nullptr ? state_rows(c, y_c->as<float>(), d) : Rows{c_scratch, c.hidden};
      init_state(c, ctx.input_or_null(6), d, p.c_state);
    }
    init_state(c, ctx.input_or_null(5), d, p.h);
    p.projected = projected;
    p.gates = gates;
    p.extra = extra;
    p.threads = ctx.threads();
    run_pass(p);
  }
}

// [dirs][gates * H][k] as stored to the panels of add_matmul_panels, zeros past each gate's last
// column.
std::vector<float> pack_panels(const float* src, int64_t dirs, int64_t gates, int64_t hidden,
                               int64_t k) {
  const int64_t per_gate = panels_per_gate(hidden);
  std::vector<float> out(static_cast<size_t>(dirs * packed_floats(gates, hidden, k)), 0.0f);
  for (int64_t d = 0; d < dirs; ++d) {
    for (int64_t g = 0; g < gates; ++g) {
      for (int64_t j = 0; j < hidden; ++j) {
        const float* from = src + ((d * gates + g) * hidden + j) * k;
        float* panel =
            out.data() + ((d * gates + g) * per_gate + j / kPanel) * k * kPanel + j % kPanel;
        for (int64_t q = 0; q < k; ++q) panel[q * kPanel] = from[q];
      }
    }
  }
  return out;
}

// Packs W and R when both are constants with the extents the node's attributes say; otherwise
// (weights computed while running, or extents the kernel will refuse) the kernel reads them as
// stored.
std::unique_ptr<graph::KernelState> prepare_recurrent(const KernelContext& ctx, Cell cell) {
  const TensorRef* w = ctx.input_or_null(1);
  const TensorRef* r = ctx.input_or_null(2);
  if (w == nullptr || r == nullptr || w->data == nullptr || r->data == nullptr) return nullptr;
  if (w->dtype != DType::float32 || r->dtype != DType::float32) return nullptr;
  Config c;
  try {
    c = read_config(ctx, cell);
  } catch (const footprint::Error&) {
    return nullptr;  // the run reports it, naming the node
  }
  const int64_t gh = gate_count(cell) * c.hidden;
  const std::array<int64_t, 3> w_dims{c.dirs, gh, c.input};
  const std::array<int64_t, 3> r_dims{c.dirs, gh, c.hidden};
  if (!std::ranges::equal(w->dims, w_dims) || !std::ranges::equal(r->dims, r_dims)) return nullptr;
  auto state = std::make_unique<PackedGates>();
  state->w = pack_panels(w->as<const float>(), c.dirs, gate_count(cell), c.hidden, c.input);
  state->r = pack_panels(r->as<const float>(), c.dirs, gate_count(cell), c.hidden, c.hidden);
  return state;
}

std::unique_ptr<graph::KernelState> lstm_prepare(const KernelContext& ctx) {
  return prepare_recurrent(ctx, Cell::lstm);
}
std::unique_ptr<graph::KernelState> gru_prepare(const KernelContext& ctx) {
  return prepare_recurrent(ctx, Cell::gru);
}
std::unique_ptr<graph::KernelState> rnn_prepare(const KernelContext& ctx) {
  return prepare_recurrent(ctx, Cell::rnn);
}

void lstm_kernel(KernelContext& ctx) {
  run_recurrent(ctx, Cell::lstm);
}
void gru_kernel(KernelContext& ctx) {
  run_recurrent(ctx, Cell::gru);
}
void rnn_kernel(KernelContext& ctx) {
  run_recurrent(ctx, Cell::rnn);
}

// What prepare_recurrent packs: W and R in panels, when both are float constants of the extents
// the node's attributes say ([dirs, gates * H, k]; a model whose extents the kernel refuses
// fails when it runs, and packs nothing).
template <Cell kCell>
uint64_t recurrent_packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& inputs,
                          const std::vector<graph::ConcreteTensor>& /*outputs*/,
                          const std::vector<bool>& constant) {
  if (inputs.size() < 3 || constant.size() < 3 || !constant[1] || !constant[2]) return 0;
  if (inputs[2].dims.size() != 3) return 0;
  const int64_t hidden = hidden_size(node, inputs[2].dims);
  const int64_t gates = gate_count(kCell);
  uint64_t floats = 0;
  for (size_t i : {size_t{1}, size_t{2}}) {
    const std::vector<int64_t>& d = inputs[i].dims;
    if (inputs[i].dtype != DType::float32 || d.size() != 3 || hidden <= 0 ||
        d[1] != gates * hidden || d[0] <= 0 || d[2] < 0) {
      return 0;
    }
    floats += static_cast<uint64_t>(d[0] * packed_floats(gates, hidden, d[2]));
  }
  return floats * sizeof(float);
}

}  // namespace

void register_recurrent(graph::OpRegistry& r) {
  graph::OpSchema& lstm = r.row("", "LSTM");
  lstm.kernel = lstm_kernel;
  lstm.workspace = lstm_workspace;
  lstm.prepare = lstm_prepare;
  lstm.packed = recurrent_packed<Cell::lstm>;
  lstm.packed_inputs = 0b110;  // W and R
  graph::OpSchema& gru = r.row("", "GRU");
  gru.kernel = gru_kernel;
  gru.workspace = gru_workspace;
  gru.prepare = gru_prepare;
  gru.packed = recurrent_packed<Cell::gru>;
  gru.packed_inputs = 0b110;
  graph::OpSchema& rnn = r.row("", "RNN");
  rnn.kernel = rnn_kernel;
  rnn.workspace = rnn_workspace;
  rnn.prepare = rnn_prepare;
  rnn.packed = recurrent_packed<Cell::rnn>;
  rnn.packed_inputs = 0b110;
  for (graph::OpSchema* row : {&lstm, &gru, &rnn}) row->kernel_dtypes = DTypeSet{DType::float32};
}

}  // namespace footprint::runtime::kernels
