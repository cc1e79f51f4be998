// Sliding-window ops: Conv (its integer forms are rows of integer_products.cpp), ConvTranspose, the
// pools, LRN, MaxUnpool, Col2Im.
//
// Spatial extents follow the ONNX formulas with auto_pad (SAME_UPPER / SAME_LOWER: ceil(in /
// stride); VALID: no padding; NOTSET: explicit pads), dilations, strides and ceil_mode. A symbolic
// extent gives the formula itself, e.g. floor((H-1)/2)+1 for k=3, pad 1+1, stride 2.
#include <algorithm>
#include <optional>
#include <string>

#include "families.hpp"
#include "footprint/graph/elementwise_program.hpp"
#include "footprint/graph/ops/conv_window.hpp"
#include "footprint/graph/ops/qlinear_operands.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// A window's kernel extents as dims: kernel_shape, else (convolutions) the weights' trailing
// dims, else unknown.
std::vector<Dim> kernel_dims(const ConvWindow& w, const Shape* weights) {
  if (!w.kernel_shape.empty()) {
    std::vector<Dim> k;
    for (int64_t e : w.kernel_shape) k.push_back(Dim::known(e));
    return k;
  }
  if (weights != nullptr && weights->ranked && weights->rank() == w.spatial + 2) {
    return {weights->dims.begin() + 2, weights->dims.end()};
  }
  return std::vector<Dim>(w.spatial, Dim::unknown());
}

ConvWindow conv_window(const InferContext& ctx, size_t spatial) {
  return ConvWindow::decode(ctx.node, ctx.node_id, spatial);
}

// Output extent of spatial dim i for an input extent `in`.
Dim windowed_extent(const ConvWindow& w, const std::vector<Dim>& kernel, bool ceil_mode, size_t i,
                    const Dim& in) {
  const Dim stride = Dim::known(w.strides[i]);
  if (w.same()) return ceil_div(in, stride);
  const bool valid = w.auto_pad == AutoPad::valid;
  const Dim begin = Dim::known(valid ? 0 : w.pads[i]);
  const Dim end = Dim::known(valid ? 0 : w.pads[i + w.spatial]);
  const Dim effective = (kernel[i] - Dim::known(1)) * Dim::known(w.dilations[i]) + Dim::known(1);
  const Dim span = in + begin + end - effective;
  if (!ceil_mode) return floor_div(span, stride) + Dim::known(1);
  // ceil_mode: a last window that would start in the end padding is dropped.
  return min(ceil_div(span, stride) + Dim::known(1), ceil_div(in + begin, stride));
}

std::vector<Dim> spatial_out(const ConvWindow& w, const std::vector<Dim>& kernel, bool ceil_mode,
                             const Shape& x) {
  std::vector<Dim> out;
  for (size_t i = 0; i < w.spatial; ++i) {
    out.push_back(windowed_extent(w, kernel, ceil_mode, i, x.dims[i + 2]));
  }
  return out;
}

}  // namespace

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
  const ConvWindow w = conv_window(ctx, n);
  std::vector<Dim> dims{x.dims[0], wt.ranked && wt.rank() > 0 ? wt.dims[0] : Dim::unknown()};
  for (Dim& d : spatial_out(w, kernel_dims(w, &wt), false, x)) dims.push_back(std::move(d));
  set_output(r, 0, dtype, ranked(std::move(dims)));
}

