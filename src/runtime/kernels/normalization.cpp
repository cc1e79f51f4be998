// Normalisations as plain loops: BatchNormalization (inference: one multiply-add per element;
// training mode: batch statistics), InstanceNormalization, GroupNormalization and
// LayerNormalization (statistics per plane, group or row, accumulated in double), the Softmax
// family (one row at a time along the axis) and Dropout (a copy in inference). None needs scratch.
// The ops are those of graph/ops/normalization.cpp, whose inference sizes them.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dtype_dispatch.hpp"
#include "epilogue.hpp"
#include "families.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/graph/ops/dropout_mode.hpp"
#include "index_space.hpp"
#include "parallel_for.hpp"
#include "simd_math.hpp"
#include "tensor_reads.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

// ---- Shared by the plain loops: the mean and biased variance of n elements, in double.

struct Moments {
  double mean = 0, var = 0;
};

template <class T>
Moments moments(const T* p, int64_t n) {
  if (n <= 0) return {};
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(widen(p[i]));
  const double mean = sum / static_cast<double>(n);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(widen(p[i])) - mean;
    sq += d * d;
  }
  return {mean, sq / static_cast<double>(n)};
}

// The same over channel c of x seen as [batch, channels, rest]: one run of `rest` per batch.
template <class T>
Moments channel_moments(const T* x, int64_t batch, int64_t channels, int64_t rest, int64_t c) {
  const double count = static_cast<double>(batch * rest);
  if (count == 0) return {};
  double sum = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const T* p = x + (b * channels + c) * rest;
    for (int64_t i = 0; i < rest; ++i) sum += static_cast<double>(p[i]);
  }
  const double mean = sum / count;
  double sq = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const T* p = x + (b * channels + c) * rest;
    for (int64_t i = 0; i < rest; ++i) sq += (p[i] - mean) * (p[i] - mean);
  }
  return {mean, sq / count};
}

// ---- BatchNormalization: x [N, C, D...], per-channel scale, B, mean, var

bool training(const graph::KernelContext& ctx) {
  return ctx.attr_int("training_mode", 0) != 0;
}

// Inference: y = x * a[c] + b[c], a = scale / sqrt(var + eps), b = B - mean * a, one plane at a
// time. A plain loop on purpose: it streams x once, vectorised, where oneDNN 2.6's plain-layout
// batch normalisation (ncsp_bnorm) measured 3-5x slower on ResNet-50's 53 layers, and the
// reference one it picks for other ranks slower still.
//
// Channel c's a and b from the four parameter tensors:
template <class T>
struct ChannelAffine {
  const T *scale, *shift, *mean, *var;
  T epsilon;

  explicit ChannelAffine(const graph::KernelContext& ctx)
      : scale(ctx.input(1).as<const T>()),
        shift(ctx.input(2).as<const T>()),
        mean(ctx.input(3).as<const T>()),
        var(ctx.input(4).as<const T>()),
        epsilon(static_cast<T>(ctx.attr_float("epsilon", 1e-5f))) {}

  std::pair<T, T> operator()(int64_t c) const {
    const T a = scale[c] / std::sqrt(var[c] + epsilon);
    return {a, shift[c] - mean[c] * a};
  }
};

// a and b for every channel, built when the model is prepared if the parameters are constants
// (a trained model's weights): runs then skip the epsilon lookup and a division and a square root
// per channel, which the small planes of mobile networks (about a hundred elements) amortise
// poorly.
template <class T>
class BnAffineState final : public graph::KernelState {
 public:
  BnAffineState(const ChannelAffine<T>& affine, int64_t channels) {
    for (int64_t c = 0; c < channels; ++c) {
      const auto [a, b] = affine(c);
      a_.push_back(a);
      b_.push_back(b);
    }
  }
  std::pair<T, T> operator()(int64_t c) const {
    return {a_[static_cast<size_t>(c)], b_[static_cast<size_t>(c)]};
  }
  const T* a() const { return a_.data(); }
  const T* b() const { return b_.data(); }

 private:
  std::vector<T> a_, b_;
};

template <class T>
std::unique_ptr<graph::KernelState> make_bn_state(const graph::KernelContext& ctx,
                                                  int64_t channels) {
  for (size_t i = 1; i < 5; ++i) {
    const graph::TensorRef& p = ctx.input(i);
    if (p.dtype != ctx.input(0).dtype || static_cast<int64_t>(p.numel()) < channels) return nullptr;
  }
  return std::make_unique<BnAffineState<T>>(ChannelAffine<T>(ctx), channels);
}

bool constant_parameters(const graph::KernelContext& ctx) {
  if (training(ctx) || ctx.input_count() < 5) return false;
  for (size_t i = 1; i < 5; ++i) {
    if (!ctx.has_input(i) || ctx.input(i).data == nullptr) return false;
  }
  return true;
}

std::unique_ptr<graph::KernelState> bn_prepare(const graph::KernelContext& ctx) {
  if (!constant_parameters(ctx)) return nullptr;
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() < 2) return nullptr;  // the run fails naming it
  if (x.dtype == DType::float32) return make_bn_state<float>(ctx, x.dim(1));
  if (x.dtype == DType::float64) return make_bn_state<double>(ctx, x.dim(1));
  return nullptr;
}

