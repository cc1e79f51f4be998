// MelWeightMatrix (opset 17; row and inference in graph/ops/signal.cpp) and
// MeanVarianceNormalization (opset 13; graph/ops/normalization.cpp), as ONNX's reference and
// function body compute them.
//
// - MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
//   -> [dft_length / 2 + 1, num_mel_bins]: num_mel_bins + 2 points evenly spaced on the mel scale
//   (2595 log10(1 + f / 700)) from the lower to the upper edge, in steps of their span over
//   num_mel_bins + 2 (as the reference divides), each mapped back to hertz and to the spectrogram
//   bin floor((dft_length + 1) f / sample_rate); filter i rises from point i to point i + 1 and
//   falls to point i + 2 (a point where rising spans no bin is 1). The edges' mel values are
//   computed in the edges' own float type, the rest in double, as numpy does.
// - MeanVarianceNormalization(X, axes = [0, 2, 3]) = (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9),
//   the means over `axes`, in double, rounded once into T.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::runtime::kernels {
namespace {

// ---- MelWeightMatrix

int64_t integer_input(const graph::KernelContext& ctx, size_t i) {
  const graph::TensorRef& t = ctx.input(i);
  if (t.numel() != 1) ctx.fail("input " + std::to_string(i) + " holds one integer");
  if (t.dtype == DType::int64) return t.as<const int64_t>()[0];
  if (t.dtype == DType::int32) return t.as<const int32_t>()[0];
  ctx.fail("input " + std::to_string(i) + " is int32 or int64");
}

// The mel value of an edge (input i) in the edge's own type, as numpy computes a 0-d array.
double edge_mel(const graph::KernelContext& ctx, size_t i) {
  const graph::TensorRef& t = ctx.input(i);
  if (t.numel() != 1) ctx.fail("input " + std::to_string(i) + " holds one frequency");
  if (t.dtype == DType::float32) {
    const float hz = t.as<const float>()[0];
    return 2595.0F * std::log10(1.0F + hz / 700.0F);
  }
  if (t.dtype == DType::float64) {
    return 2595.0 * std::log10(1.0 + t.as<const double>()[0] / 700.0);
  }
  ctx.fail("input " + std::to_string(i) + " is float or double");
}

template <class T>
void mel_weight_matrix(graph::KernelContext& ctx) {
  const int64_t mels = integer_input(ctx, 0);
  const int64_t dft_length = integer_input(ctx, 1);
  const int64_t sample_rate = integer_input(ctx, 2);
  if (mels <= 0 || dft_length <= 0 || sample_rate <= 0) {
    ctx.fail("num_mel_bins, dft_length and sample_rate must be positive");
  }
  const double low = edge_mel(ctx, 3);
  const double high = edge_mel(ctx, 4);
  const int64_t spectrum = dft_length / 2 + 1;
  graph::TensorRef& y = ctx.output(0);
  if (y.rank() != 2 || y.dim(0) != spectrum || y.dim(1) != mels) {
    ctx.fail("the output is not [" + std::to_string(spectrum) + ", " + std::to_string(mels) + "]");
  }
  double step = (high - low) / static_cast<double>(mels + 2);
  if (ctx.input(3).dtype == DType::float32) step = static_cast<float>(step);
  T* out = y.as<T>();
  std::fill_n(out, y.numel(), narrow<T>(ComputeType<T>{0}));
  // Point p's spectrogram bin.
  const auto bin = [&](int64_t p) {
    const double mel = static_cast<double>(p) * step + low;
    const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    return static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
  };
  const auto set = [&](int64_t row, int64_t col, double v) {
    if (row < 0 || row >= spectrum) {
      ctx.fail("mel filter " + std::to_string(col) + " reaches bin " + std::to_string(row) +
               " of " + std::to_string(spectrum));
    }
    out[row * mels + col] = narrow<T>(static_cast<ComputeType<T>>(v));
  };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = bin(i);
    const int64_t center = bin(i + 1);
    const int64_t right = bin(i + 2);
    if (center == left) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = left; j <= center; ++j) {
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
      }
    }
    for (int64_t j = center; j < right; ++j) {
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
  }
}

void run_mel_weight_matrix(graph::KernelContext& ctx) {
  dispatch_with_16bit<ArithTypes>(ctx, ctx.output(0).dtype,
                                  [&](auto tag) { mel_weight_matrix<decltype(tag)>(ctx); });
}

