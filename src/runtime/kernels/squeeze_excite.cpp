// footprint::SqueezeExcite and its channels-last row NhwcSqueezeExcite (graph::fuse): per image,
// each channel's mean, the two small products with their activation and gate, then x scaled by
// the gate. Three phases, each split between threads (the products by rows); the means (the gate
// written over them) and the hidden units live in the step's workspace.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>

#include "channel_means.hpp"
#include "epilogue.hpp"
#include "families.hpp"
#include "footprint/graph/elementwise_program.hpp"
#include "parallel_for.hpp"
#include "simd_math.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

struct Extents {
  int64_t n = 0, c = 0, r = 0, pixels = 0;
};

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

// y[i] = W[i, :] . x + bias[i] for rows [begin, end) of W [rows, cols], at the widest vectors,
// in float as oneDNN's 1x1 convolutions are (a sum in double cost the zoo's MobileNetV3-Small 9 %
// more instructions per run for no closer match).
void product_rows(const float* w, const float* x, const float* bias, float* y, size_t cols,
                  size_t begin, size_t end) {
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    constexpr size_t lanes = sizeof(V) / sizeof(float);
    for (size_t i = begin; i < end; ++i) {
      const float* row = w + i * cols;
      V acc{};
      size_t k = 0;
      for (; k + lanes <= cols; k += lanes) {
        V a;
        V b;
        std::memcpy(&a, row + k, sizeof a);
        std::memcpy(&b, x + k, sizeof b);
        acc += a * b;
      }
      float sum = 0;
      for (size_t l = 0; l < lanes; ++l) sum += acc[l];
      for (; k < cols; ++k) sum += row[k] * x[k];
      y[i] = sum + (bias != nullptr ? bias[i] : 0.0F);
    }
  });
}

// Each channel's mean over the pixels (channel_means.hpp, as the pooling kernels take it).
template <bool kNhwc>
void channel_means(const graph::KernelContext& ctx, const float* x, const Extents& e, float* mean) {
  if constexpr (kNhwc) {
    nhwc_channel_means(ctx.threads(), x, e.n, e.pixels, e.c, mean);
  } else {
    const auto size = static_cast<size_t>(e.pixels);
    parallel_for(
        ctx.threads(), static_cast<size_t>(e.n * e.c),
        [&](size_t begin, size_t end) {
          with_wide_vectors([&] {
            for (size_t plane = begin; plane < end; ++plane) {
              mean[plane] =
                  static_cast<float>(plane_sum(x + plane * size, size) / static_cast<double>(size));
            }
          });
        },
        std::max<size_t>(1, 16384 / std::max<size_t>(size, 1)));
  }
}

// y = x * gate, the gate per image and channel.
template <bool kNhwc>
void scale(const graph::KernelContext& ctx, const float* x, const float* gate, const Extents& e,
           float* y) {
  const auto rows = static_cast<size_t>(kNhwc ? e.n * e.pixels : e.n * e.c);
  const auto len = static_cast<size_t>(kNhwc ? e.c : e.pixels);
  parallel_for(
      ctx.threads(), rows,
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          for (size_t row = begin; row < end; ++row) {
            const float* in = x + row * len;
            float* out = y + row * len;
            if constexpr (kNhwc) {
              const float* g = gate + row / static_cast<size_t>(e.pixels) * len;
              for (size_t i = 0; i < len; ++i) out[i] = in[i] * g[i];
            } else {
              const float g = gate[row];
              for (size_t i = 0; i < len; ++i) out[i] = in[i] * g;
            }
          }
        });
      },
      std::max<size_t>(1, 16384 / std::max<size_t>(len, 1)));
}

template <bool kNhwc>
void run_squeeze_excite(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& w1 = ctx.input(1);
  const graph::TensorRef* b1 = ctx.input_or_null(2);
  const graph::TensorRef& w2 = ctx.input(3);
  const graph::TensorRef* b2 = ctx.input_or_null(4);
  for (const graph::TensorRef* t : {&x, &w1, b1, &w2, b2}) {
    if (t != nullptr && t->dtype != DType::float32) ctx.fail("runs on float32 only");
  }
  if (x.rank() != 4 || w1.rank() != 4) ctx.fail("X and W1 must have rank 4");
  const Extents e = extents_of<kNhwc>(x.dims, w1.dims);
  const std::span<std::byte> scratch = ctx.workspace();
  if (scratch.size() < workspace_floats(e) * sizeof(float)) ctx.fail("the workspace is too small");
  auto* mean = reinterpret_cast<float*>(scratch.data());
  float* hidden = mean + e.n * e.c;
  float* gate = mean;  // an image's means are read into its hidden units before its gate is made
  channel_means<kNhwc>(ctx, x.as<const float>(), e, mean);
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
        ctx.threads(), r,
        [&](size_t begin, size_t end) {
          product_rows(w1.as<const float>(), mean + image * e.c,
                       b1 ? b1->as<const float>() : nullptr, h, c, begin, end);
        },
        64);
    if (activation) apply_epilogues(std::span(&*activation, 1), h, r);
    parallel_for(
        ctx.threads(), c,
        [&](size_t begin, size_t end) {
          product_rows(w2.as<const float>(), h, b2 ? b2->as<const float>() : nullptr, g, r, begin,
                       end);
        },
        256);
    apply_epilogues(std::span(&*gate_op, 1), g, c);
  }
  scale<kNhwc>(ctx, x.as<const float>(), gate, e, ctx.output(0).as<float>());
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
  plain.kernel_dtypes = nhwc.kernel_dtypes = DTypeSet{DType::float32};
}

}  // namespace footprint::runtime::kernels
