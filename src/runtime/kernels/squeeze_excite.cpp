// footprint::SqueezeExcite and its channels-last row NhwcSqueezeExcite (graph::fuse): per image,
// each channel's mean, the two small products with their activation and gate, then x scaled by
// the gate. Three phases, each split between threads (the products by rows) where x is large; the
// means (the gate written over them) and the hidden units live in the step's workspace.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "channel_means.hpp"
#include "dtype_dispatch.hpp"
#include "epilogue.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "footprint/graph/elementwise_program.hpp"
#include "parallel_for.hpp"
#include "row_dots.hpp"
#include "simd_math.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

struct Extents {
  int64_t n = 0, c = 0, r = 0, pixels = 0;
};

// Below this many elements of x the block runs on one thread. The means split x by channels and
// the scaling by pixels, so on two threads each phase reads half of x from the other core's
// cache: at two threads the zoo's EfficientNet-B0 spent 1.16-1.21 ms in its 16 blocks (x up to
// 401,408 elements) against 0.81-0.84 on one, MobileNetV3-Small 0.27-0.30 against 0.15-0.17
// (footprint run --profile --threads 2, alternated; either phase alone on one thread was no
// better). Past what two cores' caches hold, splitting the work pays again.
constexpr int64_t kParallelElements = int64_t{1} << 21;

int threads_for(const graph::KernelContext& ctx, const Extents& e) {
  return e.n * e.pixels * e.c >= kParallelElements ? ctx.threads() : 1;
}

template <bool kNhwc>
Extents extents_of(std::span<const int64_t> x, std::span<const int64_t> w1) {
  Extents e;
  e.n = x[0];
  e.c = kNhwc ? x[3] : x[1];
  e.pixels = kNhwc ? x[1] * x[2] : x[2] * x[3];
  e.r = w1[0];
  return e;
}

// Means (then, written over them, the gate) and hidden units: N C + N R floats.
uint64_t workspace_floats(const Extents& e) {
  return static_cast<uint64_t>(e.n * (e.c + e.r));
}

template <bool kNhwc>
uint64_t se_workspace(const graph::Node& /*node*/, const std::vector<graph::ConcreteTensor>& in,
                      const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.size() < 4 || in[0].dims.size() != 4 || in[1].dims.size() != 4) return 0;
  return workspace_floats(extents_of<kNhwc>(in[0].dims, in[1].dims)) * sizeof(float);
}

std::optional<graph::Epilogue> epilogue_of(const graph::KernelContext& ctx, std::string_view op,
                                           const char* alpha, const char* beta) {
  const std::string_view name = ctx.attr_string(op, "");
  if (name.empty()) return std::nullopt;
  const std::optional<graph::EpilogueOp> which = graph::chain_unary_op(name);
  if (!which) ctx.fail("attribute '" + std::string(op) + "' names no activation");
  graph::Epilogue e;
  e.op = *which;
  e.alpha = ctx.attr_float(alpha, 0);
  e.beta = ctx.attr_float(beta, 0);
  return e;
}

// y[i] = W[i, :] . x + bias[i] for rows [begin, end) of W [rows, cols], in float as oneDNN's 1x1
// convolutions are (a sum in double cost the zoo's MobileNetV3-Small 9 % more instructions per run
// for no closer match); 16-bit weights widened as they are loaded (row_dots.hpp).
template <class W>
void product_rows(const W* w, const float* x, const W* bias, float* y, size_t cols, size_t begin,
                  size_t end) {
  row_dots(w + begin * cols, cols, x, y + begin, cols, end - begin);
  if (bias != nullptr) {
    for (size_t i = begin; i < end; ++i) y[i] += widen(bias[i]);
  }
}

// Each channel's mean over the pixels (channel_means.hpp, as the pooling kernels take it), as
// float, rounded into R first (what the GlobalAveragePool it replaces stores: R is T, or the
// 16-bit type float32 carriers of x hold).
template <bool kNhwc, class T, class R = T>
void channel_means(int threads, const T* x, const Extents& e, float* mean) {
  if constexpr (kNhwc) {
    nhwc_channel_means<T, float, R>(threads, x, e.n, e.pixels, e.c, mean);
  } else {
    static_assert(std::is_same_v<T, R>, "carriers run channels-last only");
    const auto size = static_cast<size_t>(e.pixels);
    parallel_for(
        threads, static_cast<size_t>(e.n * e.c),
        [&](size_t begin, size_t end) {
          with_wide_vectors([&] {
            for (size_t plane = begin; plane < end; ++plane) {
              const double sum = plane_total(x + plane * size, size);
              mean[plane] = widen(narrow<T>(sum / static_cast<double>(size)));
            }
          });
        },
        std::max<size_t>(1, 16384 / std::max<size_t>(size, 1)));
  }
}

