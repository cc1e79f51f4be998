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
#include <cstdint>
#include <string>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::runtime::kernels {
namespace {

// The op's geometry, from its attributes and the values of image_shape and block_shape.
struct Col2ImGeometry {
  std::vector<int64_t> image, block, dilations, strides, pads;  // pads: begins, then ends
  std::vector<int64_t> grid;                                    // blocks along each spatial axis
  int64_t block_elements = 1, columns = 1, pixels = 1;
};

std::vector<int64_t> int64_values(const graph::KernelContext& ctx, size_t i, const char* what) {
  const graph::TensorRef& t = ctx.input(i);
  if (t.dtype != DType::int64 || t.rank() != 1) ctx.fail(std::string(what) + " must be int64 [S]");
  const int64_t* v = t.as<const int64_t>();
  return {v, v + t.numel()};
}

std::vector<int64_t> attr_or(const graph::KernelContext& ctx, const char* name, size_t count,
                             int64_t fallback) {
  auto v = ctx.attr_ints(name);
  if (!v) return std::vector<int64_t>(count, fallback);
  if (v->size() != count) {
    ctx.fail(std::string(name) + " has " + std::to_string(v->size()) + " values, " +
             std::to_string(count) + " expected");
  }
  return *v;
}

Col2ImGeometry geometry(const graph::KernelContext& ctx) {
  Col2ImGeometry g;
  g.image = int64_values(ctx, 1, "image_shape");
  g.block = int64_values(ctx, 2, "block_shape");
  const size_t s = g.image.size();
  if (s == 0 || g.block.size() != s) {
    ctx.fail("image_shape and block_shape take one extent per spatial axis, as many of each");
  }
  g.dilations = attr_or(ctx, "dilations", s, 1);
  g.strides = attr_or(ctx, "strides", s, 1);
  g.pads = attr_or(ctx, "pads", 2 * s, 0);
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
    g.grid.push_back((padded - span) / g.strides[d] + 1);
    g.block_elements *= g.block[d];
    g.columns *= g.grid.back();
    g.pixels *= g.image[d];
  }
  return g;
}

// The multi-index of `flat` over `extents`, row-major.
void unravel(int64_t flat, const std::vector<int64_t>& extents, std::vector<int64_t>& out) {
  for (size_t d = extents.size(); d-- > 0;) {
    out[d] = flat % extents[d];
    flat /= extents[d];
  }
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
  const int64_t channels = x.dim(1) / g.block_elements;
  graph::TensorRef& y = ctx.output(0);
  if (y.numel() != static_cast<size_t>(batch * channels * g.pixels)) {
    ctx.fail("the output does not hold [N, C, image_shape...]");
  }
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  std::fill(out, out + y.numel(), T{});
  const size_t s = g.image.size();
  std::vector<int64_t> offset(s), at(s);
  // Where each (block element, block) pair lands, or -1 in the padding: the same for every image
  // and channel.
  std::vector<int64_t> target(static_cast<size_t>(g.block_elements * g.columns));
  for (int64_t k = 0; k < g.block_elements; ++k) {
    unravel(k, g.block, offset);
    for (int64_t l = 0; l < g.columns; ++l) {
      unravel(l, g.grid, at);
      int64_t pixel = 0;
      for (size_t d = 0; d < s && pixel >= 0; ++d) {
        const int64_t p = at[d] * g.strides[d] - g.pads[d] + offset[d] * g.dilations[d];
        pixel = p < 0 || p >= g.image[d] ? -1 : pixel * g.image[d] + p;
      }
      target[static_cast<size_t>(k * g.columns + l)] = pixel;
    }
  }
  for (int64_t plane = 0; plane < batch * channels; ++plane) {
    const T* rows = in + plane * g.block_elements * g.columns;
    T* image = out + plane * g.pixels;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] >= 0) image[target[i]] = image[target[i]] + rows[i];
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