// ---- footprint::FoldBatchNorm (graph::fuse): a convolution's W [M, ...] and bias with the
// BatchNormalization after it folded in, W'[m] = W[m] * a[m] and bias'[m] = bias[m] * a[m] + (B[m]
// - mean[m] * a[m]), with the a and shift the normalisation's own kernel computes. Runs once, as a
// constant, while preparing.
void run_fold_batch_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& w = ctx.input(0);
  if (w.dtype != DType::float32 || w.rank() == 0) ctx.fail("folds float32 weights only");
  const int64_t channels = w.dim(0);
  const graph::TensorRef* bias = ctx.input_or_null(5);
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    const graph::TensorRef* p = ctx.input_or_null(i);
    if (p != nullptr &&
        (p->dtype != DType::float32 || static_cast<int64_t>(p->numel()) != channels)) {
      ctx.fail("input " + std::to_string(i) + " is not float32 with one entry per output channel");
    }
  }
  const ChannelAffine<float> affine(ctx);
  const float* in = w.as<const float>();
  float* folded = ctx.output(0).as<float>();
  float* folded_bias = ctx.output(1).as<float>();
  const int64_t per_channel = channels > 0 ? static_cast<int64_t>(w.numel()) / channels : 0;
  for (int64_t m = 0; m < channels; ++m) {
    const auto [a, shift] = affine(m);
    const float b = bias != nullptr ? bias->as<const float>()[m] : 0.0F;
    folded_bias[m] = b * a + shift;
    for (int64_t k = m * per_channel; k < (m + 1) * per_channel; ++k) folded[k] = in[k] * a;
  }
}

// ---- footprint::ChannelAffine (graph::fuse): X [M, ...] * scale[m] + shift[m] along X's first
// axis, scale and shift each optional and of M elements or one. Runs once, as a constant, while
// preparing.
void run_channel_affine(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.dtype != DType::float32) ctx.fail("scales float32 tensors only");
  const int64_t channels = x.rank() > 0 ? x.dim(0) : 1;
  const graph::TensorRef* scale = ctx.input_or_null(1);
  const graph::TensorRef* shift = ctx.input_or_null(2);
  for (const graph::TensorRef* p : {scale, shift}) {
    if (p == nullptr) continue;
    const auto n = static_cast<int64_t>(p->numel());
    if (p->dtype != DType::float32 || (n != channels && n != 1)) {
      ctx.fail("a scale or shift is not float32 with one entry per channel of " +
               std::to_string(channels) + " or one in all");
    }
  }
  auto at = [](const graph::TensorRef* p, int64_t m, float none) {
    if (p == nullptr) return none;
    return p->as<const float>()[p->numel() == 1 ? 0 : m];
  };
  const float* in = x.as<const float>();
  float* out = ctx.output(0).as<float>();
  const int64_t per_channel = channels > 0 ? static_cast<int64_t>(x.numel()) / channels : 0;
  for (int64_t m = 0; m < channels; ++m) {
    const float a = at(scale, m, 1.0F);
    const float b = at(shift, m, 0.0F);
    for (int64_t k = m * per_channel; k < (m + 1) * per_channel; ++k) out[k] = in[k] * a + b;
  }
}

// The channels are the last axis of NhwcBatchNormalization's [N, H, W, C].
std::unique_ptr<graph::KernelState> nhwc_bn_prepare(const graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (!constant_parameters(ctx) || x.rank() != 4 || x.dtype != DType::float32) return nullptr;
  return make_bn_state<float>(ctx, x.dim(3));
}

template <class T, class Affine>
void bn_planes(graph::KernelContext& ctx, const Affine& affine) {
  const graph::TensorRef& x = ctx.input(0);
  const int64_t channels = x.dim(1);
  const int64_t planes = x.dim(0) * channels;
  if (planes == 0) return;
  const int64_t size = static_cast<int64_t>(x.numel()) / planes;
  const T* in = x.as<const T>();
  T* out = ctx.output(0).as<T>();
  auto planes_in = [&](size_t begin, size_t end) {
    for (size_t pu = begin; pu < end; ++pu) {
      const auto p = static_cast<int64_t>(pu);
      const auto [a, b] = affine(p % channels);
      const T* src = in + p * size;
      T* dst = out + p * size;
      for (int64_t i = 0; i < size; ++i) dst[i] = src[i] * a + b;
    }
  };
  parallel_for(
      ctx.threads(), static_cast<size_t>(planes),
      [&](size_t begin, size_t end) {
        if constexpr (std::is_same_v<T, float>) {
          with_wide_vectors([&] { planes_in(begin, end); });
        } else {
          planes_in(begin, end);
        }
      },
      size >= 4096 ? 1 : 4096 / static_cast<size_t>(size));
}

template <class T>
void bn_inference(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail("the input must have rank 2 or more");
  for (size_t i = 1; i < 5; ++i) {
    if (ctx.input(i).dtype != x.dtype) ctx.fail("scale, B, mean and var must have X's dtype");
  }
  if (const auto* state = dynamic_cast<const BnAffineState<T>*>(ctx.state())) {
    return bn_planes<T>(ctx, *state);
  }
  bn_planes<T>(ctx, ChannelAffine<T>(ctx));
}

// NhwcBatchNormalization (graph::to_channels_last): inference on x [N, H, W, C], float32. Every
// pixel is a row of C floats, y = x * a + b with a and b rows of C: the prepared state's where
// the parameters are constants, else computed into the step's workspace (2 C floats).
bool nhwc_bn_runs(const graph::Node& n) {
  return graph::attr_int(n, "training_mode", 0) == 0;
}

uint64_t nhwc_bn_workspace(const graph::Node& /*n*/, const std::vector<graph::ConcreteTensor>& in,
                           const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.empty() || in[0].dims.size() != 4) return 0;
  return 2 * static_cast<uint64_t>(std::max<int64_t>(in[0].dims[3], 0)) * sizeof(float);
}

