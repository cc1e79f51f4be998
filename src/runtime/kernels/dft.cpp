// DFT (opsets 17 and 20) and STFT (opset 17); rows and inference in graph/ops/signal.cpp. As
// ONNX's reference (numpy's fft) computes them:
//
// - DFT transforms each line of x along `axis` (x's last axis holds 1 real or 2 real and
//   imaginary parts): the line cut or padded with zeros to dft_length (default: its extent) n,
//   X[k] = sum_t x[t] exp(-2 pi i k t / n); inverse: x[t] = 1/n sum_k X[k] exp(+2 pi i k t / n);
//   onesided keeps k <= n / 2. The axis is an attribute (default 1) before opset 20 and an input
//   (default -2) from it.
// - STFT cuts each signal [batch, length, 1 or 2] into frames of frame_length (default: the
//   window's length) every frame_step samples, weighs each by the window (default: ones) and
//   transforms it: [batch, frames, bins, 2], bins frame_length / 2 + 1 when onesided (default).
//
// Sums over a line's samples in double with a table of exp(-2 pi i j / n) in the step's workspace:
// a quadratic transform, correct at any length, not an FFT's speed. An inverse onesided DFT
// (IRFFT, opset 20) is refused by name.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {
namespace {

// Per transform of length n: the table (n complex numbers), then a line's samples (n complex).
uint64_t transform_bytes(int64_t n) {
  return static_cast<uint64_t>(std::max<int64_t>(n, 0)) * 4 * sizeof(double);
}

// The longest transform a step's extents allow: an input's extent, or twice an output's (a
// onesided output holds n / 2 + 1 of n).
uint64_t signal_workspace(const graph::Node& /*node*/, const std::vector<graph::ConcreteTensor>& in,
                          const std::vector<graph::ConcreteTensor>& out) {
  int64_t n = 0;
  if (!in.empty()) {
    for (const int64_t d : in[0].dims) n = std::max(n, d);
  }
  for (const graph::ConcreteTensor& t : out) {
    for (const int64_t d : t.dims) n = std::max(n, 2 * d);
  }
  return transform_bytes(n);
}

// The integer element of a scalar input, or `fallback` where it is absent.
int64_t scalar_input(const graph::KernelContext& ctx, size_t i, int64_t fallback) {
  const graph::TensorRef* t = ctx.input_or_null(i);
  if (t == nullptr) return fallback;
  if (t->numel() != 1) ctx.fail("input " + std::to_string(i) + " holds one integer");
  if (t->dtype == DType::int64) return t->as<const int64_t>()[0];
  if (t->dtype == DType::int32) return t->as<const int32_t>()[0];
  ctx.fail("input " + std::to_string(i) + " is int32 or int64");
}

// exp(-2 pi i j / n) for j < n, and where a line's samples go.
struct Transform {
  int64_t n = 0;
  double* cos_sin = nullptr;  // [n][2]
  double* line = nullptr;     // [n][2]

  Transform(graph::KernelContext& ctx, int64_t length) : n(length) {
    const std::span<std::byte> ws = ctx.workspace();
    if (n <= 0) ctx.fail("the transform's length is " + std::to_string(n));
    if (ws.size() < transform_bytes(n)) {
      ctx.fail("the step's workspace (" + std::to_string(ws.size()) + " B) holds no transform of " +
               std::to_string(n));
    }
    cos_sin = reinterpret_cast<double*>(ws.data());
    line = cos_sin + 2 * n;
    for (int64_t j = 0; j < n; ++j) {
      const double angle = 2 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
      cos_sin[2 * j] = std::cos(angle);
      cos_sin[2 * j + 1] = -std::sin(angle);
    }
  }