// out[i] = in[i] * g[i] (or * g[0] where kOne), n elements; 16-bit ones widened a chunk at a time
// and each product rounded once into T. `out` may be `in`.
template <class T, bool kOne>
void scale_row(const T* in, const float* g, T* out, size_t n) {
  if constexpr (is_16bit_float<T>) {
    constexpr size_t kChunk = 256;
    std::array<float, kChunk> wide;  // NOLINT(cppcoreguidelines-pro-type-member-init)
    for (size_t i0 = 0; i0 < n; i0 += kChunk) {
      const size_t m = std::min(kChunk, n - i0);
      widen_row(in + i0, wide.data(), m);
      for (size_t i = 0; i < m; ++i) wide[i] *= kOne ? g[0] : g[i0 + i];
      narrow_row(wide.data(), out + i0, m);
    }
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = in[i] * (kOne ? g[0] : g[i]);
  }
}

// Channels-last 16-bit rows [begin, end) no longer than kScaleChunk: several rows of an image
// widened at a time, so that narrow rows (MobileNetV3's first block: 16 channels) do not pay a
// conversion call each.
constexpr size_t kScaleChunk = 1024;

template <class T>
void scale_rows_16(const T* x, const float* gate, const Extents& e, T* y, size_t begin,
                   size_t end) {
  const auto len = static_cast<size_t>(e.c);
  const auto pixels = static_cast<size_t>(e.pixels);
  const size_t per = kScaleChunk / len;
  std::array<float, kScaleChunk> wide;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  for (size_t row = begin; row < end;) {
    const size_t image = row / pixels;
    const size_t stop = std::min({end, row + per, (image + 1) * pixels});
    const size_t n = (stop - row) * len;
    const float* g = gate + image * len;
    widen_row(x + row * len, wide.data(), n);
    for (size_t r = 0; r < n; r += len) {
      for (size_t j = 0; j < len; ++j) wide[r + j] *= g[j];
    }
    narrow_row(wide.data(), y + row * len, n);
    row = stop;
  }
}

// y = x * gate, the gate per image and channel.
template <bool kNhwc, class T>
void scale(int threads, const T* x, const float* gate, const Extents& e, T* y) {
  const auto rows = static_cast<size_t>(kNhwc ? e.n * e.pixels : e.n * e.c);
  const auto len = static_cast<size_t>(kNhwc ? e.c : e.pixels);
  parallel_for(
      threads, rows,
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          if constexpr (kNhwc && is_16bit_float<T>) {
            if (len <= kScaleChunk) return scale_rows_16(x, gate, e, y, begin, end);
          }
          for (size_t row = begin; row < end; ++row) {
            if constexpr (kNhwc) {
              scale_row<T, false>(x + row * len, gate + row / static_cast<size_t>(e.pixels) * len,
                                  y + row * len, len);
            } else {
              scale_row<T, true>(x + row * len, gate + row, y + row * len, len);
            }
          }
        });
      },
      std::max<size_t>(1, 16384 / std::max<size_t>(len, 1)));
}