namespace {

void infer_conv(const InferContext& ctx, InferResult& r) {
  conv_shape(ctx, r, 0, 1, ctx.input(0).dtype);
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
  const ConvWindow w = conv_window(ctx, n);
  const std::vector<Dim> kernel = kernel_dims(w, &wt);
  std::vector<Dim> dims{
      x.dims[0], wt.ranked && wt.rank() > 1 ? wt.dims[1] * Dim::known(w.group) : Dim::unknown()};
  const auto& output_shape = w.output_shape;
  for (size_t i = 0; i < n; ++i) {
    if (output_shape && output_shape->size() >= n) {
      dims.push_back(Dim::known((*output_shape)[output_shape->size() - n + i]));
      continue;
    }
    const Dim stride = Dim::known(w.strides[i]);
    if (w.same()) {
      dims.push_back(x.dims[i + 2] * stride);
      continue;
    }
    const bool valid = w.auto_pad == AutoPad::valid;
    const Dim pads = Dim::known(valid ? 0 : w.pads[i] + w.pads[i + n]);
    const Dim effective = (kernel[i] - Dim::known(1)) * Dim::known(w.dilations[i]) + Dim::known(1);
    dims.push_back(stride * (x.dims[i + 2] - Dim::known(1)) + Dim::known(w.output_padding[i]) +
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
    const PoolWindow p = PoolWindow::decode(ctx.node, ctx.node_id, x.rank() - 2);
    std::vector<Dim> dims{x.dims[0], x.dims[1]};
    for (Dim& d : spatial_out(p.window, kernel_dims(p.window, nullptr), p.ceil_mode, x)) {
      dims.push_back(std::move(d));
    }
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

// onnxruntime's QLinearAveragePool and QLinearGlobalAveragePool (X, x_scale, x_zero_point,
// y_scale, y_zero_point): the pool's shapes over X, in X's dtype; channels_last=1 reads and writes
// [N, H, W, C]. The operands as graph/ops/qlinear_operands.hpp reads them.
template <InferFn pool, QLinearOp kOp>
void infer_qlinear_pool(const InferContext& ctx, InferResult& r) {
  check_qlinear_operands(ctx, kOp);
  const InferContext x = with_inputs(ctx, {0});
  if (ctx.attr_int("channels_last", 0) != 0) {
    infer_channels_last(x, r, pool, 1);
  } else {
    pool(x, r);
  }
}

void infer_same_shape(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

// footprint::SqueezeExcite (graph::fuse): x [N, C, H, W] scaled per image and channel by
// gate(W2 activation(W1 mean(x) + B1) + B2), W1 [R, C, 1, 1] and W2 [C, R, 1, 1] (the two 1x1
// convolutions of a squeeze-and-excitation block), B1 [R] and B2 [C] optional.
void infer_squeeze_excite(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const Shape& w1 = ctx.input(1).shape;
  const Shape& w2 = ctx.input(3).shape;
  const bool real =
      x.dtype == DType::float32 || x.dtype == DType::float16 || x.dtype == DType::bfloat16;
  if (!x.shape.ranked || x.shape.rank() != 4 || !real) {
    ctx.fail("X must be float32, float16 or bfloat16 of rank 4, not " +
             std::string(dtype_name(x.dtype)) + x.shape.to_string());
  }
  for (const size_t i : {size_t{1}, size_t{2}, size_t{3}, size_t{4}}) {
    if (ctx.has_input(i) && ctx.input(i).dtype != x.dtype) {
      ctx.fail("W1, B1, W2 and B2 must have X's dtype " + std::string(dtype_name(x.dtype)));
    }
  }
  const auto one_by_one = [](const Shape& w) {
    return w.ranked && w.rank() == 4 && w.dims[2] == Dim::known(1) && w.dims[3] == Dim::known(1);
  };
  if (!one_by_one(w1) || !one_by_one(w2) || w1.dims[1] != x.shape.dims[1] ||
      w2.dims[0] != x.shape.dims[1] || w2.dims[1] != w1.dims[0]) {
    ctx.fail("W1 must be [R, C, 1, 1] and W2 [C, R, 1, 1] for X's C channels, not " +
             w1.to_string() + " and " + w2.to_string());
  }
  if (!ctx.attr_string("activation", "").empty() &&
      !chain_unary_op(ctx.attr_string("activation", ""))) {
    ctx.fail("attribute 'activation' names no activation an epilogue has");
  }
  if (!chain_unary_op(ctx.attr_string("gate", ""))) {
    ctx.fail("attribute 'gate' names no activation an epilogue has");
  }
  set_output(r, 0, x.dtype, x.shape);
}

// Col2Im (opset 18): columns [N, C x prod(block_shape), L] of an image's sliding blocks summed
// back into the image [N, C, image_shape...]; image_shape and block_shape are inputs whose
// values give the output's extents (unknown where they are not known before running).
void infer_col2im(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const auto image = ctx.input_ints(1);
  const auto block = ctx.input_ints(2);
  if (x.shape.ranked && x.shape.rank() != 3) {
    ctx.fail("the input is [N, C x prod(block_shape), L]; it has rank " +
             std::to_string(x.shape.rank()));
  }
  if (image && block && image->size() != block->size()) {
    ctx.fail("image_shape and block_shape have " + std::to_string(image->size()) + " and " +
             std::to_string(block->size()) + " elements; they take one per spatial axis");
  }
  for (const auto* v : {&image, &block}) {
    if (*v && (v->value().empty() || std::any_of(v->value().begin(), v->value().end(),
                                                 [](int64_t e) { return e <= 0; }))) {
      ctx.fail("image_shape and block_shape hold one positive extent per spatial axis");
    }
  }
  const Shape& image_shape = ctx.input(1).shape;
  const std::optional<int64_t> spatial =
      image ? std::optional<int64_t>(static_cast<int64_t>(image->size()))
      : image_shape.ranked && image_shape.rank() == 1 ? image_shape.dims[0].value()
                                                      : std::nullopt;
  if (!x.shape.ranked || !spatial) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  std::vector<Dim> dims{x.shape.dims[0], Dim::unknown()};
  if (block) {
    int64_t k = 1;
    for (const int64_t e : *block) k *= e;
    if (const auto c = x.shape.dims[1].value()) {
      if (*c % k != 0) {
        ctx.fail("the input's " + std::to_string(*c) + " rows are not whole channels of " +
                 std::to_string(k) + " block elements");
      }
      dims[1] = Dim::known(*c / k);
    }
  }
  for (int64_t i = 0; i < *spatial; ++i) {
    dims.push_back(image ? Dim::known((*image)[static_cast<size_t>(i)]) : Dim::unknown());
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
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
  const ConvWindow w = conv_window(ctx, n);
  const std::vector<Dim> kernel = kernel_dims(w, nullptr);
  std::vector<Dim> dims{x.dims[0], x.dims[1]};
  for (size_t i = 0; i < n; ++i) {
    dims.push_back((x.dims[i + 2] - Dim::known(1)) * Dim::known(w.strides[i]) + kernel[i] -
                   Dim::known(w.pads[i] + w.pads[i + n]));
  }
  set_output(r, 0, xt.dtype, ranked(std::move(dims)));
}

// The op's inference on channels-last tensors (graph::to_channels_last): input 0 seen as NCHW,
// the outputs made channels-last again; the node's attributes mean what they mean for the op.

template <InferFn kInfer>
void on_channels_last(const InferContext& ctx, InferResult& r) {
  infer_channels_last(ctx, r, kInfer, 1);
}

OpSchema channels_last_row(OpSchema s) {
  s.domain = "footprint";
  return s;
}

}  // namespace

void register_conv_pool(OpRegistry& r) {
  r.add(op("Conv", 2, 3, infer_conv));
  r.add(op("ConvTranspose", 2, 3, infer_conv_transpose));
  r.add(op("MaxPool", 1, 1, infer_pool, 1, 2));
  r.add(op("AveragePool", 1, 1, infer_pool));
  r.add(op("LpPool", 1, 1, infer_pool));
  r.add(op("GlobalAveragePool", 1, 1, infer_global_pool));
  r.add(op("GlobalMaxPool", 1, 1, infer_global_pool));
  r.add(op("GlobalLpPool", 1, 1, infer_global_pool));
  r.add(contrib(
      op("QLinearAveragePool", 4, 5, infer_qlinear_pool<infer_pool, QLinearOp::average_pool>)));
  r.add(contrib(op("QLinearGlobalAveragePool", 4, 5,
                   infer_qlinear_pool<infer_global_pool, QLinearOp::global_average_pool>)));
  r.add(op("LRN", 1, 1, infer_same_shape));
  r.add(op("MaxUnpool", 2, 3, infer_max_unpool));
  r.add(op("Col2Im", 3, 3, infer_col2im));
  OpSchema se = op("SqueezeExcite", 4, 5, infer_squeeze_excite);
  se.domain = "footprint";
  r.add(se);
  // The same work on channels-last tensors [N, H, W, C] (graph::to_channels_last).
  r.add(channels_last_row(op("NhwcConv", 2, 3, on_channels_last<infer_conv>)));
  r.add(channels_last_row(op("NhwcMaxPool", 1, 1, on_channels_last<infer_pool>)));
  r.add(channels_last_row(op("NhwcAveragePool", 1, 1, on_channels_last<infer_pool>)));
  r.add(channels_last_row(op("NhwcGlobalAveragePool", 1, 1, on_channels_last<infer_global_pool>)));
  r.add(channels_last_row(op("NhwcSqueezeExcite", 4, 5, on_channels_last<infer_squeeze_excite>)));
  r.add(channels_last_row(
      op("NhwcQLinearAveragePool", 4, 5,
         on_channels_last<infer_qlinear_pool<infer_pool, QLinearOp::average_pool>>)));
  r.add(channels_last_row(
      op("NhwcQLinearGlobalAveragePool", 4, 5,
         on_channels_last<infer_qlinear_pool<infer_global_pool, QLinearOp::global_average_pool>>)));
}

}  // namespace footprint::graph::ops
