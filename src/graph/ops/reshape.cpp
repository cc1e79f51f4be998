// Ops that rearrange a tensor without computing: Reshape (0 and -1, allowzero), Flatten,
// Squeeze / Unsqueeze (axes as attribute or, from opset 13, input), Transpose, Expand, Tile,
// DepthToSpace / SpaceToDepth, Identity, Trilu. Known values are rearranged along.
#include <numeric>

#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// The same elements under a new (static) shape, when the output is static.
void keep_elements(const InferContext& ctx, InferResult& r) {
  const KnownValue* v = ctx.value(0);
  if (v == nullptr || r.outputs.empty() || !r.outputs[0].shape.is_static()) return;
  std::vector<int64_t> dims;
  for (const Dim& d : r.outputs[0].shape.dims) dims.push_back(*d.value());
  if (checked_numel(dims.data(), dims.size()) != v->numel()) return;
  KnownValue out = *v;
  out.dims = std::move(dims);
  set_value(r, 0, std::move(out));
}

Dim product(const std::vector<Dim>& dims, size_t begin, size_t end) {
  Dim p = Dim::known(1);
  for (size_t i = begin; i < end; ++i) p = p * dims[i];
  return p;
}

// The target extents of Reshape: from the shape input (opset 5+) or attribute (before).
std::optional<std::vector<Dim>> reshape_target(const InferContext& ctx, size_t& rank_only) {
  rank_only = 0;
  if (!ctx.has_input(1)) {
    auto attr = ctx.attr_ints("shape");
    if (!attr) return std::nullopt;
    std::vector<Dim> dims;
    for (int64_t e : *attr) dims.push_back(Dim::known(e));
    return dims;
  }
  if (auto dims = dims_from_value(ctx.value(1))) return dims;
  const Shape& s = ctx.input(1).shape;
  if (s.ranked && s.rank() == 1 && s.dims[0].value()) {
    rank_only = static_cast<size_t>(*s.dims[0].value());
  }
  return std::nullopt;
}

void infer_reshape(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  size_t rank_only = 0;
  auto target = reshape_target(ctx, rank_only);
  if (!target) {
    set_output(r, 0, x.dtype, rank_only > 0 ? unknown_dims(rank_only) : Shape::unranked());
    return;
  }
  const bool allow_zero = ctx.attr_int("allowzero", 0) != 0;
  std::vector<Dim> dims = *target;
  size_t inferred = dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto v = dims[i].value();
    if (v == 0 && !allow_zero) {
      if (!x.shape.ranked) {
        dims[i] = Dim::unknown();
      } else if (i >= x.shape.rank()) {
        ctx.fail("shape entry " + std::to_string(i) + " is 0 but the input has rank " +
                 std::to_string(x.shape.rank()));
      } else {
        dims[i] = x.shape.dims[i];
      }
    } else if (v == -1) {
      if (inferred != dims.size()) ctx.fail("the shape has more than one -1");
      inferred = i;
    } else if (v && *v < -1) {
      ctx.fail("shape entry " + std::to_string(*v) + " is negative");
    }
  }
  const Dim total = x.shape.numel_expr();
  if (inferred != dims.size()) {
    Dim rest = Dim::known(1);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i != inferred) rest = rest * dims[i];
    }
    const auto t = total.value();
    const auto p = rest.value();
    if (t && p && (*p == 0 || *t % *p != 0)) {
      ctx.fail("cannot reshape " + x.shape.to_string() + " (" + std::to_string(*t) +
               " elements) with -1 into a multiple of " + std::to_string(*p));
    }
    dims[inferred] = exact_div(total, rest);
  } else if (const auto t = total.value()) {
    const auto p = product(dims, 0, dims.size()).value();
    if (p && *p != *t) {
      ctx.fail("cannot reshape " + x.shape.to_string() + " into " + ranked(dims).to_string());
    }
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
  keep_elements(ctx, r);
}

void infer_flatten(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, unknown_dims(2));
    return;
  }
  const size_t rank = x.shape.rank();
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis > static_cast<int64_t>(rank)) ctx.fail("axis is out of range");
  const auto a = static_cast<size_t>(axis);
  set_output(r, 0, x.dtype, ranked({product(x.shape.dims, 0, a), product(x.shape.dims, a, rank)}));
  keep_elements(ctx, r);
}

