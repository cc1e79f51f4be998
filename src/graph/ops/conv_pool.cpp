// Sliding-window ops: Conv and its quantized forms, ConvTranspose, the pools, LRN, MaxUnpool.
//
// Spatial extents follow the ONNX formulas with auto_pad (SAME_UPPER / SAME_LOWER: ceil(in /
// stride); VALID: no padding; NOTSET: explicit pads), dilations, strides and ceil_mode. A symbolic
// extent gives the formula itself, e.g. floor((H-1)/2)+1 for k=3, pad 1+1, stride 2.
#include <string>

#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

struct Window {
  std::vector<Dim> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // begins then ends
  std::string_view auto_pad = "NOTSET";
  bool ceil_mode = false;
};

// Attribute `name` with one entry per spatial dim, or `fallback` repeated.
std::vector<int64_t> per_axis(const InferContext& ctx, std::string_view name, size_t n,
                              int64_t fallback) {
  auto v = ctx.attr_ints(name);
  if (!v || v->empty()) return std::vector<int64_t>(n, fallback);
  if (v->size() != n) {
    ctx.fail("attribute '" + std::string(name) + "' has " + std::to_string(v->size()) +
             " entries for " + std::to_string(n) + " spatial dims");
  }
  return *v;
}

// The window of a node whose spatial kernel has `n` dims; `kernel` comes from kernel_shape or,
// for convolutions without it, from the weights' trailing dims.
Window read_window(const InferContext& ctx, size_t n, const Shape* weights) {
  Window w;
  if (auto k = ctx.attr_ints("kernel_shape")) {
    if (k->size() != n) ctx.fail("kernel_shape does not match the input's spatial rank");
    for (int64_t e : *k) w.kernel.push_back(Dim::known(e));
  } else if (weights != nullptr && weights->ranked && weights->rank() == n + 2) {
    w.kernel.assign(weights->dims.begin() + 2, weights->dims.end());
  } else {
    w.kernel.assign(n, Dim::unknown());
  }
  w.strides = per_axis(ctx, "strides", n, 1);
  w.dilations = per_axis(ctx, "dilations", n, 1);
  w.pads = per_axis(ctx, "pads", 2 * n, 0);
  w.auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  w.ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  for (int64_t s : w.strides) {
    if (s <= 0) ctx.fail("strides must be positive");
  }
  return w;
}

bool same_padding(std::string_view auto_pad) {
  return auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
}

// Output extent of spatial dim i for an input extent `in`.
Dim windowed_extent(const Window& w, size_t i, const Dim& in) {
  const Dim stride = Dim::known(w.strides[i]);
  if (same_padding(w.auto_pad)) return ceil_div(in, stride);
  const bool valid = w.auto_pad == "VALID";
  const Dim begin = Dim::known(valid ? 0 : w.pads[i]);
  const Dim end = Dim::known(valid ? 0 : w.pads[i + w.strides.size()]);
  const Dim effective = (w.kernel[i] - Dim::known(1)) * Dim::known(w.dilations[i]) + Dim::known(1);
  const Dim span = in + begin + end - effective;
  if (!w.ceil_mode) return floor_div(span, stride) + Dim::known(1);
  // ceil_mode: a last window that would start in the end padding is dropped.
  return min(ceil_div(span, stride) + Dim::known(1), ceil_div(in + begin, stride));
}

std::vector<Dim> spatial_out(const Window& w, const Shape& x) {
  std::vector<Dim> out;
  for (size_t i = 0; i < w.strides.size(); ++i) out.push_back(windowed_extent(w, i, x.dims[i + 2]));
  return out;
}

// Conv-like: [N, C, D...] x weights [M, C/group, k...] -> [N, M, out...].
void conv_shape(const InferContext& ctx, InferResult& r, size_t x_index, size_t w_index,
                DType dtype) {
  const Shape& x = ctx.input(x_index).shape;
  const Shape& wt = ctx.input(w_index).shape;
  if (!x.ranked) {
    set_output(r, 0, dtype, wt.ranked ? unknown_dims(wt.rank()) : Shape::unranked());
    return;
  }
  if (x.rank() < 3) ctx.fail("the input must have rank 3 or more, has " + x.to_string());
  const size_t n = x.rank() - 2;
  const Window w = read_window(ctx, n, &wt);
  std::vector<Dim> dims{x.dims[0], wt.ranked && wt.rank() > 0 ? wt.dims[0] : Dim::unknown()};
  for (Dim& d : spatial_out(w, x)) dims.push_back(std::move(d));
  set_output(r, 0, dtype, ranked(std::move(dims)));
}

void infer_conv(const InferContext& ctx, InferResult& r) {
  conv_shape(ctx, r, 0, 1, ctx.input(0).dtype);
}

void infer_conv_integer(const InferContext& ctx, InferResult& r) {
  conv_shape(ctx, r, 0, 1, DType::int32);
}

void infer_qlinear_conv(const InferContext& ctx, InferResult& r) {
  conv_shape(ctx, r, 0, 3, ctx.has_input(7) ? ctx.input(7).dtype : ctx.input(0).dtype);
}

