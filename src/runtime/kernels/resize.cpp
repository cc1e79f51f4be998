// Resize and Upsample: each output element interpolated (nearest, linear, cubic) from the input
// elements its coordinate maps to, with ONNX's coordinate transforms.
//
// What the node asks for (which input holds roi, scales and sizes, the modes, the kept aspect
// ratio) is graph::ops::ResizeInputs, decoded once when the model is prepared and the same struct
// shape inference sized the output with. Each dim's taps are computed once per output row or
// column block, on the stack: the run path never allocates.
#include <cmath>
#include <limits>
#include <memory>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "footprint/graph/ops/resize_inputs.hpp"
#include "index_space.hpp"
#include "parallel_for.hpp"
#include "tensor_reads.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

// ---- Resize / Upsample

using Interp = graph::ops::Interpolation;
using Coord = graph::ops::CoordinateTransform;
using Nearest = graph::ops::NearestMode;
using graph::ops::AspectRatioPolicy;
using graph::ops::ResizeInputs;

// What one run interpolates with: the node's decoded attributes and, per dim, the scale and roi
// its inputs give.
struct ResizeParams {
  const ResizeInputs& in;
  std::array<double, kMaxRank> scale{};
  std::array<double, kMaxRank> roi_start{};
  std::array<double, kMaxRank> roi_end{};
};

// A dim's source taps for one output coordinate: up to 4 input indices and their weights.
struct Taps {
  size_t count = 0;
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
  bool outside = false;  // tf_crop_and_resize beyond the input: the extrapolation value
};

// The input coordinate output coordinate x maps to. As the ONNX reference, the resized length
// is scale x input length, unrounded (it differs from the output extent when scales are given).
double source_coordinate(const ResizeParams& p, size_t d, int64_t x, int64_t in, int64_t out) {
  const double s = p.scale[d];
  const auto xo = static_cast<double>(x);
  const double resized = s * static_cast<double>(in);
  switch (p.in.coordinates) {
    case Coord::half_pixel:
      return (xo + 0.5) / s - 0.5;
    case Coord::half_pixel_symmetric: {
      const double adjustment = static_cast<double>(out) / resized;
      const double center = static_cast<double>(in) / 2;
      return center * (1 - adjustment) + (xo + 0.5) / s - 0.5;
    }
    case Coord::pytorch_half_pixel:
      return resized > 1 ? (xo + 0.5) / s - 0.5 : 0.0;
    case Coord::align_corners:
      return resized == 1 ? 0.0 : xo * static_cast<double>(in - 1) / (resized - 1);
    case Coord::asymmetric:
      return xo / s;
    case Coord::tf_half_pixel_for_nn:
      return (xo + 0.5) / s;
    case Coord::tf_crop_and_resize: {
      const double a = p.roi_start[d];
      const double b = p.roi_end[d];
      const auto last = static_cast<double>(in - 1);
      return resized > 1 ? a * last + xo * (b - a) * last / (resized - 1) : 0.5 * (a + b) * last;
    }
  }
  return xo;
}

int64_t nearest_index(double c, Nearest mode) {
  const double f = std::floor(c);
  switch (mode) {
    case Nearest::floor:
      return static_cast<int64_t>(f);
    case Nearest::ceil:
      return static_cast<int64_t>(std::ceil(c));
    case Nearest::round_prefer_floor:
      return static_cast<int64_t>(c - f == 0.5 ? f : std::round(c));
    case Nearest::round_prefer_ceil:
      return static_cast<int64_t>(c - f == 0.5 ? f + 1 : std::round(c));
  }
  return static_cast<int64_t>(f);
}

