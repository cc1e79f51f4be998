// Resize and Upsample: output extents from `sizes` when given, else floor(extent * scale).
//
// Scales come from an attribute (Upsample-7), the second input (Resize-10, Upsample-9) or the
// third (Resize-11+, after roi); an empty tensor stands for "not given". A symbolic extent with
// an integer scale (or its reciprocal) stays an expression: N*2, floor(N/2).
#include <cmath>

#include "families.hpp"
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

// The extents for `x` from known scales (or sizes) over `axes` (all dims when empty).
void apply(const InferContext& ctx, const Shape& x, const KnownValue* scales,
           const KnownValue* sizes, std::vector<Dim>& dims) {
  std::vector<size_t> axes;
  if (auto a = ctx.attr_ints("axes")) {
    axes = normalize_axes(ctx, *a, x.rank());
  } else {
    for (size_t i = 0; i < x.rank(); ++i) axes.push_back(i);
  }
  const KnownValue* v = sizes != nullptr ? sizes : scales;
  if (v->numel() != axes.size()) {
    ctx.fail(std::string(sizes != nullptr ? "sizes" : "scales") + " has " +
             std::to_string(v->numel()) + " entries for " + std::to_string(axes.size()) + " axes");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (sizes != nullptr) {
      dims[axes[i]] = sizes->ints[i];
    } else if (const auto s = scales->real(i)) {
      dims[axes[i]] = scaled(x.dims[axes[i]], *s);
    } else {
      dims[axes[i]] = Dim::unknown();
    }
  }
}

void infer_resize(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const bool upsample_attr = ctx.node.op_type == "Upsample" && !ctx.has_input(1);
  const size_t scales_at = ctx.node.op_type == "Resize" && ctx.opset >= 11 ? 2 : 1;
  std::vector<Dim> dims(x.shape.rank());
  if (upsample_attr) {
    const auto s = ctx.attr_floats("scales");
    if (!s || s->size() != x.shape.rank()) {
      ctx.fail("attribute 'scales' must have one entry per dim");
    }
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = scaled(x.shape.dims[i], (*s)[i]);
  } else if (scales_at == 2 && given(ctx, 3)) {
    if (const KnownValue* sizes = ctx.value(3); sizes != nullptr && sizes->is_integer()) {
      dims = x.shape.dims;
      apply(ctx, x.shape, nullptr, sizes, dims);
    }
  } else if (given(ctx, scales_at)) {
    if (const KnownValue* scales = ctx.value(scales_at)) {
      dims = x.shape.dims;
      apply(ctx, x.shape, scales, nullptr, dims);
    }
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
}

}  // namespace

void register_resize(OpRegistry& r) {
  r.add(op("Resize", 1, 4, infer_resize));
  r.add(op("Upsample", 1, 2, infer_resize));
}

}  // namespace footprint::graph::ops