void infer_conv_transpose(const InferContext& ctx, InferResult& r) {
  const TensorType& xt = ctx.input(0);
  const Shape& x = xt.shape;
  const Shape& wt = ctx.input(1).shape;
  if (!x.ranked) {
    set_output(r, 0, xt.dtype, Shape::unranked());
    return;
  }
  if (x.rank() < 3) ctx.fail("the input must have rank 3 or more, has " + x.to_string());
  const size_t n = x.rank() - 2;
  const Window w = read_window(ctx, n, &wt);
  const int64_t group = ctx.attr_int("group", 1);
  std::vector<Dim> dims{
      x.dims[0], wt.ranked && wt.rank() > 1 ? wt.dims[1] * Dim::known(group) : Dim::unknown()};
  const auto output_shape = ctx.attr_ints("output_shape");
  const std::vector<int64_t> output_padding = per_axis(ctx, "output_padding", n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (output_shape && output_shape->size() >= n) {
      dims.push_back(Dim::known((*output_shape)[output_shape->size() - n + i]));
      continue;
    }
    const Dim stride = Dim::known(w.strides[i]);
    if (same_padding(w.auto_pad)) {
      dims.push_back(x.dims[i + 2] * stride);
      continue;
    }
    const bool valid = w.auto_pad == "VALID";
    const Dim pads = Dim::known(valid ? 0 : w.pads[i] + w.pads[i + n]);
    const Dim effective =
        (w.kernel[i] - Dim::known(1)) * Dim::known(w.dilations[i]) + Dim::known(1);
    dims.push_back(stride * (x.dims[i + 2] - Dim::known(1)) + Dim::known(output_padding[i]) +
                   effective - pads);
  }
  set_output(r, 0, xt.dtype, ranked(std::move(dims)));
}

// MaxPool, AveragePool, LpPool: [N, C, D...] -> [N, C, out...]; MaxPool's indices are int64.
void infer_pool(const InferContext& ctx, InferResult& r) {
  const TensorType& xt = ctx.input(0);
  const Shape& x = xt.shape;
  Shape out = Shape::unranked();
  if (x.ranked) {
    if (x.rank() < 3) ctx.fail("the input must have rank 3 or more, has " + x.to_string());
    if (!ctx.attr_ints("kernel_shape")) ctx.fail("attribute 'kernel_shape' is required");
    const Window w = read_window(ctx, x.rank() - 2, nullptr);
    std::vector<Dim> dims{x.dims[0], x.dims[1]};
    for (Dim& d : spatial_out(w, x)) dims.push_back(std::move(d));
    out = ranked(std::move(dims));
  }
  set_output(r, 0, xt.dtype, out);
  set_output(r, 1, DType::int64, out);
}

// GlobalAveragePool and friends: every spatial extent becomes 1.
void infer_global_pool(const InferContext& ctx, InferResult& r) {
  const TensorType& xt = ctx.input(0);
  Shape out = xt.shape;
  for (size_t i = 2; i < out.rank(); ++i) out.dims[i] = Dim::known(1);
  set_output(r, 0, xt.dtype, out);
}

void infer_same_shape(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

// MaxUnpool: the output_shape input when known, else the pooling formula inverted.
void infer_max_unpool(const InferContext& ctx, InferResult& r) {
  const TensorType& xt = ctx.input(0);
  const Shape& x = xt.shape;
  if (ctx.has_input(2)) {
    const auto dims = dims_from_value(ctx.value(2));
    const Shape& s = ctx.input(2).shape;
    Shape out = dims ? ranked(*dims)
                : s.ranked && s.rank() == 1 && s.dims[0].value()
                    ? unknown_dims(static_cast<size_t>(*s.dims[0].value()))
                    : Shape::unranked();
    set_output(r, 0, xt.dtype, out);
    return;
  }
  if (!x.ranked) {
    set_output(r, 0, xt.dtype, Shape::unranked());
    return;
  }
  const size_t n = x.rank() - 2;
  const Window w = read_window(ctx, n, nullptr);
  std::vector<Dim> dims{x.dims[0], x.dims[1]};
  for (size_t i = 0; i < n; ++i) {
    dims.push_back((x.dims[i + 2] - Dim::known(1)) * Dim::known(w.strides[i]) + w.kernel[i] -
                   Dim::known(w.pads[i] + w.pads[i + n]));
  }
  set_output(r, 0, xt.dtype, ranked(std::move(dims)));
}

}  // namespace

void register_conv_pool(OpRegistry& r) {
  r.add(op("Conv", 2, 3, infer_conv));
  r.add(op("ConvTranspose", 2, 3, infer_conv_transpose));
  r.add(op("ConvInteger", 2, 4, infer_conv_integer));
  r.add(op("QLinearConv", 8, 9, infer_qlinear_conv));
  r.add(op("MaxPool", 1, 1, infer_pool, 1, 2));
  r.add(op("AveragePool", 1, 1, infer_pool));
  r.add(op("LpPool", 1, 1, infer_pool));
  r.add(op("GlobalAveragePool", 1, 1, infer_global_pool));
  r.add(op("GlobalMaxPool", 1, 1, infer_global_pool));
  r.add(op("GlobalLpPool", 1, 1, infer_global_pool));
  r.add(op("LRN", 1, 1, infer_same_shape));
  r.add(op("MaxUnpool", 2, 3, infer_max_unpool));
}

}  // namespace footprint::graph::ops