std::array<double, 4> cubic_coefficients(double t, double a) {
  const double t1 = t + 1;
  const double t2 = 1 - t;
  const double t3 = 2 - t;
  return {((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1, ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a};
}

Taps taps_for(const ResizeParams& p, size_t d, int64_t x, int64_t in, int64_t out) {
  Taps t;
  const double c = source_coordinate(p, d, x, in, out);
  const auto last = static_cast<double>(in - 1);
  if (p.in.coordinates == Coord::tf_crop_and_resize && (c < 0 || c > last)) {
    t.outside = true;
    return t;
  }
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  if (p.in.mode == Interp::nearest) {
    t.count = 1;
    t.index[0] = clamp(nearest_index(c, p.in.nearest));
    t.weight[0] = 1;
  } else if (p.in.mode == Interp::linear) {
    const double cc = std::clamp(c, 0.0, last);
    const auto i0 = static_cast<int64_t>(std::floor(cc));
    const double w1 = cc - static_cast<double>(i0);
    t.count = 2;
    t.index = {i0, clamp(i0 + 1), 0, 0};
    t.weight = {1 - w1, w1, 0, 0};
  } else {
    const auto i0 = static_cast<int64_t>(std::floor(c));
    const auto w = cubic_coefficients(c - static_cast<double>(i0), p.in.cubic_coeff_a);
    t.count = 4;
    double sum = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int64_t i = i0 - 1 + static_cast<int64_t>(k);
      const bool in_range = i >= 0 && i < in;
      t.index[k] = clamp(i);
      t.weight[k] = p.in.exclude_outside && !in_range ? 0.0 : w[k];
      sum += t.weight[k];
    }
    if (p.in.exclude_outside && sum != 0) {
      for (double& v : t.weight) v /= sum;
    }
  }
  // Zero-weight taps dropped: a dim that is not resized (scale 1) then walks one tap, not
  // two or four.
  size_t kept = 0;
  for (size_t k = 0; k < t.count; ++k) {
    if (t.weight[k] == 0) continue;
    t.index[kept] = t.index[k];
    t.weight[kept] = t.weight[k];
    ++kept;
  }
  t.count = std::max<size_t>(kept, 1);  // all zero: one tap of weight 0
  if (kept == 0) t.weight[0] = 0;
  return t;
}

// A float tensor's elements (float or double) into `out`; returns the count.
size_t read_reals(const KernelContext& ctx, const TensorRef& t, std::span<double> out) {
  const size_t n = t.numel();
  if (n > out.size()) ctx.fail("a scales or roi tensor is too long");
  for (size_t i = 0; i < n; ++i) {
    if (t.dtype == DType::float32) {
      out[i] = t.as<const float>()[i];
    } else if (t.dtype == DType::float64) {
      out[i] = t.as<const double>()[i];
    } else if (t.dtype == DType::float16) {
      out[i] = to_float(t.as<const Float16>()[i]);
    } else {
      ctx.fail("scales and roi must be floating point");
    }
  }
  return n;
}

// The resized dims' indices (every dim when axes is empty) into `out`; returns the count.
size_t resized_axes(const KernelContext& ctx, const ResizeInputs& in, size_t rank, Index& out) {
  if (in.axes.empty()) {
    for (size_t d = 0; d < rank; ++d) out[d] = static_cast<int64_t>(d);
    return rank;
  }
  if (in.axes.size() > rank) ctx.fail("axes has more entries than the input has dims");
  for (size_t i = 0; i < in.axes.size(); ++i) {
    out[i] = static_cast<int64_t>(normalize_axis(ctx, in.axes[i], rank));
  }
  return in.axes.size();
}

// Scales per dim: given (attribute or input), or output / input extents when sizes decide.
void resize_scales(const KernelContext& ctx, const ResizeInputs& in, const TensorRef& x,
                   const TensorRef& y, ResizeParams& p) {
  const size_t rank = x.rank();
  std::array<double, 2 * kMaxRank> buffer{};
  size_t n = 0;
  if (in.scales_attribute) {
    n = std::min(in.attribute_scales.size(), buffer.size());
    std::copy_n(in.attribute_scales.begin(), n, buffer.begin());
  } else if (const TensorRef* s =
                 in.scales_input >= 0 ? ctx.input_or_null(in.scales_input) : nullptr;
             s != nullptr && s->numel() > 0) {
    n = read_reals(ctx, *s, buffer);
  }
  Index axes{};
  const size_t n_axes = resized_axes(ctx, in, rank, axes);
  for (size_t d = 0; d < rank; ++d) {
    p.scale[d] =
        static_cast<double>(y.dims[d]) / static_cast<double>(std::max<int64_t>(x.dims[d], 1));
  }
  if (n > 0) {
    for (size_t d = 0; d < rank; ++d) p.scale[d] = 1;
    for (size_t i = 0; i < n; ++i) {
      const size_t d = in.axes.empty() ? i : static_cast<size_t>(axes[i]);
      p.scale[d] = buffer[i];
    }
    return;
  }
  if (in.policy == AspectRatioPolicy::stretch) return;
  // Sizes with a kept aspect ratio: one scale for every resized axis, the one inference sized
  // the output with (the requested sizes are not the output's extents here).
  Index sizes{};
  if (read_ints(ctx, ctx.input(static_cast<size_t>(in.sizes_input)), sizes) != n_axes) {
    ctx.fail("sizes must have one entry per resized axis");
  }
  Index extents{};
  for (size_t i = 0; i < n_axes; ++i) extents[i] = x.dims[static_cast<size_t>(axes[i])];
  const double common = graph::ops::kept_aspect_scale(in.policy, std::span(sizes).first(n_axes),
                                                      std::span(extents).first(n_axes));
  for (size_t i = 0; i < n_axes; ++i) p.scale[static_cast<size_t>(axes[i])] = common;
}

ResizeParams resize_params(const KernelContext& ctx, const ResizeInputs& in, const TensorRef& x,
                           const TensorRef& y) {
  ResizeParams p{in};
  if (in.antialias) ctx.fail("antialias is not supported");
  resize_scales(ctx, in, x, y, p);
  if (in.coordinates == Coord::tf_crop_and_resize) {
    std::array<double, 2 * kMaxRank> roi{};
    const TensorRef* r = in.roi_input >= 0 ? ctx.input_or_null(in.roi_input) : nullptr;
    const size_t n = r != nullptr ? read_reals(ctx, *r, roi) : 0;
    Index axes{};
    const size_t count = resized_axes(ctx, in, x.rank(), axes);
    for (size_t d = 0; d < x.rank(); ++d) p.roi_end[d] = 1;
    if (n != 2 * count) ctx.fail("roi must have 2 entries per resized dim");
    for (size_t i = 0; i < count; ++i) {
      const auto d = static_cast<size_t>(axes[i]);
      p.roi_start[d] = roi[i];
      p.roi_end[d] = roi[count + i];
    }
  }
  return p;
}

template <class T>
T resize_value(double v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::clamp(std::nearbyint(v),
                                     static_cast<double>(std::numeric_limits<T>::lowest()),
                                     static_cast<double>(std::numeric_limits<T>::max())));
  } else {
    return static_cast<T>(v);
  }
}

