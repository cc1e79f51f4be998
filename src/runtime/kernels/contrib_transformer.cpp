// com.microsoft's fused transformer pieces (rows and inference in
// graph/ops/contrib_transformer.cpp; SimplifiedLayerNormalization runs as RMSNormalization, in
// normalization.cpp), each over rows of input 0's last axis:
//   SkipLayerNormalization          s = input + skip + bias, then LayerNorm(s) * gamma + beta
//   SkipSimplifiedLayerNormalization  the same with RMS norm (no mean, no beta)
//   BiasGelu, FastGelu, Gelu, QuickGelu  an activation of input + bias (erf Gelu; tanh Gelu;
//                                   erf Gelu; x * sigmoid(alpha x))
// skip broadcasts over the leading axes (onnxruntime takes [batch, seq, hidden] or [seq, hidden]);
// rows compute in float (16-bit ones widened, rounded once on store), as onnxruntime does.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "parallel_for.hpp"

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
  const size_t beta_at = N == Norm::layer ? 3 : 99;
  const graph::TensorRef* beta_t = N == Norm::layer ? ctx.input_or_null(beta_at) : nullptr;
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

float activate(Act a, float x, float alpha) {
  switch (a) {
    case Act::erf_gelu:
      return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
    case Act::tanh_gelu:
      return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case Act::quick_gelu:
      return x / (1.0f + std::exp(-alpha * x));
  }
  return x;
}

// The activation of input 0 plus input 1 (a bias over the last axis) where given.
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
  parallel_for(
      ctx.threads(), n,
      [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          float v = static_cast<float>(widen(x[i]));
          if (bias != nullptr) {
            v += static_cast<float>(widen(bias[i % static_cast<size_t>(width)]));
          }
          y[i] = narrow<T>(activate(A, v, alpha));
        }
      },
      4096);
}

template <Act A>
void run_activation(graph::KernelContext& ctx) {
  dispatch_with_16bit<Float32Types>(ctx, ctx.input(0).dtype,
                                    [&](auto tag) { biased_activation<decltype(tag), A>(ctx); });
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
}

}  // namespace footprint::runtime::kernels