void run_nhwc_batch_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() != 4 || x.dtype != DType::float32) ctx.fail("reads float32 [N, H, W, C] tensors");
  if (training(ctx)) ctx.fail("training mode is not supported channels-last");
  const int64_t channels = x.dim(3);
  const int64_t pixels = channels == 0 ? 0 : static_cast<int64_t>(x.numel()) / channels;
  const float* a = nullptr;
  const float* b = nullptr;
  if (const auto* state = dynamic_cast<const BnAffineState<float>*>(ctx.state())) {
    a = state->a();
    b = state->b();
  } else {
    const std::span<std::byte> ws = ctx.workspace();
    if (ws.size() < 2 * static_cast<size_t>(channels) * sizeof(float)) {
      ctx.fail("the step's workspace is smaller than two rows of channels");
    }
    auto* rows = reinterpret_cast<float*>(ws.data());  // NOLINT(*-reinterpret-cast)
    const ChannelAffine<float> affine(ctx);
    for (int64_t c = 0; c < channels; ++c) std::tie(rows[c], rows[channels + c]) = affine(c);
    a = rows;
    b = rows + channels;
  }
  const float* in = x.as<const float>();
  float* out = ctx.output(0).as<float>();
  const std::span<const graph::Epilogue> epilogues = ctx.node().epilogues;
  parallel_for(
      ctx.threads(), static_cast<size_t>(pixels),
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          for (size_t p = begin; p < end; ++p) {
            const float* src = in + static_cast<int64_t>(p) * channels;
            float* dst = out + static_cast<int64_t>(p) * channels;
            for (int64_t c = 0; c < channels; ++c) dst[c] = src[c] * a[c] + b[c];
          }
          // While the rows are in cache (the Relu after an unfolded BatchNormalization).
          apply_epilogues(epilogues, out + static_cast<int64_t>(begin) * channels,
                          (end - begin) * static_cast<size_t>(channels));
        });
      },
      channels >= 4096 ? 1 : 4096 / static_cast<size_t>(std::max<int64_t>(channels, 1)));
}

// Training mode (opset 14+): normalise with the batch's own statistics (biased variance) and
// output running statistics that move the given ones by (1 - momentum) towards them.
template <class T>
void bn_training(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail("the input must have rank 2 or more");
  const int64_t batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t rest =
      channels == 0 || batch == 0 ? 0 : static_cast<int64_t>(x.numel()) / (batch * channels);
  const T* in = x.as<const T>();
  const T* scale = ctx.input(1).as<const T>();
  const T* shift = ctx.input(2).as<const T>();
  const T* mean_in = ctx.input(3).as<const T>();
  const T* var_in = ctx.input(4).as<const T>();
  T* out = ctx.output(0).as<T>();
  graph::TensorRef* mean_out = ctx.output_or_null(1);
  graph::TensorRef* var_out = ctx.output_or_null(2);
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  const double momentum = ctx.attr_float("momentum", 0.9f);
  parallel_for(
      ctx.threads(), static_cast<size_t>(channels),
      [&](size_t begin, size_t end) {
        for (size_t cu = begin; cu < end; ++cu) {
          const auto c = static_cast<int64_t>(cu);
          const auto [mean, var] = channel_moments(in, batch, channels, rest, c);
          const double a = static_cast<double>(scale[c]) / std::sqrt(var + epsilon);
          const double shifted = static_cast<double>(shift[c]) - mean * a;
          for (int64_t b = 0; b < batch; ++b) {
            const T* p = in + (b * channels + c) * rest;
            T* q = out + (b * channels + c) * rest;
            for (int64_t i = 0; i < rest; ++i) q[i] = static_cast<T>(p[i] * a + shifted);
          }
          if (mean_out != nullptr) {
            mean_out->as<T>()[c] = static_cast<T>(mean_in[c] * momentum + mean * (1 - momentum));
          }
          if (var_out != nullptr) {
            var_out->as<T>()[c] = static_cast<T>(var_in[c] * momentum + var * (1 - momentum));
          }
        }
      },
      1);
}

// Inference with statistics outputs listed (opsets before 14): the running statistics are the
// given ones.
void copy_running_stats(graph::KernelContext& ctx) {
  for (size_t i = 1; i <= 2; ++i) {
    graph::TensorRef* t = ctx.output_or_null(i);
    if (t == nullptr) continue;
    const graph::TensorRef& src = ctx.input(i + 2);
    const auto* from = static_cast<const std::byte*>(src.data);
    std::copy(from, from + src.bytes(), static_cast<std::byte*>(t->data));
  }
}

void run_batch_norm(graph::KernelContext& ctx) {
  // Older opsets list the saved statistics as outputs; inference never computes them.
  const bool train = training(ctx);
  if (!train && (ctx.output_or_null(3) != nullptr || ctx.output_or_null(4) != nullptr)) {
    ctx.fail("the saved mean and variance outputs are not supported");
  }
  switch (ctx.input(0).dtype) {
    case DType::float32:
      train ? bn_training<float>(ctx) : bn_inference<float>(ctx);
      break;
    case DType::float64:
      train ? bn_training<double>(ctx) : bn_inference<double>(ctx);
      break;
    default:
      ctx.fail("dtype " + dtype_label(ctx.input(0).dtype) + " is not supported");
  }
  if (!train) copy_running_stats(ctx);
  finish_epilogues(ctx, false);
}

// ---- InstanceNormalization: x [N, C, D...]; statistics per (n, c) plane, scale and B per c