// One output element from its dims' taps: the weighted sum over their product (the general
// path, for rows whose outer taps do not fit RowTaps).
template <class T>
double resize_element(const T* in, const Index& xs, size_t rank,
                      const std::array<Taps, kMaxRank>& taps) {
  double acc = 0;
  Index k{};
  while (true) {
    double w = 1;
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) {
      w *= taps[d].weight[static_cast<size_t>(k[d])];
      off += taps[d].index[static_cast<size_t>(k[d])] * xs[d];
    }
    acc += w * static_cast<double>(in[off]);
    size_t d = rank;
    while (d-- > 0) {
      if (static_cast<size_t>(++k[d]) < taps[d].count) break;
      k[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return acc;
  }
}

// The taps of every dim but the last combined for one output row: (input offset, weight).
constexpr size_t kMaxCombos = 256;
struct RowTaps {
  size_t count = 0;
  bool outside = false;
  std::array<int64_t, kMaxCombos> offset{};
  std::array<double, kMaxCombos> weight{};
};

// False when the product of the taps has more than kMaxCombos entries.
bool combine_row(const std::array<Taps, kMaxRank>& taps, size_t last, const Index& xs,
                 RowTaps& row) {
  row.count = 1;
  row.offset[0] = 0;
  row.weight[0] = 1;
  row.outside = false;
  for (size_t d = 0; d < last; ++d) {
    const Taps& t = taps[d];
    if (t.outside) {
      row.outside = true;
      return true;
    }
    if (row.count * t.count > kMaxCombos) return false;
    // Expanded in place from the back, so no entry is overwritten before it is read.
    for (size_t c = row.count; c-- > 0;) {
      const int64_t off = row.offset[c];
      const double w = row.weight[c];
      for (size_t k = t.count; k-- > 0;) {
        row.offset[c * t.count + k] = off + t.index[k] * xs[d];
        row.weight[c * t.count + k] = w * t.weight[k];
      }
    }
    row.count *= t.count;
  }
  return true;
}

// Output rows in parallel, a block of columns at a time: the columns' taps are computed once
// per block (on the stack), each row's outer taps once per row.
constexpr size_t kColumns = 128;

template <class T>
void resize_rows(const KernelContext& ctx, const TensorRef& x, TensorRef& y, const ResizeParams& p,
                 size_t c0, const std::array<Taps, kColumns>& cols, size_t len) {
  const size_t rank = x.rank();
  const size_t last = rank - 1;
  const auto width = static_cast<size_t>(y.dims[last]);
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  Index xs{};
  strides_into(x.dims, xs);
  parallel_for(
      ctx.threads(), y.numel() / width,
      [&](size_t begin, size_t end) {
        Index at{};
        size_t rest = begin;
        for (size_t d = last; d-- > 0;) {
          at[d] = static_cast<int64_t>(rest % static_cast<size_t>(y.dims[d]));
          rest /= static_cast<size_t>(y.dims[d]);
        }
        std::array<Taps, kMaxRank> taps{};
        for (size_t d = 0; d < last; ++d) taps[d] = taps_for(p, d, at[d], x.dims[d], y.dims[d]);
        RowTaps row;
        for (size_t r = begin; r < end; ++r) {
          const bool combined = combine_row(taps, last, xs, row);
          T* o = out + r * width + c0;
          for (size_t j = 0; j < len; ++j) {
            const Taps& t = cols[j];
            double v = p.in.extrapolation_value;
            if (!row.outside && !t.outside && combined) {
              v = 0;
              for (size_t c = 0; c < row.count; ++c) {
                const T* base = in + row.offset[c];
                double acc = 0;
                for (size_t k = 0; k < t.count; ++k)
                  acc += t.weight[k] * static_cast<double>(base[t.index[k]]);
                v += row.weight[c] * acc;
              }
            } else if (!row.outside && !t.outside) {
              taps[last] = t;
              v = resize_element(in, xs, rank, taps);
            }
            o[j] = resize_value<T>(v);
          }
          for (size_t d = last; d-- > 0;) {
            const bool wrapped = ++at[d] >= y.dims[d];
            if (wrapped) at[d] = 0;
            taps[d] = taps_for(p, d, at[d], x.dims[d], y.dims[d]);
            if (!wrapped) break;
          }
        }
      },
      std::max<size_t>(1, 4096 / len));
}

template <class T>
void resize_as(const KernelContext& ctx, const TensorRef& x, TensorRef& y, const ResizeParams& p) {
  if (x.rank() == 0) {
    *y.as<T>() = *x.as<const T>();
    return;
  }
  const size_t last = x.rank() - 1;
  const auto width = static_cast<size_t>(y.dims[last]);
  std::array<Taps, kColumns> cols{};
  for (size_t c0 = 0; c0 < width; c0 += kColumns) {
    const size_t len = std::min(kColumns, width - c0);
    for (size_t j = 0; j < len; ++j) {
      cols[j] = taps_for(p, last, static_cast<int64_t>(c0 + j), x.dims[last], y.dims[last]);
    }
    resize_rows<T>(ctx, x, y, p, c0, cols, len);
  }
}

// The node's decoded attributes, built once when the model is prepared.
class ResizeState final : public graph::KernelState {
 public:
  explicit ResizeState(ResizeInputs in) : inputs(std::move(in)) {}
  ResizeInputs inputs;
};

template <graph::ops::ResizeOp kOp>
ResizeInputs decode(const KernelContext& ctx) {
  return ResizeInputs::decode(ctx.node(), ctx.node_id(), ctx.opset(), kOp);
}

template <graph::ops::ResizeOp kOp>
std::unique_ptr<graph::KernelState> resize_prepare(const KernelContext& ctx) {
  return std::make_unique<ResizeState>(decode<kOp>(ctx));
}

void resize_with(KernelContext& ctx, const ResizeInputs& in, const TensorRef& x, TensorRef& y) {
  const ResizeParams p = resize_params(ctx, in, x, y);
  dispatch_or_fail<ArithTypes>(ctx, x.dtype,
                               [&](auto tag) { resize_as<decltype(tag)>(ctx, x, y, p); });
}

template <graph::ops::ResizeOp kOp>
void resize_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  check_rank(ctx, x.rank());
  if (y.numel() == 0) return;
  if (x.numel() == 0) ctx.fail("cannot resize an empty tensor");
  if (const auto* state = dynamic_cast<const ResizeState*>(ctx.state())) {
    resize_with(ctx, state->inputs, x, y);
    return;
  }
  // Unprepared (a lone kernel run) it decodes here; nothing it reads then allocates unless the
  // node has axes or Upsample-7's scales.
  resize_with(ctx, decode<kOp>(ctx), x, y);
}

}  // namespace

void register_resize(graph::OpRegistry& r) {
  using graph::ops::ResizeOp;
  graph::OpSchema& resize = r.row("", "Resize");
  resize.kernel = resize_kernel<ResizeOp::resize>;
  resize.prepare = resize_prepare<ResizeOp::resize>;
  graph::OpSchema& upsample = r.row("", "Upsample");
  upsample.kernel = resize_kernel<ResizeOp::upsample>;
  upsample.prepare = resize_prepare<ResizeOp::upsample>;
  resize.kernel_dtypes = upsample.kernel_dtypes = dtypes_of(ArithTypes{});
}

}  // namespace footprint::runtime::kernels
