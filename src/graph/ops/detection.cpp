// Detection and sampling ops: NonMaxSuppression (a data-dependent count of boxes), RoiAlign
// (one output_height x output_width map per region), GridSample (the grid's extents) and
// AffineGrid (the grid it makes from theta and the size input's values).
#include <optional>
#include <string>

#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// [selected boxes, 3] of (batch, class, box) indices. The count is known only when running, at
// most max_output_boxes_per_class (input 2; absent means 0) of each class's boxes in each batch:
// boxes [B, S, 4], scores [B, C, S].
void infer_nms(const InferContext& ctx, InferResult& r) {
  const Shape& scores = ctx.input(1).shape;
  Dim bound = Dim::unknown();
  if (scores.ranked && scores.rank() == 3) {
    Dim per_class = scores.dims[2];
    if (!ctx.has_input(2)) {
      per_class = Dim::known(0);
    } else if (const auto m = ctx.input_ints(2); m && m->size() == 1) {
      per_class = min(per_class, Dim::known(std::max<int64_t>((*m)[0], 0)));
    }
    bound = scores.dims[0] * scores.dims[1] * per_class;
  }
  const Dim selected = bound.value() == 0 ? bound : data_dependent(ctx, bound);
  set_output(r, 0, DType::int64, ranked({selected, Dim::known(3)}));
}

// RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]) -> [R, C, oh, ow].
void infer_roi_align(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const Shape& rois = ctx.input(1).shape;
  const Dim regions = rois.ranked && rois.rank() == 2 ? rois.dims[0] : Dim::unknown();
  const Dim channels = x.shape.ranked && x.shape.rank() == 4 ? x.shape.dims[1] : Dim::unknown();
  set_output(r, 0, x.dtype,
             ranked({regions, channels, Dim::known(ctx.attr_int("output_height", 1)),
                     Dim::known(ctx.attr_int("output_width", 1))}));
}

// GridSample(X [N, C, D...], grid [N, out..., rank]) -> [N, C, out...].
void infer_grid_sample(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const Shape& grid = ctx.input(1).shape;
  if (!x.shape.ranked || !grid.ranked || x.shape.rank() < 3 || grid.rank() != x.shape.rank()) {
    set_output(r, 0, x.dtype, x.shape.ranked ? unknown_dims(x.shape.rank()) : Shape::unranked());
    return;
  }
  std::vector<Dim> dims{x.shape.dims[0], x.shape.dims[1]};
  dims.insert(dims.end(), grid.dims.begin() + 1, grid.dims.end() - 1);
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
}

// AffineGrid(theta [N, 2, 3] or [N, 3, 4], size [N, C, H, W] or [N, C, D, H, W]) -> the sampling
// grid GridSample reads, [N, H, W, 2] or [N, D, H, W, 3]: its spatial extents are size's values.
void infer_affine_grid(const InferContext& ctx, InferResult& r) {
  const TensorType& theta = ctx.input(0);
  const auto size = ctx.input_ints(1);
  if (theta.shape.ranked && theta.shape.rank() != 3) {
    ctx.fail("theta is [N, 2, 3] or [N, 3, 4]; it has rank " + std::to_string(theta.shape.rank()));
  }
  if (size && size->size() != 4 && size->size() != 5) {
    ctx.fail("size holds " + std::to_string(size->size()) +
             " extents; it is [N, C, H, W] or [N, C, D, H, W]");
  }
  const Shape& size_shape = ctx.input(1).shape;
  const std::optional<int64_t> count =
      size ? std::optional<int64_t>(static_cast<int64_t>(size->size()))
      : size_shape.ranked && size_shape.rank() == 1 ? size_shape.dims[0].value()
                                                    : std::nullopt;
  if (!count) {
    set_output(r, 0, theta.dtype, Shape::unranked());
    return;
  }
  if (*count != 4 && *count != 5) ctx.fail("size is [N, C, H, W] or [N, C, D, H, W]");
  std::vector<Dim> dims{size ? Dim::known((*size)[0])
                             : (theta.shape.ranked ? theta.shape.dims[0] : Dim::unknown())};
  for (int64_t i = 2; i < *count; ++i) {
    if (size && (*size)[static_cast<size_t>(i)] <= 0) ctx.fail("size holds a non-positive extent");
    dims.push_back(size ? Dim::known((*size)[static_cast<size_t>(i)]) : Dim::unknown());
  }
  dims.push_back(Dim::known(*count - 2));
  set_output(r, 0, theta.dtype, ranked(std::move(dims)));
}

}  // namespace

void register_detection(OpRegistry& r) {
  r.add(op("NonMaxSuppression", 2, 5, infer_nms));
  r.add(op("RoiAlign", 3, 3, infer_roi_align));
  r.add(op("GridSample", 2, 2, infer_grid_sample));
  r.add(op("AffineGrid", 2, 2, infer_affine_grid));
}

}  // namespace footprint::graph::ops