template <class T>
void instance_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail("the input must have rank 2 or more");
  const int64_t channels = x.dim(1);
  const int64_t planes = x.dim(0) * channels;
  if (planes == 0) return;
  const int64_t size = static_cast<int64_t>(x.numel()) / planes;
  const T* in = x.as<const T>();
  const T* scale = ctx.input(1).as<const T>();
  const T* shift = ctx.input(2).as<const T>();
  T* out = ctx.output(0).as<T>();
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  parallel_for(
      ctx.threads(), static_cast<size_t>(planes),
      [&](size_t begin, size_t end) {
        for (size_t pu = begin; pu < end; ++pu) {
          const auto p = static_cast<int64_t>(pu);
          const int64_t c = p % channels;
          const Moments m = moments(in + p * size, size);
          const double a = static_cast<double>(scale[c]) / std::sqrt(m.var + epsilon);
          const double b = static_cast<double>(shift[c]) - m.mean * a;
          const T* src = in + p * size;
          T* dst = out + p * size;
          for (int64_t i = 0; i < size; ++i) dst[i] = static_cast<T>(src[i] * a + b);
        }
      },
      1);
}

void run_instance_norm(graph::KernelContext& ctx) {
  switch (ctx.input(0).dtype) {
    case DType::float32:
      return instance_norm<float>(ctx);
    case DType::float64:
      return instance_norm<double>(ctx);
    default:
      ctx.fail("dtype " + dtype_label(ctx.input(0).dtype) + " is not supported");
  }
}

// ---- GroupNormalization: x [N, C, D...] in num_groups groups of C / G channels, statistics per
// (n, group) over its channels' planes (in double); scale and bias per channel (opset 21) or
// per group (opset 18's, which 21 replaced), told apart by their length.

template <class T>
void group_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail("the input must have rank 2 or more");
  const int64_t batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t groups = ctx.attr_int("num_groups", 0);
  if (groups <= 0 || channels % groups != 0) {
    ctx.fail("num_groups (" + std::to_string(groups) + ") must divide the " +
             std::to_string(channels) + " channels");
  }
  const auto per_channel = [&](size_t i, const char* what) {
    const size_t n = ctx.input(i).numel();
    if (ctx.input(i).dtype != x.dtype) ctx.fail(std::string(what) + " must have the input's dtype");
    if (n == static_cast<size_t>(channels)) return true;
    if (n == static_cast<size_t>(groups)) return false;
    ctx.fail(std::string(what) + " holds " + std::to_string(n) + " values: one per channel (" +
             std::to_string(channels) + ") or, as opset 18 had it, one per group (" +
             std::to_string(groups) + ")");
  };
  const bool scale_by_channel = per_channel(1, "scale");
  const bool bias_by_channel = per_channel(2, "bias");
  if (batch * channels == 0) return;
  const int64_t per = channels / groups;
  const int64_t rest = static_cast<int64_t>(x.numel()) / (batch * channels);
  const T* in = x.as<const T>();
  const T* scale = ctx.input(1).as<const T>();
  const T* bias = ctx.input(2).as<const T>();
  T* out = ctx.output(0).as<T>();
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  parallel_for(
      ctx.threads(), static_cast<size_t>(batch * groups),
      [&](size_t begin, size_t end) {
        for (size_t pu = begin; pu < end; ++pu) {
          const auto p = static_cast<int64_t>(pu);
          const int64_t g = p % groups;
          const int64_t first = (p / groups) * channels + g * per;  // the group's first plane
          const Moments m = moments(in + first * rest, per * rest);
          const double inv = 1.0 / std::sqrt(m.var + epsilon);
          for (int64_t k = 0; k < per; ++k) {
            const int64_t c = g * per + k;
            const double a = static_cast<double>(widen(scale[scale_by_channel ? c : g])) * inv;
            const double b = static_cast<double>(widen(bias[bias_by_channel ? c : g])) - m.mean * a;
            const T* src = in + (first + k) * rest;
            T* dst = out + (first + k) * rest;
            for (int64_t i = 0; i < rest; ++i) {
              dst[i] = narrow<T>(static_cast<double>(widen(src[i])) * a + b);
            }
          }
        }
      },
      1);
}

void run_group_norm(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { group_norm<decltype(tag)>(ctx); });
}

// ---- LpNormalization: x divided by its p-norm (p 1 or 2) along `axis`, the norm summed in
// double; a zero norm divides as the reference does (x / 0: NaN or infinity).

template <class T>
void lp_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const auto rank = static_cast<int64_t>(x.rank());
  int64_t axis = ctx.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank) ctx.fail("axis is outside the input's rank");
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) ctx.fail("p is " + std::to_string(p) + "; LpNormalization takes 1 or 2");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(static_cast<size_t>(d));
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dim(static_cast<size_t>(d));
  const int64_t n = x.dim(static_cast<size_t>(axis));
  const T* in = x.as<const T>();
  T* out = ctx.output(0).as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* src = in + o * n * inner + i;
      T* dst = out + o * n * inner + i;
      double norm = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double v = static_cast<double>(widen(src[k * inner]));
        norm += p == 1 ? std::abs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < n; ++k) {
        dst[k * inner] = narrow<T>(static_cast<double>(widen(src[k * inner])) / norm);
      }
    }
  }
}

void run_lp_norm(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { lp_norm<decltype(tag)>(ctx); });
}

// ---- LayerNormalization (opset 17): x seen as [rows, cols] split at `axis`; Scale and B cover
// the normalised dims, or a trailing part of them (then repeated), or are scalars.

// Elements of `t` when it broadcasts over the trailing dims of x from `axis` on: its dims, with
// leading ones dropped, must equal x's last dims. 0 when it does not.
int64_t trailing_period(const graph::TensorRef& t, const graph::TensorRef& x, size_t axis) {
  size_t first = 0;
  while (first < t.rank() && t.dim(first) == 1) ++first;
  const size_t kept = t.rank() - first;
  if (kept > x.rank() - axis) return 0;
  for (size_t i = 0; i < kept; ++i) {
    if (t.dim(first + i) != x.dim(x.rank() - kept + i)) return 0;
  }
  return static_cast<int64_t>(t.numel());
}