// ---- MeanVarianceNormalization

constexpr size_t kMaxRank = 8;

// The axes the means run over, a bit each; fails (`fail` names the node) outside the rank.
template <class Fail>
uint32_t reduced_axes(const std::optional<std::vector<int64_t>>& given, size_t rank, Fail fail) {
  uint32_t reduced = 0;
  for (int64_t a : given.value_or(std::vector<int64_t>{0, 2, 3})) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) {
      fail("axis " + std::to_string(a) + " is outside X's " + std::to_string(rank) + " axes");
    }
    reduced |= 1U << static_cast<unsigned>(a);
  }
  return reduced;
}

// Each group's (the kept axes' coordinates) E[x] and E[x^2], in the workspace.
uint64_t mvn_workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.empty() || in[0].dims.size() > kMaxRank) return 0;
  uint64_t groups = 1;
  try {
    const uint32_t reduced = reduced_axes(graph::attr_ints(node, "axes"), in[0].dims.size(),
                                          [](const std::string& what) { throw Error(what); });
    for (size_t d = 0; d < in[0].dims.size(); ++d) {
      if ((reduced >> d & 1U) == 0)
        groups *= static_cast<uint64_t>(std::max<int64_t>(in[0].dims[d], 0));
    }
  } catch (const Error&) {
    return 0;  // the kernel fails naming the node
  }
  return groups * 2 * sizeof(double);
}

template <class T>
void mean_variance_normalization(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const size_t rank = x.rank();
  if (rank > kMaxRank) ctx.fail("X has rank " + std::to_string(rank) + "; at most 8");
  const uint32_t reduced =
      reduced_axes(ctx.attr_ints("axes"), rank, [&](const std::string& what) { ctx.fail(what); });
  std::array<int64_t, kMaxRank> strides{};
  int64_t groups = 1;
  for (size_t d = rank; d-- > 0;) {
    strides[d] = d + 1 < rank ? strides[d + 1] * x.dim(d + 1) : 1;
    if ((reduced >> d & 1U) == 0) groups *= x.dim(d);
  }
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < static_cast<size_t>(groups) * 2 * sizeof(double)) {
    ctx.fail("the step's workspace holds no means");
  }
  auto* sum = reinterpret_cast<double*>(ws.data());
  double* squares = sum + groups;
  std::fill_n(sum, 2 * groups, 0.0);
  const auto group_of = [&](size_t i) {
    int64_t g = 0;
    for (size_t d = 0; d < rank; ++d) {
      if ((reduced >> d & 1U) == 0)
        g = g * x.dim(d) + static_cast<int64_t>(i) / strides[d] % x.dim(d);
    }
    return g;
  };
  const size_t n = x.numel();
  const T* in = x.as<const T>();
  for (size_t i = 0; i < n; ++i) {
    const auto v = static_cast<double>(widen(in[i]));
    const int64_t g = group_of(i);
    sum[g] += v;
    squares[g] += v * v;
  }
  const double per = static_cast<double>(n) / static_cast<double>(std::max<int64_t>(groups, 1));
  T* out = ctx.output(0).as<T>();
  for (size_t i = 0; i < n; ++i) {
    const int64_t g = group_of(i);
    const double mean = sum[g] / per;
    const double sd = std::sqrt(std::max(0.0, squares[g] / per - mean * mean));
    const double v = (static_cast<double>(widen(in[i])) - mean) / (sd + 1e-9);
    out[i] = narrow<T>(static_cast<ComputeType<T>>(v));
  }
}

void run_mean_variance_normalization(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(
      ctx, ctx.input(0).dtype, [&](auto tag) { mean_variance_normalization<decltype(tag)>(ctx); });
}

}  // namespace

void register_audio_norm(graph::OpRegistry& r) {
  graph::OpSchema& mel = r.row("", "MelWeightMatrix");
  mel.kernel = run_mel_weight_matrix;
  mel.kernel_dtypes = dtypes_with_16bit(ArithTypes{});
  mel.kernel_dtype_of = -1;  // output 0: output_datatype
  graph::OpSchema& mvn = r.row("", "MeanVarianceNormalization");
  mvn.kernel = run_mean_variance_normalization;
  mvn.workspace = mvn_workspace;
  mvn.kernel_dtypes = dtypes_with_16bit(RealTypes{});
}

}  // namespace footprint::runtime::kernels
