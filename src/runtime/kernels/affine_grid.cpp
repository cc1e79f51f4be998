// AffineGrid (opset 20): the sampling grid GridSample reads, each output position's normalised
// coordinates (x, y[, z]) in [-1, 1] mapped by the batch entry's affine matrix theta:
//
//   grid[n, (d,) h, w] = theta[n] . (x_w, y_h, (z_d,) 1)
//
// A coordinate along an axis of extent E is -1 + (2 i + 1) / E (pixel centres), or with
// align_corners -1 + 2 i / (E - 1) (corner pixels at -1 and 1; -1 alone when E is 1), as ONNX's
// reference computes them; the sums run in double.
#include <cstdint>
#include <string>

#include "dtype_dispatch.hpp"
#include "families.hpp"

namespace footprint::runtime::kernels {
namespace {

double coordinate(int64_t i, int64_t extent, bool align_corners) {
  if (align_corners) {
    return extent == 1 ? -1.0
                       : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(extent - 1);
  }
  return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(extent);
}

template <class T>
void affine_grid(graph::KernelContext& ctx) {
  const graph::TensorRef& theta = ctx.input(0);
  graph::TensorRef& grid = ctx.output(0);
  const size_t spatial = grid.rank() - 2;  // 2 or 3
  if ((spatial != 2 && spatial != 3) || theta.rank() != 3 ||
      theta.dim(1) != static_cast<int64_t>(spatial) ||
      theta.dim(2) != static_cast<int64_t>(spatial) + 1 || theta.dim(0) != grid.dim(0) ||
      grid.dim(grid.rank() - 1) != static_cast<int64_t>(spatial)) {
    ctx.fail("theta is [N, 2, 3] for a 2-D grid [N, H, W, 2] or [N, 3, 4] for [N, D, H, W, 3]");
  }
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  const int64_t depth = spatial == 3 ? grid.dim(1) : 1;
  const int64_t height = grid.dim(spatial == 3 ? 2 : 1);
  const int64_t width = grid.dim(spatial == 3 ? 3 : 2);
  const auto s = static_cast<int64_t>(spatial);
  const T* th = theta.as<const T>();
  T* out = grid.as<T>();
  for (int64_t n = 0; n < grid.dim(0); ++n) {
    const T* m = th + n * s * (s + 1);  // row r of theta[n]: m[r * (s + 1) ...]
    for (int64_t d = 0; d < depth; ++d) {
      const double z = spatial == 3 ? coordinate(d, depth, align) : 0.0;
      for (int64_t h = 0; h < height; ++h) {
        const double y = coordinate(h, height, align);
        for (int64_t w = 0; w < width; ++w) {
          const double x = coordinate(w, width, align);
          const double p[4] = {x, y, spatial == 3 ? z : 1.0, 1.0};
          for (int64_t r = 0; r < s; ++r) {
            double sum = 0;
            for (int64_t c = 0; c <= s; ++c) {
              sum += static_cast<double>(widen(m[r * (s + 1) + c])) * p[c];
            }
            *out++ = narrow<T>(sum);
          }
        }
      }
    }
  }
}

void run_affine_grid(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { affine_grid<decltype(tag)>(ctx); });
}

}  // namespace

void register_affine_grid(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "AffineGrid");
  row.kernel = run_affine_grid;
  row.kernel_dtypes = dtypes_with_16bit(RealTypes{});
}

}  // namespace footprint::runtime::kernels
