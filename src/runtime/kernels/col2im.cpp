// Col2Im (opset 18): the inverse of the im2col a convolution lowers to. Input 0 holds, for each
// image and channel, prod(block_shape) rows of L columns: row k is the block element at offset k
// (row-major over block_shape), column l the block at position l (row-major over the grid of
// blocks the padded image holds at these strides). Each value is added to the image pixel it
// came from, dilated; values that fell in the padding are dropped. So overlapping blocks sum,
// which is what the op is for (a fold after an unfold, a transposed convolution's last step).
//
//   y[n, c, p] = sum over (k, l) with position(k, l) == p of x[n, c * K + k, l]
//   position(k, l)[d] = grid(l)[d] * strides[d] - pads[d] + offset(k)[d] * dilations[d]
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "index_space.hpp"
#include "tensor_reads.hpp"

namespace footprint::runtime::kernels {
namespace {

// The op's geometry, from its attributes and the values of image_shape and block_shape, in
// fixed arrays: a kernel run allocates nothing.
struct Col2ImGeometry {
  size_t spatial = 0;
  Index image{}, block{}, dilations{}, strides{}, grid{};  // grid: blocks along each axis
  std::array<int64_t, 2 * kMaxRank> pads{};                // begins, then ends
  int64_t block_elements = 1, columns = 1, pixels = 1;
};

size_t int64_values(const graph::KernelContext& ctx, size_t i, const char* what, Index& out) {
  const graph::TensorRef& t = ctx.input(i);
  if (t.dtype != DType::int64 || t.rank() != 1 || t.numel() > kMaxRank) {
    ctx.fail(std::string(what) + " must be int64 [S], S at most " + std::to_string(kMaxRank));
  }
  std::copy_n(t.as<const int64_t>(), t.numel(), out.begin());
  return t.numel();
}

// An ints attribute of `count` values into `out`, `fallback` each where it is absent.
void attr_or(const graph::KernelContext& ctx, const char* name, size_t count, int64_t fallback,
             std::span<int64_t> out) {
  const auto n = attr_ints_into(ctx, name, out);
  if (!n) {
    std::fill_n(out.begin(), count, fallback);
  } else if (*n != count) {
    ctx.fail(std::string(name) + " has " + std::to_string(*n) + " values, " +
             std::to_string(count) + " expected");
  }
}

Col2ImGeometry geometry(const graph::KernelContext& ctx) {
  Col2ImGeometry g;
  const size_t s = int64_values(ctx, 1, "image_shape", g.image);
  if (s == 0 || int64_values(ctx, 2, "block_shape", g.block) != s) {
    ctx.fail("image_shape and block_shape take one extent per spatial axis, as many of each");
  }
  g.spatial = s;
  attr_or(ctx, "dilations", s, 1, g.dilations);
  attr_or(ctx, "strides", s, 1, g.strides);
  attr_or(ctx, "pads", 2 * s, 0, g.pads);
  for (size_t d = 0; d < s; ++d) {
    if (g.image[d] <= 0 || g.block[d] <= 0 || g.dilations[d] <= 0 || g.strides[d] <= 0 ||
        g.pads[d] < 0 || g.pads[d + s] < 0) {
      ctx.fail(
          "image_shape, block_shape, dilations and strides must be positive, pads not negative");
    }
    const int64_t span = g.dilations[d] * (g.block[d] - 1) + 1;
    const int64_t padded = g.image[d] + g.pads[d] + g.pads[d + s];
    if (padded < span) {
      ctx.fail("a block spans " + std::to_string(span) + " pixels of axis " + std::to_string(d) +
               ", more than its " + std::to_string(padded) + " padded pixels");
    }
    g.grid[d] = (padded - span) / g.strides[d] + 1;
    g.block_elements *= g.block[d];
    g.columns *= g.grid[d];
    g.pixels *= g.image[d];
  }
  return g;
}

// The multi-index of `flat` over the first `n` of `extents`, row-major.
void unravel(int64_t flat, const Index& extents, size_t n, Index& out) {
  for (size_t d = n; d-- > 0;) {
    out[d] = flat % extents[d];
    flat /= extents[d];
  }
}

// The image pixel block element k of block l lands on, or -1 in the padding.
int64_t target(const Col2ImGeometry& g, int64_t k, int64_t l) {
  Index offset{}, at{};
  unravel(k, g.block, g.spatial, offset);
  unravel(l, g.grid, g.spatial, at);
  int64_t pixel = 0;
  for (size_t d = 0; d < g.spatial; ++d) {
    const int64_t p = at[d] * g.strides[d] - g.pads[d] + offset[d] * g.dilations[d];
    if (p < 0 || p >= g.image[d]) return -1;
    pixel = pixel * g.image[d] + p;
  }
  return pixel;
}

template <class T>
void col2im(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const Col2ImGeometry g = geometry(ctx);
  if (x.rank() != 3) ctx.fail("the input is [N, C x prod(block_shape), L]");
  const int64_t batch = x.dim(0);
  if (x.dim(1) % g.block_elements != 0 || x.dim(2) != g.columns) {
    ctx.fail("the input [" + std::to_string(batch) + ", " + std::to_string(x.dim(1)) + ", " +
             std::to_string(x.dim(2)) + "] is not C x " + std::to_string(g.block_elements) +
             " rows of the " + std::to_string(g.columns) + " blocks these extents give");
  }
  const int64_t planes = batch * (x.dim(1) / g.block_elements);
  graph::TensorRef& y = ctx.output(0);
  if (y.numel() != static_cast<size_t>(planes * g.pixels)) {
    ctx.fail("the output does not hold [N, C, image_shape...]");
  }
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  std::fill(out, out + y.numel(), T{});
  // Each (block element, block) pair's pixel, worked out once for every image and channel.
  const int64_t pairs = g.block_elements * g.columns;
  for (int64_t i = 0; i < pairs; ++i) {
    const int64_t pixel = target(g, i / g.columns, i % g.columns);
    if (pixel < 0) continue;
    for (int64_t plane = 0; plane < planes; ++plane) {
      out[plane * g.pixels + pixel] += in[plane * pairs + i];
    }
  }
}

void run_col2im(graph::KernelContext& ctx) {
  dispatch_or_fail<RealTypes>(ctx, ctx.input(0).dtype,
                              [&](auto tag) { col2im<decltype(tag)>(ctx); });
}

}  // namespace

void register_col2im(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "Col2Im");
  row.kernel = run_col2im;
  row.kernel_dtypes = dtypes_of(RealTypes{});
}

}  // namespace footprint::runtime::kernels