// One float row whose Scale and B (shift may be null) cover it whole: the statistics and the
// affine map a vector at a time. The statistics are float sums per lane, as vectorised runtimes
// keep them; the scalar path below keeps doubles for the rarer layouts.
void layer_norm_float_row(const float* src, float* dst, size_t n, const float* scale,
                          const float* shift, float epsilon, float* mean_out, float* inv_out) {
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    const float mean = simd::sum_as<V>(src, n) / static_cast<float>(n);
    const float var = simd::squared_deviation_sum_as<V>(src, n, mean) / static_cast<float>(n);
    const float inv = 1.0f / std::sqrt(var + epsilon);
    if (shift != nullptr) {
      for (size_t j = 0; j < n; ++j) dst[j] = (src[j] - mean) * inv * scale[j] + shift[j];
    } else {
      for (size_t j = 0; j < n; ++j) dst[j] = (src[j] - mean) * inv * scale[j];
    }
    if (mean_out != nullptr) *mean_out = mean;
    if (inv_out != nullptr) *inv_out = inv;
  });
}

// The `axis` attribute (default -1) in [0, rank): where the normalised dims begin.
size_t norm_axis(const graph::KernelContext& ctx, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  int64_t axis = ctx.attr_int("axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) ctx.fail("axis is out of range for rank " + std::to_string(r));
  return static_cast<size_t>(axis);
}

// x seen as [rows, cols] split at `axis`.
struct Rows {
  int64_t rows = 1, cols = 0;
};
Rows rows_at(const graph::TensorRef& x, size_t axis) {
  Rows r;
  for (size_t i = 0; i < axis; ++i) r.rows *= x.dim(i);
  r.cols = r.rows == 0 ? 0 : static_cast<int64_t>(x.numel()) / r.rows;
  return r;
}

template <class T, class S>
void layer_norm(graph::KernelContext& ctx, size_t axis) {
  const graph::TensorRef& x = ctx.input(0);
  const Rows split = rows_at(x, axis);
  const int64_t rows = split.rows, cols = split.cols;
  if (rows == 0) return;
  const graph::TensorRef& scale_t = ctx.input(1);
  const graph::TensorRef* shift_t = ctx.input_or_null(2);
  const int64_t scale_period = trailing_period(scale_t, x, axis);
  const int64_t shift_period = shift_t != nullptr ? trailing_period(*shift_t, x, axis) : 1;
  if (scale_period == 0 || shift_period == 0) {
    ctx.fail("Scale and B must broadcast over the normalised dims");
  }
  const T* in = x.as<const T>();
  const T* scale = scale_t.as<const T>();
  const T* shift = shift_t != nullptr ? shift_t->as<const T>() : nullptr;
  T* out = ctx.output(0).as<T>();
  graph::TensorRef* mean_t = ctx.output_or_null(1);
  graph::TensorRef* inv_t = ctx.output_or_null(2);
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  const bool whole_rows =
      cols > 0 && scale_period == cols && (shift == nullptr || shift_period == cols);
  // 16-bit rows of up to kHalfRow elements run as float32 ones: widened (F16C where the CPU has
  // it), normalised by the float32 row's loops, rounded once on store; Scale and B widened once.
  constexpr int64_t kHalfRow = 4096;
  std::array<float, is_16bit_float<T> ? kHalfRow : 1> wide_scale{};
  std::array<float, is_16bit_float<T> ? kHalfRow : 1> wide_shift{};
  bool half_rows = false;
  if constexpr (is_16bit_float<T> && std::is_same_v<S, float>) {
    half_rows = whole_rows && cols <= kHalfRow;
    if (half_rows) {
      widen_row(scale, wide_scale.data(), static_cast<size_t>(cols));
      if (shift != nullptr) widen_row(shift, wide_shift.data(), static_cast<size_t>(cols));
    }
  }
  parallel_for(
      ctx.threads(), static_cast<size_t>(rows),
      [&](size_t begin, size_t end) {
        for (size_t ru = begin; ru < end; ++ru) {
          const auto r = static_cast<int64_t>(ru);
          const T* src = in + r * cols;
          T* dst = out + r * cols;
          if constexpr (is_16bit_float<T> && std::is_same_v<S, float>) {
            if (half_rows) {
              std::array<float, kHalfRow> row;  // NOLINT(cppcoreguidelines-pro-type-member-init)
              const auto n = static_cast<size_t>(cols);
              widen_row(src, row.data(), n);
              layer_norm_float_row(row.data(), row.data(), n, wide_scale.data(),
                                   shift != nullptr ? wide_shift.data() : nullptr,
                                   static_cast<float>(epsilon),
                                   mean_t != nullptr ? mean_t->as<S>() + r : nullptr,
                                   inv_t != nullptr ? inv_t->as<S>() + r : nullptr);
              narrow_row(row.data(), dst, n);
              continue;
            }
          }
          if constexpr (std::is_same_v<T, float> && std::is_same_v<S, float>) {
            if (whole_rows) {
              layer_norm_float_row(src, dst, static_cast<size_t>(cols), scale, shift,
                                   static_cast<float>(epsilon),
                                   mean_t != nullptr ? mean_t->as<S>() + r : nullptr,
                                   inv_t != nullptr ? inv_t->as<S>() + r : nullptr);
              continue;
            }
          }
          const Moments m = moments(src, cols);
          const double inv = 1.0 / std::sqrt(m.var + epsilon);
          for (int64_t j = 0; j < cols; ++j) {
            const double b =
                shift != nullptr ? static_cast<double>(widen(shift[j % shift_period])) : 0;
            const auto a = static_cast<double>(widen(scale[j % scale_period]));
            dst[j] = narrow<T>((static_cast<double>(widen(src[j])) - m.mean) * inv * a + b);
          }
          if (mean_t != nullptr) mean_t->as<S>()[r] = static_cast<S>(m.mean);
          if (inv_t != nullptr) inv_t->as<S>()[r] = static_cast<S>(inv);
        }
      },
      1);
}

// The statistics outputs' dtype (stash_type) picks S.
template <class T>
void layer_norm_stash(graph::KernelContext& ctx, size_t axis) {
  const graph::TensorRef* stat = ctx.output_or_null(1);
  if (stat == nullptr) stat = ctx.output_or_null(2);
  const DType stash = stat != nullptr ? stat->dtype : DType::float32;
  if (stash == DType::float32) return layer_norm<T, float>(ctx, axis);
  if (stash == DType::float64) return layer_norm<T, double>(ctx, axis);
  ctx.fail("stash dtype " + dtype_label(stash) + " is not supported");
}

void run_layer_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const size_t axis = norm_axis(ctx, x.rank());
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).dtype != x.dtype) {
      ctx.fail("Scale and B must have the input's dtype");
    }
  }
  // 16-bit floats compute as float32 rows where Scale and B span them (below 4096 elements),
  // elsewhere in double as the other rare layouts; either rounds once on store.
  dispatch_with_16bit<RealTypes>(ctx, x.dtype,
                                 [&](auto tag) { layer_norm_stash<decltype(tag)>(ctx, axis); });
}