// As the nodes it replaces compute in W, the weights' type: the means, the hidden units after
// their activation and the gate each rounded into W, every product in float. x and y are W, or
// float32 carriers of W values (T float, W 16-bit; the runtime rounds y after).
template <bool kNhwc, class T, class W = T>
void squeeze_excite(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& w1 = ctx.input(1);
  const graph::TensorRef* b1 = ctx.input_or_null(2);
  const graph::TensorRef& w2 = ctx.input(3);
  const graph::TensorRef* b2 = ctx.input_or_null(4);
  const Extents e = extents_of<kNhwc>(x.dims, w1.dims);
  const std::span<std::byte> scratch = ctx.workspace();
  if (scratch.size() < workspace_floats(e) * sizeof(float)) ctx.fail("the workspace is too small");
  auto* mean = reinterpret_cast<float*>(scratch.data());
  float* hidden = mean + e.n * e.c;
  float* gate = mean;  // an image's means are read into its hidden units before its gate is made
  const int threads = threads_for(ctx, e);
  channel_means<kNhwc, T, W>(threads, x.as<const T>(), e, mean);
  const std::optional<graph::Epilogue> activation =
      epilogue_of(ctx, "activation", "activation_alpha", "activation_beta");
  const std::optional<graph::Epilogue> gate_op =
      epilogue_of(ctx, "gate", "gate_alpha", "gate_beta");
  if (!gate_op) ctx.fail("attribute 'gate' is missing");
  const auto c = static_cast<size_t>(e.c);
  const auto r = static_cast<size_t>(e.r);
  for (int64_t image = 0; image < e.n; ++image) {
    float* h = hidden + image * e.r;
    float* g = gate + image * e.c;
    parallel_for(
        threads, r,
        [&](size_t begin, size_t end) {
          product_rows(w1.as<const W>(), mean + image * e.c, b1 ? b1->as<const W>() : nullptr, h, c,
                       begin, end);
        },
        64);
    if (activation) apply_epilogues(std::span(&*activation, 1), h, r);
    if constexpr (is_16bit_float<W>) round_through<W>(h, r);
    parallel_for(
        threads, c,
        [&](size_t begin, size_t end) {
          product_rows(w2.as<const W>(), h, b2 ? b2->as<const W>() : nullptr, g, r, begin, end);
        },
        256);
    apply_epilogues(std::span(&*gate_op, 1), g, c);
    if constexpr (is_16bit_float<W>) round_through<W>(g, c);
  }
  scale<kNhwc>(threads, x.as<const T>(), gate, e, ctx.output(0).as<T>());
}

template <bool kNhwc>
void run_squeeze_excite(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  // Float32 carriers of a 16-bit block (Node::rounds_to) beside its 16-bit weights.
  const DType weights =
      kNhwc && x.dtype == DType::float32 && ctx.node().rounds_to != DType::undefined
          ? ctx.node().rounds_to
          : x.dtype;
  for (const graph::TensorRef* t :
       {&ctx.input(1), ctx.input_or_null(2), &ctx.input(3), ctx.input_or_null(4)}) {
    if (t != nullptr && t->dtype != weights) ctx.fail("W and B must have X's dtype");
  }
  if (x.rank() != 4 || ctx.input(1).rank() != 4) ctx.fail("X and W1 must have rank 4");
  if constexpr (kNhwc) {
    if (x.dtype == DType::float32 && weights == DType::float16) {
      return squeeze_excite<true, float, Float16>(ctx);
    }
    if (x.dtype == DType::float32 && weights == DType::bfloat16) {
      return squeeze_excite<true, float, BFloat16>(ctx);
    }
  }
  dispatch_with_16bit<Float32Types>(ctx, x.dtype,
                                    [&](auto tag) { squeeze_excite<kNhwc, decltype(tag)>(ctx); });
}

}  // namespace

void register_squeeze_excite(graph::OpRegistry& r) {
  graph::OpSchema& plain = r.row("footprint", "SqueezeExcite");
  plain.kernel = run_squeeze_excite<false>;
  plain.workspace = se_workspace<false>;
  graph::OpSchema& nhwc = r.row("footprint", "NhwcSqueezeExcite");
  nhwc.kernel = run_squeeze_excite<true>;
  nhwc.workspace = se_workspace<true>;
  for (graph::OpSchema* row : {&plain, &nhwc}) {
    // The means are taken before the first element is written, and then each element is read
    // before it is written: the output may be X's buffer.
    row->in_place = true;
    row->rows_at_bound = true;  // each image from that image alone
  }
  // Between convolutions that run channels-last, so does the block (no layout change around
  // it).
  plain.channels_last = "NhwcSqueezeExcite";
  plain.kernel_dtypes = nhwc.kernel_dtypes = dtypes_with_16bit(Float32Types{});
  // Channels-last, x and y may be float32 carriers of 16-bit values beside 16-bit weights: the
  // means are summed in the same order either way (nhwc_channel_means) and rounded into the
  // weights' type, as the hidden units and the gate are.
  nhwc.float32_carriers = graph::Float32Carriers::activations;
}

}  // namespace footprint::runtime::kernels