// Squeeze / Unsqueeze axes: the attribute before opset 13, the optional input from 13.
std::optional<std::vector<int64_t>> squeeze_axes(const InferContext& ctx, bool& known) {
  known = true;
  if (ctx.opset >= 13 || ctx.has_input(1)) {
    if (!ctx.has_input(1)) return std::nullopt;
    auto axes = ctx.input_ints(1);
    known = axes.has_value();
    return axes;
  }
  return ctx.attr_ints("axes");
}

// The length of a 1-D axes input whose values are not known.
std::optional<size_t> axes_count(const InferContext& ctx) {
  if (!ctx.has_input(1)) return std::nullopt;
  const Shape& s = ctx.input(1).shape;
  if (!s.ranked || s.rank() != 1 || !s.dims[0].value()) return std::nullopt;
  return static_cast<size_t>(*s.dims[0].value());
}

void infer_squeeze(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  bool known = true;
  const auto axes = squeeze_axes(ctx, known);
  if (!x.shape.ranked || !known) {
    // Axes known only by their count: the rank, not which extents remain.
    const auto count = axes_count(ctx);
    set_output(r, 0, x.dtype,
               x.shape.ranked && count && *count <= x.shape.rank()
                   ? unknown_dims(x.shape.rank() - *count)
                   : Shape::unranked());
    return;
  }
  const size_t rank = x.shape.rank();
  std::vector<bool> drop(rank, false);
  if (axes && !axes->empty()) {
    for (size_t a : normalize_axes(ctx, *axes, rank)) {
      const auto v = x.shape.dims[a].value();
      if (v && *v != 1) {
        ctx.fail("cannot squeeze axis " + std::to_string(a) + " of extent " + std::to_string(*v));
      }
      drop[a] = true;
    }
  } else {
    // Without axes every extent of 1 goes; a symbolic extent is assumed not to be 1.
    for (size_t a = 0; a < rank; ++a) drop[a] = x.shape.dims[a].value() == 1;
  }
  std::vector<Dim> dims;
  for (size_t a = 0; a < rank; ++a) {
    if (!drop[a]) dims.push_back(x.shape.dims[a]);
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
  keep_elements(ctx, r);
}

void infer_unsqueeze(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  bool known = true;
  const auto axes = squeeze_axes(ctx, known);
  if (!x.shape.ranked || !known || !axes) {
    const auto count = axes_count(ctx);
    set_output(r, 0, x.dtype,
               x.shape.ranked && count ? unknown_dims(x.shape.rank() + *count) : Shape::unranked());
    return;
  }
  const size_t rank = x.shape.rank() + axes->size();
  std::vector<bool> added(rank, false);
  for (size_t a : normalize_axes(ctx, *axes, rank)) {
    if (added[a]) ctx.fail("axis " + std::to_string(a) + " is repeated");
    added[a] = true;
  }
  std::vector<Dim> dims;
  size_t next = 0;
  for (size_t a = 0; a < rank; ++a) dims.push_back(added[a] ? Dim::known(1) : x.shape.dims[next++]);
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
  keep_elements(ctx, r);
}

void infer_identity(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
  if (const KnownValue* v = ctx.value(0)) set_value(r, 0, *v);
}

void infer_transpose(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const size_t rank = x.shape.rank();
  std::vector<size_t> perm(rank);
  if (auto p = ctx.attr_ints("perm"); p && !p->empty()) {
    if (p->size() != rank) {
      ctx.fail("perm has " + std::to_string(p->size()) + " entries for rank " +
               std::to_string(rank));
    }
    perm = normalize_axes(ctx, *p, rank);
  } else {
    for (size_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  }
  std::vector<Dim> dims;
  dims.reserve(perm.size());
  for (size_t i : perm) dims.push_back(x.shape.dims[i]);
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
  if (const KnownValue* v = ctx.value(0)) {
    std::vector<int64_t> out_dims;
    out_dims.reserve(perm.size());
    for (size_t i : perm) out_dims.push_back(v->dims[i]);
    const std::vector<int64_t> in_strides = strides_of(v->dims);
    const std::vector<int64_t> out_strides = strides_of(out_dims);
    std::vector<int64_t> flat(v->numel());
    for (size_t n = 0; n < flat.size(); ++n) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) {
        src += (static_cast<int64_t>(n) / out_strides[d]) % out_dims[d] * in_strides[perm[d]];
      }
      flat[n] = src;
    }
    set_value(r, 0, pick(*v, out_dims, flat));
  }
}