// ---- RMSNormalization (opset 23): x seen as [rows, cols] split at `axis`, each row divided by
// its root mean square, times Scale (covering the normalised dims, a trailing part of them, or a
// scalar). The mean square is computed in the stash type S; 16-bit rows compute as float32 ones
// and round once on store, as onnxruntime does (ONNX's function rounds the normalised row to X's
// type before the scale: within the tests' tolerance of each other).

// One float row whose Scale covers it whole, the sum of squares a vector at a time; returns the
// inverse root mean square.
float rms_norm_float_row(const float* src, float* dst, size_t n, const float* scale,
                         float epsilon) {
  float inv = 0;
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    const float mean_square =
        simd::squared_deviation_sum_as<V>(src, n, 0.0f) / static_cast<float>(n);
    inv = 1.0f / std::sqrt(mean_square + epsilon);
    for (size_t j = 0; j < n; ++j) dst[j] = src[j] * inv * scale[j];
  });
  return inv;
}

template <class T, class S>
void rms_norm(graph::KernelContext& ctx, size_t axis) {
  const graph::TensorRef& x = ctx.input(0);
  const Rows split = rows_at(x, axis);
  const int64_t rows = split.rows, cols = split.cols;
  if (rows == 0) return;
  const graph::TensorRef& scale_t = ctx.input(1);
  const int64_t period = trailing_period(scale_t, x, axis);
  if (period == 0) ctx.fail("Scale must broadcast over the normalised dims");
  const T* in = x.as<const T>();
  const T* scale = scale_t.as<const T>();
  T* out = ctx.output(0).as<T>();
  graph::TensorRef* inv_t = ctx.output_or_null(1);  // SimplifiedLayerNormalization's
  const auto epsilon = static_cast<S>(ctx.attr_float("epsilon", 1e-5f));
  constexpr bool kFloatRows =
      std::is_same_v<S, float> && (std::is_same_v<T, float> || is_16bit_float<T>);
  // Rows of up to kRow elements whose Scale spans them run as float32 rows (16-bit ones widened
  // into a buffer, Scale widened once); other layouts, and double stashes, element by element.
  constexpr int64_t kRow = 4096;
  const bool float_rows = kFloatRows && cols > 0 && period == cols && cols <= kRow;
  std::array<float, is_16bit_float<T> ? kRow : 1> wide_scale{};
  if constexpr (is_16bit_float<T>) {
    if (float_rows) widen_row(scale, wide_scale.data(), static_cast<size_t>(cols));
  }
  parallel_for(
      ctx.threads(), static_cast<size_t>(rows),
      [&](size_t begin, size_t end) {
        for (size_t ru = begin; ru < end; ++ru) {
          const auto r = static_cast<int64_t>(ru);
          const T* src = in + r * cols;
          T* dst = out + r * cols;
          const auto n = static_cast<size_t>(cols);
          if constexpr (kFloatRows) {
            if (float_rows) {
              float inv = 0;
              if constexpr (is_16bit_float<T>) {
                std::array<float, kRow> row;  // NOLINT(cppcoreguidelines-pro-type-member-init)
                widen_row(src, row.data(), n);
                inv = rms_norm_float_row(row.data(), row.data(), n, wide_scale.data(), epsilon);
                narrow_row(row.data(), dst, n);
              } else {
                inv = rms_norm_float_row(src, dst, n, scale, epsilon);
              }
              if (inv_t != nullptr) inv_t->as<S>()[r] = inv;
              continue;
            }
          }
          S squares = 0;
          for (size_t j = 0; j < n; ++j) {
            const auto v = static_cast<S>(widen(src[j]));
            squares += v * v;
          }
          const S inv = S(1) / std::sqrt(squares / static_cast<S>(n) + epsilon);
          for (size_t j = 0; j < n; ++j) {
            const auto a = static_cast<S>(widen(scale[j % static_cast<size_t>(period)]));
            dst[j] = narrow<T>(static_cast<S>(widen(src[j])) * inv * a);
          }
          if (inv_t != nullptr) inv_t->as<S>()[r] = inv;
        }
      },
      1);
}

