// Resize and Upsample: output extents from `sizes` when given (under a kept aspect ratio, the
// input's extents times one common scale, rounded), else floor(extent * scale).
//
// Scales come from an attribute (Upsample-7), the second input (Resize-10, Upsample-9) or the
// third (Resize-11+, after roi); an empty tensor stands for "not given". A symbolic extent with
// an integer scale (or its reciprocal) stays an expression: N*2, floor(N/2).
#include <cmath>

#include "families.hpp"
#include "footprint/graph/ops/resize_inputs.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// Input i when it is present and not an empty tensor.
bool given(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return false;
  const Shape& s = ctx.input(i).shape;
  return !(s.ranked && s.rank() == 1 && s.dims[0].value() == 0);
}

Dim scaled(const Dim& extent, double scale) {
  if (const auto e = extent.value()) {
    // In float, as the reference implementation and ONNX's own inference compute it.
    return Dim::known(
        static_cast<int64_t>(std::floor(static_cast<float>(*e) * static_cast<float>(scale))));
  }
  if (scale >= 1 && scale == std::floor(scale)) {
    return extent * Dim::known(static_cast<int64_t>(scale));
  }
  const double inverse = 1.0 / scale;
  if (scale > 0 && inverse == std::floor(inverse)) {
    return floor_div(extent, Dim::known(static_cast<int64_t>(inverse)));
  }
  return Dim::unknown();
}

std::vector<size_t> resized_axes(const InferContext& ctx, const ResizeInputs& in, size_t rank) {
  if (!in.axes.empty()) return normalize_axes(ctx, in.axes, rank);
  std::vector<size_t> axes;
  for (size_t i = 0; i < rank; ++i) axes.push_back(i);
  return axes;
}

void check_count(const InferContext& ctx, const KnownValue& v, std::string_view what, size_t axes) {
  if (v.numel() != axes) {
    ctx.fail(std::string(what) + " has " + std::to_string(v.numel()) + " entries for " +
             std::to_string(axes) + " axes");
  }
}

// The extents for known sizes: the sizes themselves, or with a kept aspect ratio the input's
// extents under one common scale (the extents must be known to compute it).
void apply_sizes(const InferContext& ctx, const ResizeInputs& in, const Shape& x,
                 const KnownValue& sizes, std::vector<Dim>& dims) {
  const std::vector<size_t> axes = resized_axes(ctx, in, x.rank());
  check_count(ctx, sizes, "sizes", axes.size());
  if (in.policy == AspectRatioPolicy::stretch) {
    for (size_t i = 0; i < axes.size(); ++i) dims[axes[i]] = sizes.ints[i];
    return;
  }
  std::vector<int64_t> requested;
  std::vector<int64_t> extents;
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto s = sizes.ints[i].value();
    const auto e = x.dims[axes[i]].value();
    if (!s || !e) {
      for (size_t axis : axes) dims[axis] = Dim::unknown();
      return;
    }
    requested.push_back(*s);
    extents.push_back(*e);
  }
  const double scale = kept_aspect_scale(in.policy, requested, extents);
  for (size_t i = 0; i < axes.size(); ++i) {
    dims[axes[i]] = Dim::known(kept_aspect_extent(scale, extents[i]));
  }
}

void apply_scales(const InferContext& ctx, const ResizeInputs& in, const Shape& x,
                  const KnownValue& scales, std::vector<Dim>& dims) {
  const std::vector<size_t> axes = resized_axes(ctx, in, x.rank());
  check_count(ctx, scales, "scales", axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto s = scales.real(i);
    dims[axes[i]] = s ? scaled(x.dims[axes[i]], *s) : Dim::unknown();
  }
}

template <ResizeOp kOp>
void infer_resize(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const ResizeInputs in = ResizeInputs::decode(ctx.node, ctx.node_id, ctx.opset, kOp);
  std::vector<Dim> dims(x.shape.rank());
  if (in.scales_attribute) {
    const std::vector<float>& s = in.attribute_scales;
    if (s.size() != x.shape.rank()) ctx.fail("attribute 'scales' must have one entry per dim");
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = scaled(x.shape.dims[i], s[i]);
  } else if (in.sizes_input >= 0 && given(ctx, static_cast<size_t>(in.sizes_input))) {
    const KnownValue* sizes = ctx.value(static_cast<size_t>(in.sizes_input));
    if (sizes != nullptr && sizes->is_integer()) {
      dims = x.shape.dims;
      apply_sizes(ctx, in, x.shape, *sizes, dims);
    }
  } else if (given(ctx, static_cast<size_t>(in.scales_input))) {
    if (const KnownValue* scales = ctx.value(static_cast<size_t>(in.scales_input))) {
      dims = x.shape.dims;
      apply_scales(ctx, in, x.shape, *scales, dims);
    }
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
}

}  // namespace

void register_resize(OpRegistry& r) {
  r.add(op("Resize", 1, 4, infer_resize<ResizeOp::resize>));
  r.add(op("Upsample", 1, 2, infer_resize<ResizeOp::upsample>));
}

}  // namespace footprint::graph::ops