void infer_expand(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  // The target's extents, or as many unknown ones as the shape input's length says.
  const auto target = dims_from_value(ctx.value(1));
  const Shape& s = ctx.input(1).shape;
  if (!target && !(s.ranked && s.rank() == 1 && s.dims[0].value())) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const Shape t = target ? ranked(*target) : unknown_dims(static_cast<size_t>(*s.dims[0].value()));
  set_output(r, 0, x.dtype, broadcast(ctx, {&x.shape, &t}));
  const KnownValue* v = ctx.value(0);
  if (v == nullptr || !r.outputs[0].shape.is_static()) return;
  std::vector<int64_t> dims;
  for (const Dim& d : r.outputs[0].shape.dims) dims.push_back(*d.value());
  if (const auto flat = broadcast_indices(dims, v->dims)) set_value(r, 0, pick(*v, dims, *flat));
}

void infer_tile(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const auto repeats = dims_from_value(ctx.value(1));
  if (!repeats) {
    set_output(r, 0, x.dtype, unknown_dims(x.shape.rank()));
    return;
  }
  if (repeats->size() != x.shape.rank()) ctx.fail("repeats does not match the input's rank");
  std::vector<Dim> dims;
  for (size_t i = 0; i < repeats->size(); ++i) dims.push_back(x.shape.dims[i] * (*repeats)[i]);
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
}

// DepthToSpace / SpaceToDepth move blocksize x blocksize between channels and space; the row
// says which way.
template <bool kToSpace>
void infer_depth_space(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, unknown_dims(4));
    return;
  }
  if (x.shape.rank() != 4) ctx.fail("the input must have rank 4, has " + x.shape.to_string());
  const Dim b = Dim::known(ctx.attr_int("blocksize", 0));
  const Dim bb = b * b;
  const auto& d = x.shape.dims;
  set_output(r, 0, x.dtype,
             kToSpace ? ranked({d[0], exact_div(d[1], bb), d[2] * b, d[3] * b})
                      : ranked({d[0], d[1] * bb, exact_div(d[2], b), exact_div(d[3], b)}));
}

void infer_same(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

// Reshape's second input is its output's extents (opset 5+).
OpSchema shaped_by_input(OpSchema s) {
  s.output_shape_input = 1;
  return s;
}

// graph::to_channels_last's layout changes: [N, C, H, W] to [N, H, W, C] and back.
template <bool kToChannelsLast>
void infer_channels_layout(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked || x.shape.rank() != 4) {
    ctx.fail("reads a tensor of rank 4, not " + x.shape.to_string());
  }
  set_output(r, 0, x.dtype, kToChannelsLast ? channels_last(x.shape) : channels_first(x.shape));
}

}  // namespace

void register_reshape(OpRegistry& r) {
  r.add(shaped_by_input(view("Reshape", 1, 2, infer_reshape)));
  r.add(view("Flatten", 1, 1, infer_flatten));
  r.add(view("Squeeze", 1, 2, infer_squeeze));
  r.add(view("Unsqueeze", 1, 2, infer_unsqueeze));
  r.add(view("Identity", 1, 1, infer_identity));
  r.add(op("Transpose", 1, 1, infer_transpose));
  r.add(op("Expand", 2, 2, infer_expand));
  r.add(op("Tile", 2, 2, infer_tile));
  r.add(op("DepthToSpace", 1, 1, infer_depth_space<true>));
  r.add(op("SpaceToDepth", 1, 1, infer_depth_space<false>));
  r.add(op("Trilu", 1, 2, infer_same));
  // Transpose(perm 0, 3, 1, 2) of a plain [N, H, W, C] tensor (ConvNeXt's permute back), kept
  // channels-last (graph::to_channels_last): the same bytes, a view.
  OpSchema nhwc_transpose = view("NhwcTranspose", 1, 1, infer_same);
  nhwc_transpose.domain = "footprint";
  r.add(nhwc_transpose);
  // ShuffleNet's channel shuffle (graph::fuse): [N, C, H, W], channel i * group + j from
  // channel j * C / group + i; the channels-last row the same on [N, H, W, C].
  for (OpSchema s :
       {op("ToChannelsLast", 1, 1, infer_channels_layout<true>),
        op("FromChannelsLast", 1, 1, infer_channels_layout<false>),
        op("ChannelShuffle", 1, 1, infer_same), op("NhwcChannelShuffle", 1, 1, infer_same)}) {
    s.domain = "footprint";
    r.add(s);
  }
}

}  // namespace footprint::graph::ops