void run_rms_norm(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const size_t axis = norm_axis(ctx, x.rank());
  if (ctx.input(1).dtype != x.dtype) {
    ctx.fail("X (" + dtype_label(x.dtype) + ") and Scale (" + dtype_label(ctx.input(1).dtype) +
             ") of different types are not supported");
  }
  const int64_t stash = ctx.attr_int("stash_type", 1);
  if (stash != static_cast<int64_t>(DType::float32) &&
      stash != static_cast<int64_t>(DType::float64)) {
    ctx.fail("stash_type " + std::to_string(stash) + " is not supported (float or double)");
  }
  dispatch_with_16bit<RealTypes>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (stash == static_cast<int64_t>(DType::float64)) {
      rms_norm<T, double>(ctx, axis);
    } else {
      rms_norm<T, float>(ctx, axis);
    }
  });
}

// ---- Softmax, LogSoftmax, Hardmax

enum class Normalize { softmax, log_softmax, hardmax };

// A contiguous float row, every pass a vector at a time at the CPU's widest: the maximum, the
// exponentials with their sum, then the scaling (y holds the exponentials first; Softmax is not
// in place, so y is not x). Attention's softmax rows are most of a transformer's non-matmul time.
template <Normalize kind>
void normalize_float_row(const float* x, float* y, size_t n) {
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    const float m = simd::max_as<V>(x, n);
    const float sum = simd::exp_sum_as<V>(x, y, n, m);
    if constexpr (kind == Normalize::softmax) {
      const float scale = 1.0f / sum;
      for (size_t i = 0; i < n; ++i) y[i] *= scale;
    } else {
      const float shift = m + std::log(sum);
      for (size_t i = 0; i < n; ++i) y[i] = x[i] - shift;
    }
  });
}

// A row of 16-bit floats, in float registers. A contiguous row of up to kWidenedRow elements (an
// attention score row) is widened on the stack and normalised by the float32 row's vector passes,
// each output rounded once (one element at a time, with a scalar exponential twice, it took
// three times the float32 model's whole fused attention in the small BERT float16). A longer or
// strided row: the maximum, the sum of exponentials, then each output computed again from its
// input and rounded once (y is not x, and the row is not widened into scratch).
constexpr size_t kWidenedRow = 4096;

template <Normalize kind, class H>
void normalize_16bit_row(const H* x, H* y, size_t n, size_t stride) {
  if constexpr (kind != Normalize::hardmax) {
    if (stride == 1 && n <= kWidenedRow) {
      std::array<float, kWidenedRow> in;   // NOLINT(cppcoreguidelines-pro-type-member-init)
      std::array<float, kWidenedRow> out;  // NOLINT(cppcoreguidelines-pro-type-member-init)
      widen_row(x, in.data(), n);
      normalize_float_row<kind>(in.data(), out.data(), n);
      narrow_row(out.data(), y, n);
      return;
    }
  }
  float m = to_float(x[0]);
  size_t arg = 0;
  for (size_t i = 1; i < n; ++i) {
    const float v = to_float(x[i * stride]);
    if (v > m) {
      m = v;
      arg = i;
    }
  }
  if constexpr (kind == Normalize::hardmax) {
    for (size_t i = 0; i < n; ++i) y[i * stride] = from_float<H>(i == arg ? 1.0f : 0.0f);
    return;
  }
  float sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(to_float(x[i * stride]) - m);
  if constexpr (kind == Normalize::softmax) {
    const float scale = 1.0f / sum;
    for (size_t i = 0; i < n; ++i)
      y[i * stride] = from_float<H>(std::exp(to_float(x[i * stride]) - m) * scale);
  } else {
    const float shift = m + std::log(sum);
    for (size_t i = 0; i < n; ++i) y[i * stride] = from_float<H>(to_float(x[i * stride]) - shift);
  }
}

// One row of n elements `stride` apart.
template <Normalize kind, class T>
void normalize_plain_row(const T* x, T* y, size_t n, size_t stride) {
  if constexpr (std::is_same_v<T, float> && kind != Normalize::hardmax) {
    if (stride == 1) return normalize_float_row<kind>(x, y, n);
  }
  T m = x[0];
  size_t arg = 0;
  for (size_t i = 1; i < n; ++i) {
    if (x[i * stride] > m) {
      m = x[i * stride];
      arg = i;
    }
  }
  if constexpr (kind == Normalize::hardmax) {
    for (size_t i = 0; i < n; ++i) y[i * stride] = i == arg ? T(1) : T(0);
    return;
  }
  if constexpr (kind == Normalize::softmax) {
    T sum = 0;
    for (size_t i = 0; i < n; ++i) {
      y[i * stride] = std::exp(x[i * stride] - m);
      sum += y[i * stride];
    }
    const T scale = T(1) / sum;
    for (size_t i = 0; i < n; ++i) y[i * stride] *= scale;
  } else {
    T sum = 0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(x[i * stride] - m);
    const T shift = m + std::log(sum);
    for (size_t i = 0; i < n; ++i) y[i * stride] = x[i * stride] - shift;
  }
}

template <Normalize kind, class T>
void normalize_row(const T* x, T* y, size_t n, size_t stride) {
  if constexpr (is_16bit_float<T>) {
    normalize_16bit_row<kind>(x, y, n, stride);
  } else {
    normalize_plain_row<kind>(x, y, n, stride);
  }
}