  // Bins [0, bins) of the line's first m samples (the rest zeros), into out[k * step] (real) and
  // out[k * step + 1] (imaginary), scaled by `scale`; inverse turns the other way.
  template <class T>
  void run(int64_t m, int64_t bins, bool inverse, double scale, T* out, int64_t step) const {
    for (int64_t k = 0; k < bins; ++k) {
      double re = 0;
      double im = 0;
      int64_t j = 0;  // k t mod n, kept without overflow
      for (int64_t t = 0; t < m; ++t) {
        const double c = cos_sin[2 * j];
        const double s = inverse ? -cos_sin[2 * j + 1] : cos_sin[2 * j + 1];
        const double a = line[2 * t];
        const double b = line[2 * t + 1];
        re += a * c - b * s;
        im += a * s + b * c;
        j += k;
        if (j >= n) j %= n;
      }
      out[k * step] = narrow<T>(static_cast<ComputeType<T>>(re * scale));
      out[k * step + 1] = narrow<T>(static_cast<ComputeType<T>>(im * scale));
    }
  }
};

template <class T>
void dft(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const size_t rank = x.rank();
  if (rank < 3) ctx.fail("the input is [batch, signal..., 1 or 2]");
  const int64_t parts = x.dim(rank - 1);
  if (parts != 1 && parts != 2) ctx.fail("the input's last axis holds 1 or 2 parts");
  int64_t axis = ctx.opset() >= 20 ? scalar_input(ctx, 2, -2) : ctx.attr_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank) - 1) {
    ctx.fail("axis " + std::to_string(axis) + " is no signal axis");
  }
  const bool inverse = ctx.attr_int("inverse", 0) != 0;
  const bool onesided = ctx.attr_int("onesided", 0) != 0;
  if (inverse && onesided) ctx.fail("an inverse onesided DFT (IRFFT) is not supported yet");
  const int64_t extent = x.dim(static_cast<size_t>(axis));
  const int64_t n = scalar_input(ctx, 1, extent);
  const int64_t bins = onesided ? n / 2 + 1 : n;
  graph::TensorRef& y = ctx.output(0);
  if (y.dim(static_cast<size_t>(axis)) != bins || y.dim(rank - 1) != 2) {
    ctx.fail("the output's axis holds " + std::to_string(y.dim(static_cast<size_t>(axis))) +
             " bins for " + std::to_string(bins));
  }
  int64_t outer = 1;
  int64_t inner = 1;  // elements between a line's samples, the parts excluded
  for (size_t d = 0; d < static_cast<size_t>(axis); ++d) outer *= x.dim(d);
  for (size_t d = static_cast<size_t>(axis) + 1; d + 1 < rank; ++d) inner *= x.dim(d);
  const Transform tr(ctx, n);
  const int64_t m = std::min(n, extent);
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < m; ++t) {
        const T* sample = in + ((o * extent + t) * inner + i) * parts;
        tr.line[2 * t] = static_cast<double>(widen(sample[0]));
        tr.line[2 * t + 1] = parts == 2 ? static_cast<double>(widen(sample[1])) : 0.0;
      }
      tr.run(m, bins, inverse, scale, out + (o * bins * inner + i) * 2, inner * 2);
    }
  }
}

template <class T>
void stft(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2)) {
    ctx.fail("the signal is [batch, length, 1 or 2]");
  }
  const graph::TensorRef* window = ctx.input_or_null(2);
  if (window != nullptr && (window->rank() != 1 || window->dtype != x.dtype)) {
    ctx.fail("the window is one axis of the signal's dtype");
  }
  const int64_t length = x.dim(1);
  const int64_t parts = x.dim(2);
  const int64_t n = scalar_input(ctx, 3, window != nullptr ? window->dim(0) : length);
  if (window != nullptr && window->dim(0) != n) {
    ctx.fail("the window holds " + std::to_string(window->dim(0)) + " weights for frames of " +
             std::to_string(n));
  }
  const int64_t step = scalar_input(ctx, 1, 0);
  if (step <= 0) ctx.fail("frame_step is " + std::to_string(step));
  if (n > length)
    ctx.fail("frames of " + std::to_string(n) + " in a signal of " + std::to_string(length));
  const int64_t frames = (length - n) / step + 1;
  const bool onesided = ctx.attr_int("onesided", 1) != 0;
  const int64_t bins = onesided ? n / 2 + 1 : n;
  graph::TensorRef& y = ctx.output(0);
  if (y.dim(1) != frames || y.dim(2) != bins) {
    ctx.fail("the output is not [batch, " + std::to_string(frames) + ", " + std::to_string(bins) +
             ", 2]");
  }
  const Transform tr(ctx, n);
  const T* in = x.as<const T>();
  const T* w = window != nullptr ? window->as<const T>() : nullptr;
  T* out = y.as<T>();
  for (int64_t b = 0; b < x.dim(0); ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < n; ++t) {
        const T* sample = in + (b * length + f * step + t) * parts;
        const double weight = w != nullptr ? static_cast<double>(widen(w[t])) : 1.0;
        tr.line[2 * t] = static_cast<double>(widen(sample[0])) * weight;
        tr.line[2 * t + 1] = parts == 2 ? static_cast<double>(widen(sample[1])) * weight : 0.0;
      }
      tr.run(n, bins, false, 1.0, out + (b * frames + f) * bins * 2, 2);
    }
  }
}

void run_dft(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { dft<decltype(tag)>(ctx); });
}

void run_stft(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { stft<decltype(tag)>(ctx); });
}

}  // namespace

void register_dft(graph::OpRegistry& r) {
  const std::array<std::pair<const char*, graph::KernelFn>, 2> rows{
      {{"DFT", run_dft}, {"STFT", run_stft}}};
  for (const auto& [op, kernel] : rows) {
    graph::OpSchema& row = r.row("", op);
    row.kernel = kernel;
    row.workspace = signal_workspace;
    row.kernel_dtypes = dtypes_with_16bit(RealTypes{});
  }
}

}  // namespace footprint::runtime::kernels
