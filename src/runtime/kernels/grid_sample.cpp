// GridSample (opsets 16 and 20; row and inference in graph/ops/detection.cpp): each output
// position samples X [N, C, (D,) H, W] at the grid's normalised coordinates (x, y[, z]) in
// [-1, 1], as ONNX's reference samples:
//
// - a coordinate maps to pixels as ((c + 1) E - 1) / 2, or with align_corners (c + 1)(E - 1) / 2;
// - outside the borders ([-0.5, E - 0.5], or [0, E - 1] with align_corners) "border" clamps it
//   into [0, E - 1] and "reflection" reflects it back between the borders;
// - "nearest" rounds it half to even (in 3-D too: onnx 1.20.1's volumetric test data, where an
//   older reference rounded half away from zero as PyTorch's 3-D kernel does),
//   "linear"/"bilinear" weighs the 2 pixels around it per axis, "cubic"/"bicubic" 4, with Keys's
//   coefficients (a = -0.75), the innermost axis first, then each outer one over those results;
// - a pixel outside X reads 0 ("zeros"), the nearest edge ("border") or its reflection.
//
// The arithmetic runs in float (double for double tensors), 16-bit tensors widened on load and
// rounded once on store.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {
namespace {

enum class Mode : uint8_t { nearest, linear, cubic };
enum class Padding : uint8_t { zeros, border, reflection };

constexpr size_t kMaxSpatial = 3;

struct Sampling {
  Mode mode = Mode::linear;
  Padding padding = Padding::zeros;
  bool align_corners = false;
  size_t spatial = 2;
  std::array<int64_t, kMaxSpatial> extent{};  // X's spatial extents, outermost first
};

Sampling sampling_of(const graph::KernelContext& ctx) {
  Sampling s;
  const std::string_view mode = ctx.attr_string("mode", "linear");
  if (mode == "nearest") {
    s.mode = Mode::nearest;
  } else if (mode == "linear" || mode == "bilinear") {
    s.mode = Mode::linear;
  } else if (mode == "cubic" || mode == "bicubic") {
    s.mode = Mode::cubic;
  } else {
    ctx.fail("mode '" + std::string(mode) + "' is not nearest, linear or cubic");
  }
  const std::string_view padding = ctx.attr_string("padding_mode", "zeros");
  if (padding == "zeros") {
    s.padding = Padding::zeros;
  } else if (padding == "border") {
    s.padding = Padding::border;
  } else if (padding == "reflection") {
    s.padding = Padding::reflection;
  } else {
    ctx.fail("padding_mode '" + std::string(padding) + "' is not zeros, border or reflection");
  }
  s.align_corners = ctx.attr_int("align_corners", 0) != 0;
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& grid = ctx.input(1);
  if (x.rank() < 4 || x.rank() > 2 + kMaxSpatial) {
    ctx.fail("X has rank " + std::to_string(x.rank()) + "; the kernel samples 2-D and 3-D images");
  }
  s.spatial = x.rank() - 2;
  if (grid.rank() != x.rank() || grid.dim(0) != x.dim(0) ||
      grid.dim(grid.rank() - 1) != static_cast<int64_t>(s.spatial)) {
    ctx.fail("the grid is [N, out..., " + std::to_string(s.spatial) + "] for X's N and rank");
  }
  if (s.mode == Mode::cubic && s.spatial != 2) ctx.fail("cubic sampling is 2-D only");
  for (size_t a = 0; a < s.spatial; ++a) s.extent[a] = x.dim(2 + a);
  return s;
}

template <class F>
F reflect(F v, F lo, F hi) {
  const F range = hi - lo;
  if (v < lo) {
    const F d = lo - v;
    const auto n = static_cast<int64_t>(d / range);
    const F r = d - static_cast<F>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (v > hi) {
    const F d = v - hi;
    const auto n = static_cast<int64_t>(d / range);
    const F r = d - static_cast<F>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return v;
}

// Keys's cubic convolution weights of the 4 pixels around a point t past the second of them.
template <class F>
std::array<F, 4> cubic_weights(F t) {
  constexpr F a = static_cast<F>(-0.75);
  const F x = std::abs(t);
  return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a,
          ((a + 2) * x - (a + 3)) * x * x + 1,
          ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
          ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

template <class T, class F>
class Sampler {
 public:
  Sampler(const Sampling& s, const T* image) : s_(s), image_(image) {
    for (size_t a = 0; a < s.spatial; ++a) {
      const auto e = static_cast<F>(s.extent[a]);
      lo_[a] = s.align_corners ? F{0} : F{-0.5};
      hi_[a] = s.align_corners ? e - 1 : e - F{0.5};
    }
  }

  // The value at pixel coordinates p (outermost axis first).
  F at(std::array<F, kMaxSpatial> p) const {
    for (size_t a = 0; a < s_.spatial; ++a) {
      if (s_.mode == Mode::nearest) p[a] = std::nearbyint(p[a]);
      if (p[a] < lo_[a] || p[a] > hi_[a]) {
        if (s_.padding == Padding::border) {
          p[a] = std::clamp(p[a], F{0}, static_cast<F>(s_.extent[a] - 1));
        } else if (s_.padding == Padding::reflection) {
          p[a] = reflect(p[a], lo_[a], hi_[a]);
        }
      }
    }
    std::array<int64_t, kMaxSpatial> i{};
    if (s_.mode == Mode::nearest) {
      for (size_t a = 0; a < s_.spatial; ++a) i[a] = static_cast<int64_t>(p[a]);
      return pixel(i);
    }
    return interpolate(p, 0, i);
  }

 private:
  // Axis `axis` and those inside it interpolated around p, the outer axes' pixels fixed in i.
  F interpolate(const std::array<F, kMaxSpatial>& p, size_t axis,
                std::array<int64_t, kMaxSpatial>& i) const {
    if (axis == s_.spatial) return pixel(i);
    const F base = std::floor(p[axis]);
    const F t = p[axis] - base;
    const auto first = static_cast<int64_t>(base);
    F sum = 0;
    if (s_.mode == Mode::linear) {
      const std::array<F, 2> w{1 - t, t};
      for (int64_t k = 0; k < 2; ++k) {
        i[axis] = first + k;
        sum += w[static_cast<size_t>(k)] * interpolate(p, axis + 1, i);
      }
    } else {
      const std::array<F, 4> w = cubic_weights(t);
      for (int64_t k = 0; k < 4; ++k) {
        i[axis] = first - 1 + k;
        sum += w[static_cast<size_t>(k)] * interpolate(p, axis + 1, i);
      }
    }
    return sum;
  }

  F pixel(std::array<int64_t, kMaxSpatial> i) const {
    int64_t offset = 0;
    for (size_t a = 0; a < s_.spatial; ++a) {
      const int64_t e = s_.extent[a];
      if (i[a] < 0 || i[a] >= e) {
        if (s_.padding == Padding::zeros) return 0;
        if (s_.padding == Padding::border) {
          i[a] = std::clamp<int64_t>(i[a], 0, e - 1);
        } else {
          i[a] = static_cast<int64_t>(reflect(static_cast<F>(i[a]), lo_[a], hi_[a]));
          i[a] = std::clamp<int64_t>(i[a], 0, e - 1);  // a border of -0.5 truncates to 0
        }
      }
      offset = offset * e + i[a];
    }
    return static_cast<F>(widen(image_[offset]));
  }

  const Sampling& s_;
  const T* image_;
  std::array<F, kMaxSpatial> lo_{}, hi_{};
};

template <class T>
void grid_sample(graph::KernelContext& ctx) {
  using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Sampling s = sampling_of(ctx);
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& grid = ctx.input(1);
  const int64_t n = x.dim(0);
  const int64_t channels = x.dim(1);
  int64_t plane = 1;
  for (size_t a = 0; a < s.spatial; ++a) plane *= s.extent[a];
  int64_t points = 1;  // output positions per image
  for (size_t a = 1; a + 1 < grid.rank(); ++a) points *= grid.dim(a);
  const T* xs = x.as<const T>();
  T* y = ctx.output(0).as<T>();
  dispatch_with_16bit<RealTypes>(ctx, grid.dtype, [&](auto grid_tag) {
    using G = decltype(grid_tag);
    const G* g = grid.as<const G>();
    parallel_for(
        ctx.threads(), static_cast<size_t>(n * channels),
        [&](size_t begin, size_t end) {
          for (size_t plane_index = begin; plane_index < end; ++plane_index) {
            const auto image = static_cast<int64_t>(plane_index) / channels;
            const Sampler<T, F> sampler(s, xs + static_cast<int64_t>(plane_index) * plane);
            T* out = y + static_cast<int64_t>(plane_index) * points;
            for (int64_t q = 0; q < points; ++q) {
              const G* c = g + (image * points + q) * static_cast<int64_t>(s.spatial);
              std::array<F, kMaxSpatial> p{};
              // The grid lists (x, y[, z]): innermost axis first.
              for (size_t a = 0; a < s.spatial; ++a) {
                const auto v = static_cast<F>(widen(c[s.spatial - 1 - a]));
                const auto e = static_cast<F>(s.extent[a]);
                p[a] = s.align_corners ? (v + 1) / 2 * (e - 1) : ((v + 1) * e - 1) / 2;
              }
              out[q] = narrow<T>(static_cast<ComputeType<T>>(sampler.at(p)));
            }
          }
        },
        1);
  });
}

void run_grid_sample(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { grid_sample<decltype(tag)>(ctx); });
}

}  // namespace

void register_grid_sample(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "GridSample");
  row.kernel = run_grid_sample;
  row.kernel_dtypes = dtypes_with_16bit(RealTypes{});
}

}  // namespace footprint::runtime::kernels