template <Normalize kind, class T>
void normalize_as(graph::KernelContext& ctx, const graph::TensorRef& x, graph::TensorRef& y) {
  if (x.numel() == 0) return;
  const bool legacy = ctx.opset() < 13;
  const size_t rank = x.rank();
  const size_t axis =
      rank == 0 ? 0 : normalize_axis(ctx, ctx.attr_int("axis", legacy ? 1 : -1), rank);
  // Before opset 13 the input is coerced to 2-D at `axis`: each row is everything from it on.
  AxisView v = rank == 0 ? AxisView{} : around(x.dims, axis);
  if (legacy) v = {product(x.dims, 0, axis), product(x.dims, axis, rank), 1};
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  parallel_for(
      ctx.threads(), v.outer * v.inner,
      [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
          const size_t at = (r / v.inner) * v.extent * v.inner + r % v.inner;
          normalize_row<kind>(in + at, out + at, v.extent, v.inner);
        }
      },
      std::max<size_t>(1, 4096 / v.extent));
}

template <Normalize kind>
void normalize_kernel(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  graph::TensorRef& y = ctx.output(0);
  dispatch_with_16bit<RealTypes>(ctx, x.dtype,
                                 [&](auto tag) { normalize_as<kind, decltype(tag)>(ctx, x, y); });
}

// ---- Dropout: a view of its input in inference; run as a copy when its output has a buffer of
// its own, and its mask is all ones.

void fill_mask(graph::KernelContext& ctx, graph::TensorRef& mask) {
  if (mask.dtype == DType::boolean) {
    std::memset(mask.data, 1, mask.numel());
    return;
  }
  dispatch_or_fail<ArithTypes>(ctx, mask.dtype, [&](auto tag) {
    using T = decltype(tag);
    std::fill_n(mask.as<T>(), mask.numel(), T(1));
  });
}

void dropout_kernel(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  graph::TensorRef& y = ctx.output(0);
  if (x.data != y.data) std::memcpy(y.data, x.data, x.bytes());
  // Training mode drops at random: not what this copy does.
  const auto mode = graph::ops::DropoutMode::decode(ctx.opset());
  const graph::TensorRef* training =
      mode.training_input >= 0 ? ctx.input_or_null(static_cast<size_t>(mode.training_input))
                               : nullptr;
  if (training != nullptr) {
    const graph::TensorRef* ratio = ctx.input_or_null(static_cast<size_t>(mode.ratio_input));
    const double r = ratio != nullptr ? scalar_real(ctx, *ratio) : 0.5;
    if (graph::ops::DropoutMode::drops(
            graph::ops::DropoutMode::training(scalar_int(ctx, *training)), r)) {
      ctx.fail("training mode is not supported");
    }
  }
  if (graph::TensorRef* mask = ctx.output_or_null(1)) fill_mask(ctx, *mask);
}

}  // namespace

void register_normalization(graph::OpRegistry& r) {
  graph::OpSchema& bn = r.row("", "BatchNormalization");
  bn.kernel = run_batch_norm;
  bn.prepare = bn_prepare;
  bn.rows_at_bound = true;  // per channel, each image alone
  bn.epilogue_dtypes = DTypeSet{DType::float32};
  bn.channels_last = "NhwcBatchNormalization";
  bn.channels_last_runs = nhwc_bn_runs;
  graph::OpSchema& nhwc_bn = r.row("footprint", "NhwcBatchNormalization");
  nhwc_bn.kernel = run_nhwc_batch_norm;
  nhwc_bn.prepare = nhwc_bn_prepare;
  nhwc_bn.workspace = nhwc_bn_workspace;
  nhwc_bn.rows_at_bound = true;
  nhwc_bn.epilogue_dtypes = DTypeSet{DType::float32};
  r.row("footprint", "FoldBatchNorm").kernel = run_fold_batch_norm;
  r.row("footprint", "ChannelAffine").kernel = run_channel_affine;
  r.row("", "InstanceNormalization").kernel = run_instance_norm;
  r.row("", "GroupNormalization").kernel = run_group_norm;
  r.row("", "LpNormalization").kernel = run_lp_norm;
  r.row("", "LayerNormalization").kernel = run_layer_norm;
  r.row("", "RMSNormalization").kernel = run_rms_norm;
  // onnxruntime's RMS norm before ONNX had one (its optimizer and model builder write it in the
  // ONNX domain): the same attributes, and the inverse root mean square as output 1.
  r.row("", "SimplifiedLayerNormalization").kernel = run_rms_norm;
  r.row("", "Softmax").kernel = normalize_kernel<Normalize::softmax>;
  r.row("", "LogSoftmax").kernel = normalize_kernel<Normalize::log_softmax>;
  r.row("", "Hardmax").kernel = normalize_kernel<Normalize::hardmax>;
  r.row("", "Dropout").kernel = dropout_kernel;
  // Input 0's dtypes, as each kernel dispatches.
  const DTypeSet f32{DType::float32};
  const DTypeSet reals = dtypes_of(RealTypes{});
  for (const char* op : {"BatchNormalization", "InstanceNormalization"})
    r.row("", op).kernel_dtypes = reals;
  // These compute 16-bit floats in float (or double) and round once on store.
  for (const char* op :
       {"LayerNormalization", "RMSNormalization", "SimplifiedLayerNormalization",
        "GroupNormalization", "LpNormalization", "Softmax", "LogSoftmax", "Hardmax"})
    r.row("", op).kernel_dtypes = dtypes_with_16bit(RealTypes{});
  for (const char* op : {"NhwcBatchNormalization", "FoldBatchNorm", "ChannelAffine"})
    r.row("footprint", op).kernel_dtypes = f32;
  r.row("", "Dropout").kernel_dtypes = movable_dtypes();  // a copy of input 0
}

}  // namespace footprint::runtime::kernels
