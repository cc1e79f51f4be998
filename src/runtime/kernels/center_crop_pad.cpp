// CenterCropPad (opset 18): each listed axis cropped to, or padded with zeros to, the extent the
// `shape` input gives it, centred: cropping starts floor((in - out) / 2) in, padding puts the
// input floor((out - in) / 2) in, as ONNX's reference does. The elements move without being
// read (any dtype), one innermost run at a time.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "index_space.hpp"
#include "tensor_reads.hpp"

namespace footprint::runtime::kernels {
namespace {

void run_center_crop_pad(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  graph::TensorRef& y = ctx.output(0);
  const size_t rank = x.rank();
  if (y.rank() != rank) ctx.fail("the output's rank differs from the input's");
  check_rank(ctx, rank);
  // Per axis: where the kept run starts in the input and in the output, and its length (fixed
  // arrays: a kernel run allocates nothing).
  Index from{}, to{}, count{};
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = x.dim(d);
    const int64_t out = y.dim(d);
    from[d] = in > out ? (in - out) / 2 : 0;
    to[d] = out > in ? (out - in) / 2 : 0;
    count[d] = std::min(in, out);
  }
  const DTypeTraits& traits = dtype_traits(x.dtype);
  if (traits.bits < 8 || traits.packed) ctx.fail("its dtype has no whole-byte element size");
  const auto element = static_cast<size_t>(traits.bits / 8);
  std::memset(y.data, 0, y.bytes());
  if (rank == 0) {
    std::memcpy(y.data, x.data, element);
    return;
  }
  if (std::any_of(count.begin(), count.begin() + static_cast<std::ptrdiff_t>(rank),
                  [](int64_t c) { return c == 0; })) {
    return;
  }
  // Element strides of each tensor.
  Index xs{}, ys{};
  xs[rank - 1] = ys[rank - 1] = 1;
  for (size_t d = rank - 1; d-- > 0;) {
    xs[d] = xs[d + 1] * x.dim(d + 1);
    ys[d] = ys[d + 1] * y.dim(d + 1);
  }
  const auto* src = static_cast<const std::byte*>(x.data);
  auto* dst = static_cast<std::byte*>(y.data);
  const size_t run = static_cast<size_t>(count[rank - 1]) * element;
  Index at{};  // over the kept block's outer axes
  while (true) {
    int64_t xi = from[rank - 1], yi = to[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) {
      xi += (from[d] + at[d]) * xs[d];
      yi += (to[d] + at[d]) * ys[d];
    }
    std::memcpy(dst + static_cast<size_t>(yi) * element, src + static_cast<size_t>(xi) * element,
                run);
    size_t d = rank - 1;
    while (d-- > 0) {
      if (++at[d] < count[d]) break;
      at[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

}  // namespace

void register_center_crop_pad(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "CenterCropPad");
  row.kernel = run_center_crop_pad;
  row.kernel_dtypes = movable_dtypes();
}

}  // namespace footprint::runtime::kernels
